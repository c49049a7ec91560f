"""Tests of cardcap.py (an emulated card's KV pool) and of dryengine.py's
scheduler over it: plain Python, no torch, no GPU.

    python3 -m unittest discover -s engines/transformers -p 'test_*.py'
"""

import asyncio
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cardcap  # noqa: E402
import dryengine  # noqa: E402

GB, GiB, MiB = cardcap.GB, cardcap.GiB, 1 << 20

# Llama-3.1-8B in bf16: 32 layers x 8 KV heads x 128 x K and V x 2 bytes a token;
# the weights are the calculator's figure (sizing: 8,030,261,248 parameters x 2 bytes).
KV_8B = 2 * 32 * 8 * 128 * 2
WEIGHTS_8B = 8_030_261_248 * 2


class PlanPoolTest(unittest.TestCase):
    def test_8b_on_each_card(self):
        outside, act = 600 * MiB, 1_200 * MiB
        for gb in (24, 48, 80):
            with self.subTest(card=gb):
                cap = gb * GB
                p = cardcap.plan_pool(cap, 141 * GB, outside, WEIGHTS_8B, act, KV_8B)
                budget = int(cap * 0.9) - outside - WEIGHTS_8B - act
                self.assertEqual(p.kv_budget_bytes, budget)
                self.assertEqual(p.num_blocks, budget // (256 * KV_8B))
                self.assertEqual(p.kv_capacity_tokens, p.num_blocks * 256)
                self.assertEqual(p.torch_limit_bytes, cap - outside)
                self.assertAlmostEqual(p.torch_fraction, (cap - outside) / (141 * GB))
                # The pool never holds more bytes than the card's usable share leaves.
                self.assertLessEqual(outside + WEIGHTS_8B + act + p.num_blocks * 256 * KV_8B, cap * 0.9)
                self.assertGreater(outside + WEIGHTS_8B + act + (p.num_blocks + 1) * 256 * KV_8B, cap * 0.9)

    def test_larger_card_more_blocks(self):
        small = cardcap.plan_pool(48 * GB, 141 * GB, 0, WEIGHTS_8B, 0, KV_8B)
        large = cardcap.plan_pool(80 * GB, 141 * GB, 0, WEIGHTS_8B, 0, KV_8B)
        # 32 GB more card at utilisation 0.9: exactly that many more bytes of pool (to a block).
        self.assertLessEqual(abs((large.num_blocks - small.num_blocks) * 256 * KV_8B - int(80 * GB * 0.9) + int(48 * GB * 0.9)), 256 * KV_8B)

    def test_card_too_small_names_the_terms(self):
        with self.assertRaises(cardcap.CapError) as e:
            cardcap.plan_pool(16 * GB, 141 * GB, 600 * MiB, WEIGHTS_8B, 1_200 * MiB, KV_8B, min_tokens=8192)
        msg = str(e.exception)
        for want in ("16.0 GB card", "weights", "activations", "8192 tokens", "larger cap"):
            self.assertIn(want, msg)

    def test_one_sequence_must_fit(self):
        # A budget of 31 blocks refuses a sequence needing 32; one more block admits it.
        cap = int((WEIGHTS_8B + 31 * 256 * KV_8B) / 0.9) + 1
        with self.assertRaises(cardcap.CapError):
            cardcap.plan_pool(cap, 141 * GB, 0, WEIGHTS_8B, 0, KV_8B, min_tokens=32 * 256)
        cap = int((WEIGHTS_8B + 32 * 256 * KV_8B) / 0.9) + 2
        self.assertEqual(cardcap.plan_pool(cap, 141 * GB, 0, WEIGHTS_8B, 0, KV_8B, min_tokens=32 * 256).num_blocks, 32)

    def test_bad_inputs(self):
        for args in ((200 * GB, 141 * GB, 0, 1, 0, KV_8B), (1 * GB, 141 * GB, 2 * GB, 1, 0, KV_8B)):
            with self.assertRaises(cardcap.CapError):
                cardcap.plan_pool(*args)
        with self.assertRaises(cardcap.CapError):
            cardcap.plan_pool(24 * GB, 141 * GB, 0, 1, 0, KV_8B, utilisation=1.5)


class SequencesTest(unittest.TestCase):
    def test_whole_blocks_per_sequence(self):
        # 7,000 tokens take 28 blocks of 256 (7,168 tokens); 7,169 take 29.
        self.assertEqual(cardcap.max_sequences(280, 256, 7000), 10)
        self.assertEqual(cardcap.max_sequences(280, 256, 7168), 10)
        self.assertEqual(cardcap.max_sequences(280, 256, 7169), 280 // 29)
        with self.assertRaises(cardcap.CapError):
            cardcap.max_sequences(10, 256, 0)


class ParseAndLabelTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(cardcap.parse_cap(gib=22.0, device_total=141 * GB), int(22 * GiB))
        self.assertEqual(cardcap.parse_cap(fraction=0.5, device_total=100), 50)
        self.assertIsNone(cardcap.parse_cap())
        for kw in (dict(gib=-1), dict(fraction=0), dict(fraction=0.5), dict(gib=1, fraction=0.5), dict(gib=200, device_total=141 * GB)):
            with self.subTest(**kw), self.assertRaises(cardcap.CapError):
                cardcap.parse_cap(**kw)

    def test_label(self):
        self.assertEqual(cardcap.card_name(24 * GB), "L4")
        self.assertEqual(cardcap.card_name(int(48.2 * GB)), "L40S")
        self.assertEqual(cardcap.card_name(30 * GB), "card")
        lab = cardcap.label(80 * GB, device="NVIDIA H200")
        self.assertIn("emulated H100 SXM (80 GB) on NVIDIA H200", lab)
        self.assertIn("memory only; bandwidth and compute are the NVIDIA H200's", lab)
        d = cardcap.plan_pool(80 * GB, 141 * GB, 0, WEIGHTS_8B, 0, KV_8B).as_dict(device="NVIDIA H200")
        self.assertEqual(d["label"], lab)
        self.assertEqual(d["card"], "H100 SXM")


class DryEngineTest(unittest.TestCase):
    """The dry engine at its boundary: admission stops when the pool is full,
    growth past it preempts, and answers do not depend on the batch."""

    def run_requests(self, engine, prompts, max_new):
        async def go():
            done = {}
            peaks = {"running": 0, "waiting": 0, "kv": 0.0}
            futs = []
            for i, ids in enumerate(prompts):
                fut = asyncio.get_running_loop().create_future()
                toks = []

                def on_event(ev, toks=toks, fut=fut, i=i):
                    toks.extend(ev.new_tokens)
                    if ev.finished and not fut.done():
                        done[i] = list(toks)
                        fut.set_result(None)

                engine.submit(f"r{i}", ids, max_new, on_event)
                futs.append(fut)
            while not all(f.done() for f in futs):
                st = engine.stats()
                peaks["running"] = max(peaks["running"], st["running"])
                peaks["waiting"] = max(peaks["waiting"], st["waiting"])
                peaks["kv"] = max(peaks["kv"], st["kv_usage"])
                await asyncio.sleep(0.0005)
            return done, peaks

        return asyncio.run(go())

    def engine(self, cap_gb):
        return dryengine.DryEngine(dict(cap_bytes=int(cap_gb * GB), utilisation=0.9, card=None), step_ms=0.2)

    def test_boundary_and_invariance(self):
        e = self.engine(2)
        prompt_len, max_new = 6000, 300
        per_seq = -(-(prompt_len + max_new) // 256)
        fits = e.pool.num_blocks // per_seq
        self.assertGreater(fits, 1)
        prompts = [[1000 + (i * 7 + j) % 900 for j in range(prompt_len)] for i in range(fits + 3)]
        alone, _ = self.run_requests(self.engine(2), prompts[:1], max_new)
        done, peaks = self.run_requests(e, prompts, max_new)
        self.assertEqual(len(done), len(prompts))
        self.assertEqual(done[0], alone[0], "the answer changed with the batch")
        self.assertTrue(all(len(v) == max_new for v in done.values()))
        # Past the boundary: requests wait and the pool fills; never more running than the prompts' blocks admit.
        self.assertGreater(peaks["waiting"], 0)
        self.assertGreaterEqual(peaks["kv"], (fits * per_seq - fits) / e.pool.num_blocks)
        self.assertLessEqual(peaks["running"], e.pool.num_blocks // -(-(prompt_len + 1) // 256))

    def test_preempts_when_growth_runs_out(self):
        e = self.engine(2)
        # Prompts that leave the pool just short of their growth: admitted together, preempted while decoding.
        prompt_len = 256 * 10 - 1
        n = e.pool.num_blocks // 10
        prompts = [[1000 + i] * prompt_len for i in range(n)]
        done, _ = self.run_requests(e, prompts, 512)
        self.assertEqual(len(done), n)
        self.assertGreater(e.preemptions, 0)
        self.assertEqual(e.free_blocks, e.pool.num_blocks, "blocks leaked")


if __name__ == "__main__":
    unittest.main()
