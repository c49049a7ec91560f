"""Tests of quant.py and of the engine's capture counter. The int8 arithmetic
runs on the CPU wherever torch is importable; the FP8 path (torch._scaled_mm)
and the capture hook need a CUDA GPU (Hopper for FP8) and skip elsewhere.

    python3 -m unittest discover -s engines/transformers -p 'test_*.py'
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import torch
except ImportError:
    torch = None

CUDA = torch is not None and torch.cuda.is_available()
FP8 = CUDA and hasattr(torch, "float8_e4m3fn") and hasattr(torch, "_scaled_mm") and torch.cuda.get_device_capability() >= (8, 9)


def rel_err(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


@unittest.skipIf(torch is None, "torch is not installed")
class Int8Test(unittest.TestCase):
    def test_round_trip_per_channel(self):
        import quant

        g = torch.Generator().manual_seed(3)
        w = torch.randn(96, 64, generator=g) * torch.linspace(0.01, 3.0, 96)[:, None]  # channels of very different scale
        q, s = quant.quantize_int8_rows(w)
        self.assertEqual(q.dtype, torch.int8)
        self.assertEqual(tuple(s.shape), (96,))
        self.assertLessEqual(int(q.abs().max()), 127)
        back = quant.dequantize_int8_rows(q, s)
        # Symmetric rounding: every element within half a step of its channel's scale.
        self.assertTrue(bool(((back - w).abs() <= s[:, None] / 2 + 1e-6).all()))
        self.assertLess(rel_err(back, w), 1e-2)

    def test_linear_matches_float(self):
        import quant

        g = torch.Generator().manual_seed(4)
        lin = torch.nn.Linear(64, 48, bias=False)
        with torch.no_grad():
            lin.weight.copy_(torch.randn(48, 64, generator=g) * 0.05)
        ql = quant.Int8Linear(lin)
        self.assertEqual(ql.weight.dtype, torch.int8)
        x = torch.randn(5, 7, 64, generator=g)
        self.assertLess(rel_err(ql(x), lin(x)), 1e-2)
        self.assertEqual(tuple(ql(x).shape), (5, 7, 48))

    def test_quantize_model_replaces_decoder_linears_only(self):
        import quant

        class Attn(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.q_proj = torch.nn.Linear(32, 32, bias=False)
                self.o_proj = torch.nn.Linear(32, 32, bias=False)

        class Layer(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.self_attn = Attn()
                self.norm = torch.nn.LayerNorm(32)

        class Inner(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.embed_tokens = torch.nn.Embedding(10, 32)
                self.layers = torch.nn.ModuleList([Layer(), Layer()])

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = Inner()
                self.lm_head = torch.nn.Linear(32, 10, bias=False)

        m = Model()
        self.assertEqual(quant.quantize_model(m, "bf16"), 0)
        self.assertEqual(quant.quantize_model(m, "int8"), 4)
        self.assertIsInstance(m.model.layers[1].self_attn.o_proj, quant.Int8Linear)
        self.assertIsInstance(m.lm_head, torch.nn.Linear)
        by = quant.weight_bytes_by_dtype(m)
        self.assertEqual(by["int8"], 4 * 32 * 32)


@unittest.skipUnless(FP8, "needs a CUDA GPU with float8 matmuls (torch._scaled_mm)")
class FP8Test(unittest.TestCase):
    def test_linear_matches_bf16(self):
        import quant

        torch.manual_seed(5)
        for out_f, in_f in ((384, 384), (1024, 384), (384, 1024), (128, 384)):
            lin = torch.nn.Linear(in_f, out_f, bias=False, device="cuda", dtype=torch.bfloat16)
            ql = quant.FP8Linear(lin)
            self.assertEqual(ql.weight.dtype, torch.float8_e4m3fn)
            for m in (1, 3, 16, 17, 300, 8192):  # decode rows, odd counts (padded to 16), a prefill chunk
                x = torch.randn(1, m, in_f, device="cuda", dtype=torch.bfloat16)
                ref = torch.nn.functional.linear(x.float(), lin.weight.float())
                got = ql(x)
                self.assertEqual(got.dtype, torch.bfloat16)
                self.assertEqual(tuple(got.shape), (1, m, out_f))
                self.assertLess(rel_err(got, ref), 6e-2, (out_f, in_f, m))

    def test_weights_shrink(self):
        import quant

        torch.cuda.synchronize()
        lin = torch.nn.Linear(1024, 1024, bias=False, device="cuda", dtype=torch.bfloat16)
        before = torch.cuda.memory_allocated()
        ql = quant.FP8Linear(lin)
        del lin
        torch.cuda.synchronize()
        self.assertLess(torch.cuda.memory_allocated() - before, -(1024 * 1024) + 64 * 1024)
        self.assertEqual(ql.weight.element_size(), 1)


@unittest.skipUnless(CUDA, "needs a CUDA GPU")
class CaptureCounterTest(unittest.TestCase):
    def test_counts_graph_captures(self):
        import engine

        c = engine.capture_counter()
        n = c.total()
        x = torch.ones(8, device="cuda")
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            y = x * 2
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = x * 3
        g.replay()
        torch.cuda.synchronize()
        self.assertEqual(float(y[0]), 3.0)
        self.assertEqual(c.total(), n + 1)
        g.replay()
        self.assertEqual(c.total(), n + 1, "a replay is not a capture")


if __name__ == "__main__":
    unittest.main()
