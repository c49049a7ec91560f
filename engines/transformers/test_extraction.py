"""Tests of the trained model's task in plain Python: prompt, chat template,
answer rendering, the in-process scorer (against extractbench's rules), the
streaming detokenizer and train.py's batching. Parts that need jinja2, yaml,
torch or tokenizers skip where those are missing.

    python3 -m unittest discover -s engines/transformers -p 'test_*.py'
"""

import json
import os
import random
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import extraction as ex  # noqa: E402

ROOT = os.path.join(HERE, "..", "..")
DEFAULT = os.path.join(ROOT, "corpus", "default", "documents.jsonl")

try:
    import jinja2
except ImportError:
    jinja2 = None
try:
    import yaml
except ImportError:
    yaml = None
try:
    import torch
except ImportError:
    torch = None
try:
    import tokenizers
except ImportError:
    tokenizers = None


def want(date, amount, category):
    return {"date": date, "amount": amount, "category": category}


class PromptTest(unittest.TestCase):
    def test_chat_layout(self):
        got = ex.prompt_text("Total: R$ 1,00")
        self.assertTrue(got.startswith("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou extract fields"))
        self.assertTrue(got.endswith("Total: R$ 1,00<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"))
        self.assertEqual(got.count("<|eot_id|>"), 2)

    def test_content_parts(self):
        parts = [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]
        self.assertIn("\n\nab<|eot_id|>", ex.render_chat(parts))

    @unittest.skipIf(jinja2 is None, "jinja2 is not installed")
    def test_template_renders_as_python(self):
        # transformers renders chat templates with these options in a sandbox.
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        t = env.from_string(ex.CHAT_TEMPLATE)
        for doc in ("x", "Nota  fiscal\n  R$ 1.234,56\n\n", "{{document}} {% raw %}"):
            m = ex.messages_for(doc)
            self.assertEqual(t.render(messages=m, add_generation_prompt=True), ex.render_chat(m))
            self.assertEqual(t.render(messages=m, add_generation_prompt=False), ex.render_chat(m, add_generation_prompt=False))

    @unittest.skipIf(yaml is None, "yaml is not installed")
    def test_prompt_is_the_protocols(self):
        for path in ("pipeline/protocol/default-protocol.yaml", "engines/transformers/protocol-real.yaml"):
            with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                p = yaml.safe_load(f)
            self.assertEqual(p["prompt"]["system"], ex.SYSTEM, path)
            self.assertEqual(p["prompt"]["user"], ex.USER, path)


class AnswerTest(unittest.TestCase):
    def test_render(self):
        self.assertEqual(ex.render_answer(want("2025-03-12", "1234.56", "software")), '{"date": "2025-03-12", "amount": 1234.56, "category": "software"}')
        self.assertEqual(ex.render_answer(want(None, "-80.00", "rent")), '{"date": null, "amount": -80.00, "category": "rent"}')
        self.assertEqual(ex.render_answer(want("2025-01-02", None, "taxes")), '{"date": "2025-01-02", "amount": null, "category": "taxes"}')
        with self.assertRaises(Exception):
            ex.render_answer(want(None, "1,00", "rent"))

    @unittest.skipUnless(os.path.exists(DEFAULT), "corpus/default missing")
    def test_every_default_answer_is_accepted(self):
        docs = ex.load_jsonl(DEFAULT)
        recs = []
        for d in docs:
            a = ex.render_answer(d["expected"])
            s = ex.score(a, d["expected"])
            self.assertTrue(s["accepted"], (d["id"], a, s))
            self.assertEqual(json.loads(a)["category"], d["expected"]["category"])
            recs.append({"class": d["length_class"], "score": s})
        summary = ex.summarize(recs)
        self.assertEqual(summary["all"]["documents"], 300)
        self.assertEqual(summary["long"]["accepted_share"], 1.0)


