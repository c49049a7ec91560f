"""Tests of cpu_reference.py against the committed model: its BPE against
figures the tokenizers library produced on the H200, and (where transformers
is installed) its Llama forward against transformers' LlamaForCausalLM. They
skip without the `regex` module (the BPE) or torch (the forward).

    /usr/bin/python3 -m unittest engines/transformers/test_cpu_reference.py
"""

import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cpu_reference as ref  # noqa: E402
import extraction as ex  # noqa: E402

MODEL = os.path.join(HERE, "model", "extract-llama-15m")
DEFAULT = os.path.join(HERE, "..", "..", "corpus", "default", "documents.jsonl")

try:
    import regex  # noqa: F401
except ImportError:
    regex = None
try:
    import torch
except ImportError:
    torch = None
try:
    import transformers
except ImportError:
    transformers = None


@unittest.skipIf(regex is None, "the regex module is missing")
class BPETest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tok = ref.BPE(os.path.join(MODEL, "tokenizer.json"))

    def test_answer_date_tokens(self):
        # train.py logged these pieces, cut by the tokenizers library, on the H200.
        a = ex.render_answer({"date": "2025-03-12", "amount": "1234.56", "category": "software"})
        pieces = [self.tok.inv[i] for i in self.tok.encode(a)]
        i = pieces.index("025")
        self.assertEqual(pieces[i - 1 : i + 5], ["2", "025", "-", "03", "-", "12"])

    def test_longest_default_prompt(self):
        # The model card's figure, from the tokenizers library (apply_chat_template) on the H200
        # (evaluate.py: "longest prompt 6932 tokens"), through the model's own chat template.
        render, _ = ref.chat_renderer(MODEL)
        docs = ex.load_jsonl(DEFAULT)
        lengths = [len(self.tok.encode(render(ex.messages_for(d["text"])))) for d in docs]
        self.assertEqual(max(lengths), 6932)

    def test_specials_and_round_trip(self):
        d = ex.load_jsonl(DEFAULT)[0]
        text = ex.render_chat(ex.messages_for(d["text"]))
        ids = self.tok.encode(text)
        self.assertEqual(ids[0], self.tok.specials[ex.BOS])
        self.assertEqual(ids.count(self.tok.specials[ex.START_HEADER]), 3)  # system, user, assistant
        # Decoding drops the specials and gives back the normalised text.
        want = self.tok.pre.normalize(text)
        for s in ex.SPECIAL_TOKENS:
            want = want.replace(s, "")
        self.assertEqual(self.tok.decode(ids), want)


@unittest.skipIf(torch is None or transformers is None, "torch or transformers is missing")
class ForwardTest(unittest.TestCase):
    def test_logits_match_transformers(self):
        from transformers import LlamaForCausalLM

        ours = ref.Llama(MODEL)
        theirs = LlamaForCausalLM.from_pretrained(MODEL, dtype=torch.float32).eval()
        ids = list(range(5, 300))  # any ids; 295 tokens, prefilled in chunks of 128
        cache = []
        for a in range(0, len(ids), 128):
            got = ours.forward(ids[a : a + 128], a, cache)
        with torch.no_grad():
            want = theirs(torch.tensor([ids])).logits[0, -1]
        self.assertLess(float((got - want).abs().max()), 1e-3 * float(want.abs().max()))


try:
    from aiohttp.test_utils import TestClient, TestServer

    import server
except ImportError:
    server = None


@unittest.skipIf(regex is None or torch is None or server is None, "regex, torch or aiohttp is missing")
class ServeTest(unittest.IsolatedAsyncioTestCase):
    """server.py --cpu: the answer streamed over HTTP is cpu_reference's own."""

    async def test_streamed_answer_is_the_references(self):
        import asyncio

        eng = await asyncio.to_thread(ref.CPUEngine, MODEL)
        doc = min(ex.load_jsonl(DEFAULT), key=lambda d: len(d["text"]))
        ids = await asyncio.to_thread(eng.llama.generate, eng.encode_chat(ex.messages_for(doc["text"])), 48)
        want = eng.tok.decode(ids)
        client = TestClient(TestServer(server.Server(eng).app()))
        await client.start_server()
        try:
            body = {"model": eng.served, "messages": ex.messages_for(doc["text"]), "max_tokens": 48, "temperature": 0,
                    "stream": True, "stream_options": {"include_usage": True}}
            resp = await client.post("/v1/chat/completions", json=body)
            self.assertEqual(resp.status, 200)
            chunks = [json.loads(line[6:]) for line in (await resp.text()).split("\n") if line.startswith("data: {")]
            text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
            self.assertEqual(text, want)
            self.assertEqual(chunks[-1]["usage"]["completion_tokens"], len(ids))
            self.assertIn(ex.score(text, doc["expected"])["failure"], (None, "quality"))  # parsed: a real answer
        finally:
            await client.close()


class VerifyTest(unittest.TestCase):
    """The CPU reference refuses weights its SHA256SUMS does not describe, as the GPU engine does."""

    def test_tampered_copy_is_refused(self):
        import shutil
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "extract-llama-15m")
            shutil.copytree(MODEL, d)
            self.assertEqual(len(ref.verified_sha256(d)), 64)
            with open(os.path.join(d, "config.json"), "a") as f:
                f.write(" ")
            with self.assertRaisesRegex(RuntimeError, "config.json does not match its SHA256SUMS"):
                ref.verified_sha256(d)
            if torch is not None:
                with self.assertRaisesRegex(RuntimeError, "config.json does not match"):
                    ref.CPUEngine(d)


@unittest.skipIf(torch is None, "torch is missing")
class WeightsTest(unittest.TestCase):
    def test_bf16_widening(self):
        with open(os.path.join(MODEL, "model.safetensors.index.json")) as f:
            index = json.load(f)
        w = ref.load_safetensors(MODEL)
        self.assertEqual(set(w), set(index["weight_map"]))
        self.assertEqual(sum(t.numel() for t in w.values()), index["metadata"]["total_parameters"])
        # Widened bf16 is exact: converting back to bf16 changes nothing.
        t = w["model.norm.weight"]
        self.assertTrue(torch.equal(t.to(torch.bfloat16).float(), t))


if __name__ == "__main__":
    unittest.main()
