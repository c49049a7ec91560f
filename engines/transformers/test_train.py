"""Tests of train.py's pure-Python parts: the answer values' loss weights, on
hand-made cuts and on the committed tokenizer's own cuts (through
cpu_reference.py's BPE, where the regex module exists), and --init's checks of
the model a second stage starts from."""

import hashlib
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extraction as ex  # noqa: E402
import modeldir  # noqa: E402
import train  # noqa: E402

try:
    import regex  # noqa: F401

    import cpu_reference
except ImportError:
    regex = None

TOKENIZER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model", "extract-llama-15m", "tokenizer.json")
MODEL_DIR = os.path.dirname(TOKENIZER)


def answer(date, amount, category=None):
    return ex.render_answer({"date": date, "amount": amount, "category": category})


class ValueSpansTest(unittest.TestCase):
    def test_spans(self):
        a = answer("2025-03-12", "1234.56", "software")
        spans = train.value_spans(a, train.Weights(date=10, amount=5))
        self.assertEqual([(a[s:e], w) for s, e, w in spans], [("2025-03-12", 10), ("1234.56", 5)])
        a = answer(None, "-7.5")
        spans = train.value_spans(a, train.Weights(date=10, date_null=3, amount=5))
        self.assertEqual([(a[s:e], w) for s, e, w in spans], [("null", 3), ("-7.5", 5)])

    def test_weight_one_is_left_out(self):
        a = answer(None, None)
        self.assertEqual(train.value_spans(a, train.Weights(date=10)), [])
        self.assertEqual(train.value_spans(answer("2025-03-12", None), train.Weights(amount=5)), [])

    def test_not_the_layout(self):
        with self.assertRaises(ValueError):
            train.value_spans('{"amount": 1}', train.Weights(date=2))

    def test_token_weights_on_hand_cuts(self):
        a = answer("2025-03-12", "7")
        # '{"', 'date', '":', ' "', '2', '025', '-', '03', '-', '12', '",' ...
        cuts = [0, 2, 6, 8, 10, 11, 14, 15, 17, 18, 20, 22, len(a)]
        offsets = list(zip(cuts, cuts[1:]))
        w = train.token_weights(offsets, train.value_spans(a, train.Weights(date=5)))
        self.assertEqual(len(w), len(offsets) + 1)  # + <|eot_id|>
        self.assertEqual("".join(a[s:e] for (s, e), x in zip(offsets, w) if x == 5), "2025-03-12")
        self.assertEqual(w[-1], 1.0)
        self.assertIsNone(train.token_weights(offsets, []))
        self.assertIsNone(train.token_weights([(0, 2)], train.value_spans(a, train.Weights(date=5))))


@unittest.skipIf(regex is None, "the regex module is missing")
class CommittedTokenizerTest(unittest.TestCase):
    """The weighted tokens, as the committed tokenizer cuts answers (ASCII, so
    a token's offsets are its decoded length), spell the values."""

    @classmethod
    def setUpClass(cls):
        cls.tok = cpu_reference.BPE(TOKENIZER)

    def weighted(self, a, weights):
        ids = self.tok.encode(a)
        pieces = [self.tok.decode([i]) for i in ids]
        self.assertEqual("".join(pieces), a)
        at, offsets = 0, []
        for p in pieces:
            offsets.append((at, at + len(p)))
            at += len(p)
        w = train.token_weights(offsets, train.value_spans(a, weights)) or [1.0] * (len(ids) + 1)
        return {x: "".join(p for p, y in zip(pieces, w) if y == x) for x in set(w) if x != 1}

    def test_date_and_amount(self):
        got = self.weighted(answer("2025-03-12", "1234.56", "software"), train.Weights(date=10, amount=5))
        self.assertEqual(got, {10: "2025-03-12", 5: "1234.56"})

    def test_null_date_and_negative_amount(self):
        # A value's token may carry the space before it (" null", " -"): it is weighted whole.
        got = self.weighted(answer(None, "-40.70", "meals"), train.Weights(date=10, date_null=3, amount=5))
        self.assertEqual({k: v.strip() for k, v in got.items()}, {3: "null", 5: "-40.70"})

    def test_committed_recipe_weighs_only_string_dates(self):
        w = train.Weights(date=10)
        self.assertEqual(self.weighted(answer("2024-02-29", "110.25", "utilities"), w), {10: "2024-02-29"})
        self.assertEqual(self.weighted(answer(None, "110.25", "utilities"), w), {})


class InitSourceTest(unittest.TestCase):
    """--init: the committed model is a valid start; a model whose training saw
    the held-out seed, or whose files do not match their sums, is refused."""

    def copy_model(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        dst = os.path.join(d, "m")
        shutil.copytree(MODEL_DIR, dst)
        return dst

    def test_committed_model(self):
        # The second stage: its own seeds, then its first stage's.
        got = train.init_source(MODEL_DIR, 999)
        with open(os.path.join(MODEL_DIR, "SHA256SUMS"), "rb") as f:
            self.assertEqual(got["model_sha256"], hashlib.sha256(f.read()).hexdigest())
        self.assertEqual(got["training_seeds"], [[2400, 2799], [1000, 2399]])

    def test_heldout_seed_seen_in_training(self):
        for seen in (2500, 1500):  # the second stage's seeds, and the first's
            with self.assertRaisesRegex(ValueError, f"saw seed {seen}"):
                train.init_source(MODEL_DIR, seen)

    def test_tampered_weights(self):
        m = self.copy_model()
        with open(os.path.join(m, "config.json"), "a") as f:
            f.write(" ")
        with self.assertRaisesRegex(ValueError, "config.json does not match"):
            train.init_source(m, 999)

    def test_corrupt_sums_line_is_named(self):
        # A SHA256SUMS line that is not "digest  name" is refused with its file and line.
        m = self.copy_model()
        with open(os.path.join(m, "SHA256SUMS"), "a") as f:
            f.write("not-a-digest\n")
        with self.assertRaisesRegex(ValueError, r"SHA256SUMS:10: not a sha256sum line"):
            modeldir.verify(m)

    def test_sums_written_as_committed(self):
        # modeldir.write_sums on a copy of the committed model writes its SHA256SUMS again.
        m = self.copy_model()
        os.remove(os.path.join(m, "SHA256SUMS"))
        modeldir.write_sums(m)
        with open(os.path.join(MODEL_DIR, "SHA256SUMS")) as want, open(os.path.join(m, "SHA256SUMS")) as got:
            self.assertEqual(got.read(), want.read())

    def test_not_a_model_directory(self):
        m = self.copy_model()
        os.remove(os.path.join(m, "tokenizer.json"))
        with self.assertRaisesRegex(ValueError, "no tokenizer.json"):
            train.init_source(m, 999)


if __name__ == "__main__":
    unittest.main()
