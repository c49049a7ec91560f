// hf_encode.js PACKAGE_DIR TOKENIZER_JSON: reads one JSON string a line on stdin and writes
// its ids (a JSON array a line) as Hugging Face's tokenizers encodes it: the Rust core of
// the npm package in PACKAGE_DIR (hf-tokenizers.sh), no special tokens added (the prompt's
// are in its text, as apply_chat_template renders it).
const { Tokenizer } = require(process.argv[2]);
const readline = require('readline');
const tok = Tokenizer.fromFile(process.argv[3]);
const lines = [];
readline.createInterface({ input: process.stdin }).on('line', (l) => lines.push(l)).on('close', async () => {
  for (const l of lines) {
    const e = await tok.encode(JSON.parse(l), null, { addSpecialTokens: false });
    process.stdout.write(JSON.stringify(e.getIds()) + '\n');
  }
});