class ScoreTest(unittest.TestCase):
    E = want("2024-08-28", "491.78", "utilities")

    def judge(self, text, expected=None):
        return ex.score(text, expected or self.E)

    def test_rules(self):
        ok = '{"date": "2024-08-28", "amount": 491.78, "category": "utilities"}'
        self.assertTrue(self.judge(ok)["accepted"])
        self.assertTrue(self.judge("\n " + ok + "\n")["accepted"], "surrounding JSON whitespace is allowed")
        self.assertTrue(self.judge('{"date": "2024-08-28", "amount": 491.785, "category": "utilities"}')["accepted"], "within 0.005")
        self.assertTrue(self.judge('{"date": "2024-08-28", "amount": 4.9178e2, "category": "utilities"}')["accepted"])
        r = self.judge('{"date": "2024-08-28", "amount": 491.786, "category": "utilities"}')
        self.assertEqual((r["accepted"], r["failure"], r["fields"]["amount"]), (False, "quality", False))
        self.assertEqual(self.judge('{"date": "2024-08-28", "amount": -491.78, "category": "utilities"}')["failure"], "quality")
        for bad in (
            '```json\n' + ok + '\n```',  # strict: no fence
            ok + ok,
            '{"date": "2024-08-28", "amount": "491.78", "category": "utilities"}',  # a string amount
            '{"date": "2024-02-30", "amount": 491.78, "category": "utilities"}',  # not a day
            '{"date": "28/08/2024", "amount": 491.78, "category": "utilities"}',
            '{"date": "2024-08-28", "amount": 491.78, "category": "Utilities"}',  # outside the enum
            '{"date": "2024-08-28", "amount": 491.78}',  # missing key
            '{"date": "2024-08-28", "amount": 491.78, "category": "utilities", "x": 1}',
            '{"date": "2024-08-28", "date": "2024-08-28", "amount": 491.78, "category": "utilities"}',
            '{"date": "2024-08-28", "amount": NaN, "category": "utilities"}',
            '{"date": "2024-08-28", "amount": true, "category": "utilities"}',
            '[1]',
            '',
        ):
            r = self.judge(bad)
            self.assertFalse(r["accepted"], bad)
            self.assertEqual(r["failure"], "format", bad)

    def test_nulls(self):
        e = want(None, None, "taxes")
        self.assertTrue(ex.score('{"date": null, "amount": null, "category": "taxes"}', e)["accepted"])
        r = ex.score('{"date": "2024-01-01", "amount": null, "category": "taxes"}', e)
        self.assertEqual((r["fields"]["date"], r["failure"]), (False, "quality"))
        r = ex.score('{"date": null, "amount": null, "category": "taxes"}', want("2024-01-01", None, "taxes"))
        self.assertFalse(r["fields"]["date"])

    def test_leap_days(self):
        self.assertTrue(ex._date_ok("2024-02-29"))
        self.assertFalse(ex._date_ok("2025-02-29"))
        self.assertFalse(ex._date_ok("1900-02-29"))
        self.assertTrue(ex._date_ok("2000-02-29"))
        self.assertTrue(ex._date_ok("0000-01-01"))
        self.assertFalse(ex._date_ok("2025-13-01"))

    def test_error_kinds(self):
        def rec(output, w):
            return {"output": output, "expected": w, "score": ex.score(output, w)}

        w = want("2025-03-12", "1234.56", "software")
        records = [
            rec('{"date": "2025-03-12", "amount": 1234.56, "category": "software"}', w),  # accepted: not counted
            rec('{"date": "2025-03-02", "amount": 1234.56, "category": "software"}', w),
            rec('{"date": "2024-03-12", "amount": 1239.56, "category": "software"}', w),
            rec('{"date": "2024-04-12", "amount": null, "category": "travel"}', w),
            rec('{"date": "2025-06-02", "amount": 5, "category": null}', want(None, None, None)),
            rec('{"date": null, "amount": 1234.56, "category": "software"}', w),
            rec('{"date": "2025-03-12"', w),
        ]
        self.assertEqual(ex.error_kinds(records), {
            "amount missed": 1, "amount where none": 1, "amount: digits": 1, "category": 1, "date missed": 1,
            "date where none": 1, "date: day": 1, "date: other": 1, "date: year": 1, "format": 1})


class StreamDecoderTest(unittest.TestCase):
    def test_holds_back_split_characters(self):
        # ids are bytes; decode like a byte-level BPE (invalid tails become U+FFFD).
        data = "é{\"a\": 1}ç".encode()
        dec = ex.StreamDecoder(lambda ids: bytes(ids).decode("utf-8", errors="replace"))
        pieces = [dec.feed([b]) for b in data]
        self.assertEqual(pieces[0], "", "the first byte of é waits")
        self.assertEqual(pieces[1], "é")
        self.assertEqual("".join(pieces) + dec.flush(), "é{\"a\": 1}ç")
        dec2 = ex.StreamDecoder(lambda ids: bytes(ids).decode("utf-8", errors="replace"))
        self.assertEqual(dec2.feed([0xC3]), "")
        self.assertEqual(dec2.flush(), "\ufffd", "a cut character is sent at the end")


