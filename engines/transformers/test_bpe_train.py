"""Tests of bpe_train.py and the retrain's tokenizer (retrain/tokenizer.json):
without llama.cpp (engines/llamacpp/retrain_tokens_test.go asks a real
llama-server), its splits checked against superbpe's as llama-vocab.cpp
writes them, over corpus/default."""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, HERE)
import bpe_train  # noqa: E402
import extraction as ex  # noqa: E402

try:
    import regex
except ImportError:
    regex = None

RETRAIN = os.path.join(HERE, "retrain", "tokenizer.json")
# The first committed model's tokenizer (v1: a normalizer llama.cpp lacks), kept for the drift
# fixtures; the committed model's own is RETRAIN's (test_committed_model_has_the_retrain_tokenizer).
OLD = os.path.join(HERE, "model-h384", "tokenizer.json")
COMMITTED = os.path.join(HERE, "model", "extract-llama-15m", "tokenizer.json")
CORPUS = os.path.join(ROOT, "corpus", "default", "documents.jsonl")


def superbpe_pieces(text):
    """llama.cpp's superbpe (llama-vocab.cpp): `\\p{N}+` isolated, then
    `(?=(\\d{3})+(?!\\d))` in each piece, \\d being ASCII for its std::wregex."""
    out = []
    for rx in (regex.compile(r"\p{N}+"), regex.compile(r"(?=([0-9]{3})+(?![0-9]))")):
        nxt = []
        for piece in out or [text]:
            at = 0
            for m in rx.finditer(piece):
                if m.start() > at:
                    nxt.append(piece[at : m.start()])
                if m.end() > m.start():
                    nxt.append(m.group())
                at = m.end()
            if at < len(piece):
                nxt.append(piece[at:])
        out = nxt
    return out


@unittest.skipIf(regex is None, "the regex module is not installed")
class SuperBPE(unittest.TestCase):
    def llama_ids(self, bpe, text):
        """what llama.cpp does with a prompt: specials cut out, no normalizer,
        superbpe's pieces, BPE over each."""
        ids, at = [], 0
        for m in list(bpe.special_re.finditer(text)) + [None]:
            part = text[at : m.start()] if m else text[at:]
            for p in superbpe_pieces(part):
                ids.extend(bpe._word(p))
            if m:
                ids.append(bpe.specials[m.group()])
                at = m.end()
        return ids

    def drift(self, path, collapse, limit=0):
        import cpu_reference

        bpe = cpu_reference.BPE(path)
        docs = ex.load_jsonl(CORPUS)[: limit or None]
        bad = []
        for d in docs:
            text = ex.prompt_text(d["text"], collapse=True)  # the GGUF's template collapses
            want = bpe.encode(ex.prompt_text(d["text"], collapse=collapse))
            if self.llama_ids(bpe, text) != want:
                bad.append(d["id"])
        return len(docs), bad

    def test_retrain_tokenizer_cuts_as_superbpe(self):
        n, bad = self.drift(RETRAIN, collapse=True)
        self.assertEqual(n, 300)
        self.assertEqual(bad, [], f"{len(bad)} of {n} prompts differ from superbpe's ids")

    def test_old_tokenizer_does_not(self):
        # The same check on the first committed model's tokenizer finds the prompts with `³)`
        # (8 of 300; in the first 40: doc-0003 and doc-0036).
        n, bad = self.drift(OLD, collapse=False, limit=40)
        self.assertEqual(bad, ["doc-0003", "doc-0036"])

    def test_pieces_never_join_across_superbpe(self):
        pre = bpe_train.PreTokenizer(None, bpe_train.pre_tokenizer_json("llamacpp"))
        for text, want in (
            ("R$ 1.234,56", ["R", "$", " ", "1", ".", "234", ",", "56"]),
            ("1234567 m³) x", ["1", "234", "567", " m", "³", ")", " x"]),
            ("a\n b \n\nc", ["a", "\n", " b", " ", "\n\n", "c"]),
            ("12³4567", ["12³4", "567"]),
        ):
            self.assertEqual(pre.pieces(text), want, text)
            # Every superbpe piece is a concatenation of whole pieces of ours.
            joined = []
            for sp in superbpe_pieces(text):
                self.assertEqual("".join(pre.pieces(sp)), sp)
                joined.extend(pre.pieces(sp))
            self.assertEqual(joined, want, text)


class Files(unittest.TestCase):
    def test_retrain_tokenizer_is_bpe_train_llamacpp(self):
        with open(RETRAIN, encoding="utf-8") as f:
            t = json.load(f)
        self.assertIsNone(t["normalizer"])
        self.assertEqual(t["pre_tokenizer"], bpe_train.pre_tokenizer_json("llamacpp"))
        self.assertEqual([a["content"] for a in t["added_tokens"]], ex.SPECIAL_TOKENS)
        self.assertEqual([a["id"] for a in t["added_tokens"]], list(range(5)))

    def test_committed_model_has_the_retrain_tokenizer(self):
        with open(COMMITTED, "rb") as a, open(RETRAIN, "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_v1_json_is_the_old_tokenizers(self):
        with open(OLD, encoding="utf-8") as f:
            t = json.load(f)
        self.assertEqual(t["normalizer"], bpe_train.normalizer_json("v1"))
        self.assertEqual(t["pre_tokenizer"], bpe_train.pre_tokenizer_json("v1"))

    def test_trainer_ties_and_min_frequency(self):
        # "ab" twice and "cd" twice: both pairs count 2, the smaller ids merge first;
        # "ef" once is below min_frequency and never merges.
        counts = {"ab": 1, "cd": 1, "abcd": 1, "ef": 1}
        vocab, merges = bpe_train.train(counts, ["<s>"], vocab_size=1000, min_frequency=2)
        self.assertEqual(merges, [("a", "b"), ("c", "d")])
        self.assertNotIn("ef", vocab)
        self.assertEqual(vocab["<s>"], 0)
        self.assertEqual(vocab["ab"], 257)


class Template(unittest.TestCase):
    def test_collapse_matches_jinja(self):
        try:
            from jinja2.sandbox import ImmutableSandboxedEnvironment
        except ImportError:
            self.skipTest("jinja2 is not installed")
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        t = env.from_string(ex.CHAT_TEMPLATE_COLLAPSE)
        for doc in ("x", "Nota  fiscal\n  R$ 1.234,56\n\n", "a\t\t b" + " " * 700 + "c"):
            m = ex.messages_for(doc)
            self.assertEqual(t.render(messages=m, add_generation_prompt=True), ex.render_chat(m, collapse=True))
        self.assertTrue(ex.template_collapses(ex.CHAT_TEMPLATE_COLLAPSE))
        self.assertFalse(ex.template_collapses(ex.CHAT_TEMPLATE))
        with self.assertRaises(ValueError):
            ex.template_collapses("{{ messages }}")


if __name__ == "__main__":
    unittest.main()
