"""Tests of train.py's pure-Python parts (the date's loss weights)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extraction as ex  # noqa: E402
import train  # noqa: E402


class DateWeightTest(unittest.TestCase):
    def test_span_is_the_date_value(self):
        a = ex.render_answer({"date": "2025-03-12", "amount": "1234.56", "category": "software"})
        s, e = train.date_span(a)
        self.assertEqual(a[s:e], "2025-03-12")
        self.assertIsNone(train.date_span(ex.render_answer({"date": None, "amount": "1", "category": None})))

    def test_weights_cover_overlapping_tokens_and_eot(self):
        a = ex.render_answer({"date": "2025-03-12", "amount": "7", "category": None})
        span = train.date_span(a)
        # Tokens as the tokenizer cuts them: '{"', 'date', '":', ' "', '2', '025', '-', '03', '-', '12', '",' ...
        cuts = [0, 2, 6, 8, 10, 11, 14, 15, 17, 18, 20, 22, len(a)]
        offsets = list(zip(cuts, cuts[1:]))
        w = train.token_weights(offsets, span, 5.0)
        self.assertEqual(len(w), len(offsets) + 1)  # + <|eot_id|>
        weighted = "".join(a[s:e] for (s, e), x in zip(offsets, w) if x == 5.0)
        self.assertEqual(weighted, "2025-03-12")
        self.assertEqual(w[-1], 1.0)

    def test_no_weights_when_nothing_to_weigh(self):
        self.assertIsNone(train.token_weights([(0, 1)], (10, 20), 5.0))
        self.assertIsNone(train.token_weights([(10, 12)], (10, 20), 1.0))
        self.assertIsNone(train.token_weights([(10, 12)], None, 5.0))


if __name__ == "__main__":
    unittest.main()