@unittest.skipIf(torch is None, "torch is not installed")
class BatchTest(unittest.TestCase):
    def test_batches_and_answer_positions(self):
        import train

        E = train.Example
        exs = [E([1, 2, 3, 4, 5, 6], 3, "short"), E([7, 8, 9, 10], 2, "short"), E(list(range(20, 40)), 15, "long")]
        batches = train.make_batches(exs, 24, 8, random.Random(1))
        self.assertEqual(sorted(sorted(len(e.ids) for e in b) for b in batches), [[4, 6], [20]])
        for b in batches:
            ids, pos, tgt, prompt_next, weights = train.collate(b, 0)
            self.assertEqual(weights.tolist(), [1.0] * tgt.numel(), "no weights given: every answer token weighs 1")
            self.assertLessEqual(ids.numel(), 24)
            flat = ids.view(-1)
            self.assertEqual(flat[pos + 1].tolist(), tgt.tolist(), "each position predicts the next token")
            if len(b) == 2:
                # [7, 8 | 9, 10] and [1, 2, 3 | 4, 5, 6]: only answer tokens are targets.
                self.assertEqual(sorted(tgt.tolist()), [4, 5, 6, 9, 10])
                # The prompt's own next tokens (8; 2, 3), nothing past the prompt.
                I = train.IGNORE
                self.assertEqual(prompt_next.tolist(), [[8, I, I, I, I, I], [2, 3, I, I, I, I]])

    def test_losses(self):
        import train

        ids, pos, tgt, prompt_next, weights = train.collate([train.Example([1, 2, 3, 4, 5, 6], 3, "short")], 0)
        logits = torch.zeros(6, 8)
        logits[torch.arange(5), ids[0, 1:]] = 10.0  # every next token predicted confidently
        answer, weighted = train.answer_losses(logits.index_select(0, pos), tgt, weights)
        prompt = train.prompt_loss(logits, prompt_next)
        self.assertLess(float(answer), 1e-3)
        self.assertAlmostEqual(float(weighted), float(answer), places=6)
        self.assertLess(float(prompt), 1e-3)
        logits[0] = 0.0  # position 0 (predicting 2, a prompt token) now uniform
        answer2, _ = train.answer_losses(logits.index_select(0, pos), tgt, weights)
        self.assertAlmostEqual(float(answer2), float(answer), places=5)
        self.assertGreater(float(train.prompt_loss(logits, prompt_next)), 1.0)

    def test_weighted_answer_loss(self):
        import train

        # Answer [4, 5, 6] (+ the last id as eot): token 5 weighs 3; position 3 predicts 5 badly.
        e = train.Example([1, 2, 3, 4, 5, 6, 7], 3, "short", weights=[1.0, 3.0, 1.0, 1.0])
        ids, pos, tgt, _, weights = train.collate([e], 0)
        self.assertEqual(tgt.tolist(), [4, 5, 6, 7])
        self.assertEqual(weights.tolist(), [1.0, 3.0, 1.0, 1.0])
        logits = torch.zeros(7, 8)
        logits[torch.arange(6), ids[0, 1:]] = 10.0
        logits[3] = 0.0  # uniform where 5 is predicted
        ce = torch.nn.functional.cross_entropy(logits.index_select(0, pos), tgt, reduction="none")
        answer, weighted = train.answer_losses(logits.index_select(0, pos), tgt, weights)
        self.assertAlmostEqual(float(answer), float(ce.mean()), places=5)
        self.assertAlmostEqual(float(weighted), float((ce * weights).sum() / 6.0), places=5)
        self.assertGreater(float(weighted), float(answer))

    def test_lr_schedule(self):
        import train

        self.assertAlmostEqual(train.lr_at(0, 0.0, 1.0, 10, 0.1), 0.1)
        self.assertAlmostEqual(train.lr_at(9, 0.0, 1.0, 10, 0.1), 1.0)
        self.assertAlmostEqual(train.lr_at(50, 1.0, 1.0, 10, 0.1), 0.1)
        self.assertAlmostEqual(train.lr_at(50, 0.5, 1.0, 10, 0.1), 0.55)


MODEL = os.path.join(HERE, "model", "extract-llama-15m")


