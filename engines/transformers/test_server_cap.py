"""Tests of server.py's emulated-card side (--memory-cap-gib and the rest):
its flags, and what /version and /metrics say of the card, over the dry
engine (dryengine.py). Needs aiohttp; skips without it.

    python3 -m unittest discover -s engines/transformers -p 'test_*.py'
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cardcap  # noqa: E402
import dryengine  # noqa: E402

try:
    from aiohttp.test_utils import TestClient, TestServer

    import server
except ImportError:  # aiohttp missing
    server = None

MESSAGES = [{"role": "user", "content": "Total: R$ 1.234,56 " * 50}]


@unittest.skipIf(server is None, "aiohttp is not installed")
class CapFlagsTest(unittest.TestCase):
    def test_cap_of(self):
        args = server.parse_args(["--dry", "--memory-cap-gib", "2.5", "--card", "L4", "--utilisation", "0.8"])
        self.assertEqual(server.cap_of(args, dryengine.DEVICE_TOTAL_BYTES), dict(cap_bytes=int(2.5 * cardcap.GiB), utilisation=0.8, card="L4"))
        args = server.parse_args(["--dry", "--memory-cap-fraction", "0.25"])
        self.assertEqual(server.cap_of(args, 8 << 30)["cap_bytes"], 2 << 30)
        self.assertIsNone(server.cap_of(server.parse_args(["--dry"]), 8 << 30))

    def test_refused(self):
        for argv in (["--memory-cap-gib", "2", "--memory-cap-fraction", "0.5"], ["--cpu", "--model", "m", "--memory-cap-gib", "2"],
                     ["--memory-cap-gib", "2", "--utilisation", "1.5"]):
            with self.subTest(argv=argv), self.assertRaises(SystemExit):
                server.parse_args(argv)
        with self.assertRaises(SystemExit):  # more than the device
            server.cap_of(server.parse_args(["--dry", "--memory-cap-gib", "9"]), dryengine.DEVICE_TOTAL_BYTES)


@unittest.skipIf(server is None, "aiohttp is not installed")
class CapEndpointsTest(unittest.IsolatedAsyncioTestCase):
    async def test_version_and_metrics_name_the_card(self):
        cap = dict(cap_bytes=3 * cardcap.GB, utilisation=0.9, card="L40S")
        eng = dryengine.DryEngine(cap, step_ms=0.1)
        c = TestClient(TestServer(server.Server(eng).app()))
        await c.start_server()
        self.addAsyncCleanup(c.close)
        r = await c.post("/v1/chat/completions", json={"messages": MESSAGES, "max_tokens": 4})
        self.assertEqual(r.status, 200)
        v = await (await c.get("/version")).json()
        mc = v["memory_cap"]
        self.assertEqual(mc["cap_bytes"], 3 * cardcap.GB)
        self.assertEqual(mc["num_blocks"], eng.pool.num_blocks)
        self.assertEqual(mc["kv_capacity_tokens"], eng.pool.num_blocks * 256)
        self.assertIn("emulated L40S (3 GB) on CPU (dry run): memory only; bandwidth and compute are the CPU (dry run)'s", mc["label"])
        self.assertEqual(mc["hf_config"]["num_hidden_layers"], dryengine.SHAPE["num_hidden_layers"])
        text = await (await c.get("/metrics")).text()
        self.assertIn(f'engine_memory_cap_bytes{{model_name="dry-8b",card="{mc["label"]}"}} {3 * cardcap.GB}', text)
        self.assertIn(f'engine_kv_cache_blocks{{model_name="dry-8b"}} {eng.pool.num_blocks}', text)
        self.assertIn(f'engine_kv_cache_capacity_tokens{{model_name="dry-8b"}} {eng.pool.kv_capacity_tokens}', text)


if __name__ == "__main__":
    unittest.main()
