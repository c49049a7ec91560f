#!/usr/bin/env python3
"""compare_tokens.py checks that a running llama-server tokenises the
protocol's chat prompts as the model's tokenizer.json does: for each document
of a corpus it renders the messages extractbench sends through the server's
own chat template (POST /apply-template), tokenises that (POST /tokenize) and
compares the ids with engines/transformers/cpu_reference.py's BPE (a plain
Python copy of tokenizers' behaviour for train.py's tokenizer: NFC, spaces
collapsed, the Split regex, merges by rank). Needs the `regex` module only.

    python3 engines/llamacpp/compare_tokens.py --url http://127.0.0.1:PORT \\
        --corpus corpus/default/documents.jsonl [--limit N] [--out FILE]

It prints one line per corpus: documents compared, identical, and for the
first differing ones the position and the pieces around it; --out writes the
per-document counts as JSON. Exit status 1 when any document differs.
"""

import argparse
import json
import os
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "transformers"))
import cpu_reference  # noqa: E402  (its BPE needs only `regex`)
import extraction as ex  # noqa: E402

DEFAULT_MODEL = os.path.join(HERE, "..", "transformers", "model", "extract-llama-15m")


def post(url, body):
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--out")
    a = ap.parse_args()

    bpe = cpu_reference.BPE(os.path.join(a.model, "tokenizer.json"))
    rows, same, shown = [], 0, 0
    with open(a.corpus, encoding="utf-8") as f:
        docs = [json.loads(line) for line in f if line.strip()]
    if a.limit:
        docs = docs[: a.limit]
    for d in docs:
        msgs = ex.messages_for(d["text"])
        want = bpe.encode(ex.render_chat(msgs))
        prompt = post(a.url + "/apply-template", {"messages": msgs})["prompt"]
        got = post(a.url + "/tokenize", {"content": prompt, "add_special": False, "parse_special": True})["tokens"]
        ok = got == want
        same += ok
        rows.append({"id": d["id"], "reference_tokens": len(want), "llama_tokens": len(got), "identical": ok})
        if not ok and shown < 10:
            shown += 1
            i = next((k for k, (x, y) in enumerate(zip(got, want)) if x != y), min(len(got), len(want)))
            print(
                f"{d['id']}: first difference at token {i}: llama {[bpe.inv.get(t) for t in got[i:i+6]]} "
                f"reference {[bpe.inv.get(t) for t in want[i:i+6]]} ({len(got)} vs {len(want)} tokens)"
            )
    print(f"{a.corpus}: {len(docs)} documents, {same} with identical prompt ids")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(rows, f, indent=1)
            f.write("\n")
    sys.exit(0 if same == len(docs) else 1)


if __name__ == "__main__":
    main()