@unittest.skipUnless(os.path.exists(os.path.join(MODEL, "SHA256SUMS")), "the committed model is missing")
class CommittedModelTest(unittest.TestCase):
    def test_files_match_sums(self):
        import hashlib

        with open(os.path.join(MODEL, "SHA256SUMS")) as f:
            lines = [line.split() for line in f if line.strip()]
        names = {name for _, name in lines}
        self.assertTrue({"config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors.index.json"} <= names)
        for digest, name in lines:
            with open(os.path.join(MODEL, name), "rb") as f:
                self.assertEqual(hashlib.sha256(f.read()).hexdigest(), digest, name)
            self.assertLess(os.path.getsize(os.path.join(MODEL, name)), 16 * 2**20, f"{name}: the device returns files under 16 MiB")
        with open(os.path.join(MODEL, "model.safetensors.index.json")) as f:
            shards = set(json.load(f)["weight_map"].values())
        self.assertTrue(shards and shards <= names)

    def test_reference_run_measured_these_weights(self):
        # reference-weights.sha256 pins what reference/h200/extract-llama-15m-retrain-2 swept: a
        # model replaced without a new sweep must fail here, not leave the reference's figures
        # under weights they were not measured on.
        def pins(path):
            with open(path) as f:
                return {name: digest for digest, name in (line.split() for line in f if line.strip() and not line.startswith("#"))}

        self.assertEqual(pins(os.path.join(HERE, "reference-weights.sha256")), pins(os.path.join(MODEL, "SHA256SUMS")))
        stage1 = pins(os.path.join(HERE, "stage1-weights.sha256"))
        self.assertEqual(stage1["tokenizer.json"], pins(os.path.join(MODEL, "SHA256SUMS"))["tokenizer.json"], "stage 2 carries stage 1's tokenizer")

    def test_tokenizer_config_has_the_template(self):
        with open(os.path.join(MODEL, "tokenizer_config.json")) as f:
            cfg = json.load(f)
        # No normalizer in the committed tokenizer: its chat template collapses the spaces.
        self.assertEqual(cfg["chat_template"], ex.CHAT_TEMPLATE_COLLAPSE)
        self.assertEqual((cfg["eos_token"], cfg["bos_token"], cfg["pad_token"]), (ex.EOT, ex.BOS, ex.EOS_TEXT))
        self.assertFalse(cfg.get("clean_up_tokenization_spaces"))
        with open(os.path.join(MODEL, "tokenizer.json")) as f:
            tok = json.load(f)
        specials = {t["content"]: t["id"] for t in tok["added_tokens"] if t["special"]}
        self.assertEqual(set(specials), set(ex.SPECIAL_TOKENS))
        with open(os.path.join(MODEL, "config.json")) as f:
            cfg = json.load(f)
        self.assertEqual(cfg["eos_token_id"], [specials[ex.EOT], specials[ex.EOS_TEXT]])
        self.assertEqual(cfg["max_position_embeddings"], 8192)


class SeedTest(unittest.TestCase):
    def test_seeds(self):
        import train

        self.assertEqual(train.parse_seeds("1000:1003"), [1000, 1001, 1002])
        self.assertEqual(train.parse_seeds("5,7"), [5, 7])


@unittest.skipIf(tokenizers is None, "tokenizers is not installed")
class PretokenizeTest(unittest.TestCase):
    def test_digit_groups_match_between_document_and_answer(self):
        import train
        from tokenizers import Regex, normalizers, pre_tokenizers

        pre = pre_tokenizers.Split(Regex(train.PRETOKENIZE), behavior="isolated")
        norm = normalizers.Replace(Regex(train.COLLAPSE_SPACES), " ")

        def cut(s):
            return [p for p, _ in pre.pre_tokenize_str(norm.normalize_str(s))]

        self.assertEqual(cut("R$ 1.234,56"), ["R", "$", " ", "1", ".", "234", ",", "56"])
        self.assertEqual(cut('"amount": 1234.56'), ['"', "amount", '":', " ", "1", "234", ".", "56"])
        self.assertEqual(cut("1234567"), ["1", "234", "567"])
        self.assertEqual(cut("28/08/2024"), ["28", "/", "08", "/", "2", "024"])
        self.assertEqual(cut("Total     a  pagar"), ["Total", " a", " pagar"])


if __name__ == "__main__":
    unittest.main()
