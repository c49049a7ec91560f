"""Tests of the HTTP side of server.py and of tokenizer.py, runnable without
torch or a GPU: a scripted engine stands in for the batching manager.

    python3 -m unittest discover -s engines/transformers -p 'test_*.py'
"""

import asyncio
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tokenizer as tk  # noqa: E402
from events import Event  # noqa: E402

try:
    from aiohttp.test_utils import TestClient, TestServer

    import server
except ImportError:  # aiohttp missing: only the tokenizer tests run
    server = None


class ScriptedEngine:
    """ScriptedEngine answers every request with script (a list of token ids),
    one token per loop turn, failing with fail_with after fail_after tokens."""

    served = "scripted"
    max_context = 8192
    eos_ids = set(tk.EOS_IDS)

    def __init__(self, script, fail_after=None, fail_with=None):
        self.script, self.fail_after, self.fail_with = script, fail_after, fail_with
        self.cancelled, self.submitted, self.peaks_reset, self.up = [], [], 0, True

    def alive(self):
        return self.up

    def submit(self, rid, ids, max_new_tokens, on_event):
        self.submitted.append((rid, ids, max_new_tokens))
        loop = asyncio.get_running_loop()
        tokens = self.script[:max_new_tokens]

        def step(i):
            if rid in self.cancelled:
                return
            if self.fail_after is not None and i == self.fail_after:
                on_event(Event([], i, True, self.fail_with))
                return
            done = i + 1 == len(tokens) or tokens[i] in self.eos_ids
            on_event(Event([tokens[i]], i + 1, done, None, 0.25 if i == 0 else None))
            if not done:
                loop.call_soon(step, i + 1)

        loop.call_soon(step, 0)

    def cancel(self, rid):
        self.cancelled.append(rid)

    def stats(self):
        return {"running": 1, "waiting": 2, "kv_usage": 0.5, "preemptions": 3}

    def memory(self):
        return {"max_allocated": 100, "max_reserved": 200, "allocated": 10, "reserved": 20}

    def reset_peaks(self):
        self.peaks_reset += 1

    def info(self):
        return {"transformers": "5.x", "torch": "2.x", "shape": "test"}


def sse(text):
    """sse returns the JSON payloads of an event stream, and whether it ended with [DONE]."""
    out, done = [], False
    for line in text.split("\n"):
        if line.startswith("data: "):
            if line == "data: [DONE]":
                done = True
            else:
                out.append(json.loads(line[6:]))
    return out, done


MESSAGES = [{"role": "system", "content": "You extract fields."}, {"role": "user", "content": "Total: R$ 1.234,56"}]


@unittest.skipIf(server is None, "aiohttp is not installed")
class ServerTest(unittest.IsolatedAsyncioTestCase):
    async def client(self, engine):
        c = TestClient(TestServer(server.Server(engine).app()))
        await c.start_server()
        self.addAsyncCleanup(c.close)
        return c

    async def test_stream_length(self):
        eng = ScriptedEngine([11, 12, 13, 14, 15])
        c = await self.client(eng)
        r = await c.post("/v1/chat/completions", json={"model": "m", "messages": MESSAGES, "max_tokens": 3, "stream": True, "stream_options": {"include_usage": True}})
        self.assertEqual(r.status, 200)
        chunks, done = sse(await r.text())
        self.assertTrue(done)
        self.assertEqual(chunks[0]["choices"][0]["delta"], {"role": "assistant", "content": ""})
        content = "".join(ch["choices"][0]["delta"].get("content", "") for ch in chunks if ch["choices"])
        self.assertEqual(content, tk.decode([11, 12, 13]))
        reasons = [ch["choices"][0]["finish_reason"] for ch in chunks if ch["choices"]]
        self.assertEqual(reasons[-1], "length")
        want_usage = {"prompt_tokens": len(tk.render_chat(MESSAGES)), "completion_tokens": 3, "total_tokens": len(tk.render_chat(MESSAGES)) + 3}
        self.assertEqual(chunks[-1]["choices"], [])
        self.assertEqual(chunks[-1]["usage"], want_usage)
        self.assertEqual(eng.submitted[0][1], tk.render_chat(MESSAGES))

    async def test_stream_stop_without_usage(self):
        c = await self.client(ScriptedEngine([11, tk.EOT, 13]))
        r = await c.post("/v1/chat/completions", json={"messages": MESSAGES, "max_tokens": 10, "stream": True})
        chunks, done = sse(await r.text())
        self.assertTrue(done)
        self.assertTrue(all(ch["choices"] for ch in chunks), "no usage chunk unless asked")
        self.assertEqual(chunks[-1]["choices"][0]["finish_reason"], "stop")

    async def test_not_streamed(self):
        c = await self.client(ScriptedEngine([21, 22]))
        r = await c.post("/v1/chat/completions", json={"messages": MESSAGES, "max_tokens": 2})
        got = await r.json()
        self.assertEqual(got["choices"][0]["message"]["content"], tk.decode([21, 22]))
        self.assertEqual(got["choices"][0]["finish_reason"], "length")
        self.assertEqual(got["usage"]["completion_tokens"], 2)

    async def test_context_length(self):
        eng = ScriptedEngine([1])
        c = await self.client(eng)
        long = [{"role": "user", "content": "word " * 8000}]
        p = len(tk.render_chat(long))
        r = await c.post("/v1/chat/completions", json={"messages": long, "max_tokens": 300, "stream": True})
        self.assertEqual(r.status, 400)
        want = {
            "object": "error",
            "message": f"This model's maximum context length is 8192 tokens. However, you requested {p + 300} tokens ({p} in the messages, 300 in the completion). Please reduce the length of the messages or completion.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        }
        self.assertEqual(await r.json(), want)
        self.assertEqual(eng.submitted, [])

    async def test_bad_requests(self):
        c = await self.client(ScriptedEngine([1]))
        for body in ({"nomessages": 1}, {"messages": MESSAGES, "max_tokens": 0}, {"messages": MESSAGES, "max_tokens": "5"}):
            r = await c.post("/v1/chat/completions", json=body)
            self.assertEqual(r.status, 400, body)

    async def test_error_mid_stream(self):
        c = await self.client(ScriptedEngine([1, 2, 3, 4], fail_after=2, fail_with="CUDA out of memory. Tried to allocate 2.00 GiB"))
        r = await c.post("/v1/chat/completions", json={"messages": MESSAGES, "max_tokens": 4, "stream": True})
        chunks, done = sse(await r.text())
        self.assertIn("CUDA out of memory", chunks[-1]["error"]["message"])
        self.assertTrue(done)

    async def test_engine_down(self):
        eng = ScriptedEngine([1])
        eng.up = False
        c = await self.client(eng)
        self.assertEqual((await c.get("/health")).status, 503)

    async def test_metrics_one_type_per_family(self):
        # Prometheus's text parser refuses a page where a name has two TYPE lines: the
        # server once wrote one per finish reason, and every scrape after a second
        # reason failed (extractbench now reports such passes: telemetry_errors).
        srv = server.Server(ScriptedEngine([5, 6]))
        srv.finished.update(stop=3, length=1)
        c = TestClient(TestServer(srv.app()))
        await c.start_server()
        self.addAsyncCleanup(c.close)
        text = await (await c.get("/metrics")).text()
        types = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")]
        self.assertEqual(sorted(types), sorted(set(types)), "a metric family has two TYPE lines")
        self.assertIn('vllm:request_success_total{model_name="scripted",finished_reason="length"} 1\n', text)
        self.assertIn('vllm:request_success_total{model_name="scripted",finished_reason="stop"} 3\n', text)

    async def test_metrics_and_peaks(self):
        eng = ScriptedEngine([5, 6])
        c = await self.client(eng)
        await (await c.post("/v1/chat/completions", json={"messages": MESSAGES, "max_tokens": 2})).read()
        text = await (await c.get("/metrics")).text()
        for line in (
            'vllm:num_requests_running{model_name="scripted"} 1',
            'vllm:num_requests_waiting{model_name="scripted"} 2',
            'vllm:kv_cache_usage_perc{model_name="scripted"} 0.5',
            'vllm:num_preemptions_total{model_name="scripted"} 3',
            'vllm:request_queue_time_seconds_bucket{model_name="scripted",le="0.3"} 1',
            'vllm:request_queue_time_seconds_count{model_name="scripted"} 1',
            'vllm:time_to_first_token_seconds_count{model_name="scripted"} 1',
            'vllm:e2e_request_latency_seconds_count{model_name="scripted"} 1',
            "torch_cuda_max_memory_allocated_bytes 100",
            "torch_cuda_max_memory_reserved_bytes 200",
        ):
            self.assertIn(line + "\n", text)
        r = await c.post("/reset_peaks")
        self.assertEqual(r.status, 200)
        self.assertEqual(eng.peaks_reset, 1)
        models = await (await c.get("/v1/models")).json()
        self.assertEqual(models["data"][0]["id"], "scripted")
        self.assertEqual(models["data"][0]["max_model_len"], 8192)


class TokenizerTest(unittest.TestCase):
    def test_counts(self):
        # Expected values are corpus.ApproxTokens' rules applied by hand.
        cases = {
            "": 0,
            "Total": 2,  # 5 letters: 2 pieces of at most 4
            " Total due": 3,
            "R$ 1.234,56": 7,  # R, $, 1, ., 234, ",", 56
            "a\n\n\nb": 3,  # a line-break run is one piece
            "a\n \nb": 4,  # a space breaks the run
            "emissão": 2,
            "abc123def": 3,
            "漢字": 2,
            "." * 9: 2,  # a run of one repeated symbol costs a token per started 8
            ". .": 2,
        }
        for text, want in cases.items():
            self.assertEqual(tk.count(text), want, text)

    def test_ids_and_chat(self):
        ids = tk.encode("Nota fiscal 12/03/2025")
        self.assertEqual(ids, tk.encode("Nota fiscal 12/03/2025"))
        self.assertTrue(all(0 <= i < tk.TEXT_VOCAB for i in ids))
        self.assertNotEqual(tk.encode("fatura A"), tk.encode("fatura B"))
        chat = tk.render_chat([{"role": "user", "content": "hi"}])
        self.assertEqual(chat[0], tk.BEGIN_OF_TEXT)
        self.assertEqual(chat.count(tk.EOT), 1)
        self.assertEqual(tk.decode([tk.EOT, tk.BEGIN_OF_TEXT]), "")
        self.assertTrue(tk.spell(7))


class CeilingTest(unittest.TestCase):
    def test_run_level_keeps_level_in_flight(self):
        import collections

        import ceiling

        class Out:
            def __init__(self, rid, n):
                self.request_id, self.generated_tokens, self.error = rid, list(range(n)), None

        class Manager:
            def __init__(self):
                self.queue, self.in_flight, self.max_in_flight = collections.deque(), 0, 0

            def add_request(self, input_ids, request_id, max_new_tokens, streaming):
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
                self.queue.append(Out(request_id, max_new_tokens))

            def get_result(self, timeout):
                self.in_flight -= 1
                return self.queue.popleft()

        class Engine:
            manager = Manager()

            def reset_peaks(self):
                pass

            def alive(self):
                return True

            @staticmethod
            def _finished(out):
                return True

            def memory(self):
                return {"max_allocated": 1, "max_reserved": 2}

        eng = Engine()
        row = ceiling.run_level(eng, [[1, 2, 3]] * 10, 4, 5)
        self.assertEqual((row["requests"], row["output_tokens"], row["prompt_tokens"], row["failed"]), (10, 50, 30, 0))
        self.assertEqual(eng.manager.max_in_flight, 4)

    def test_limit_keeps_class_proportions(self):
        import collections
        import tempfile

        import ceiling

        path = os.path.join(tempfile.mkdtemp(), "docs.jsonl")
        with open(path, "w") as f:
            for i in range(300):
                cls = "short" if i % 3 == 0 else "usual" if i % 6 != 5 else "long"
                f.write(json.dumps({"id": f"d{i:03d}", "length_class": cls, "text": "x"}) + "\n")
        docs = ceiling.load_docs(path, 100)
        self.assertEqual(len(docs), 100)
        self.assertEqual(collections.Counter(d["length_class"] for d in docs), {"short": 33, "usual": 50, "long": 17})
        self.assertEqual([d["id"] for d in docs], sorted(d["id"] for d in docs), "corpus order kept")
        self.assertEqual(len(ceiling.load_docs(path, 0)), 300)

    def test_summarize_median_and_range_per_level(self):
        import ceiling

        rows = [{"level": 64, "output_tokens_per_s": t} for t in (300.0, 280.0, 310.0)]
        rows += [{"level": 128, "output_tokens_per_s": t} for t in (200.0, 100.0)]
        got = ceiling.summarize(rows)
        self.assertEqual([(s["level"], s["repetitions"], s["output_tokens_per_s_median"], s["output_tokens_per_s_min"], s["output_tokens_per_s_max"]) for s in got],
                         [(64, 3, 300.0, 280.0, 310.0), (128, 2, 150.0, 100.0, 200.0)])



class RatioTest(unittest.TestCase):
    def test_per_level_ratio_and_captures_in_each_pass(self):
        import contextlib
        import io
        import sqlite3
        import sys
        import tempfile

        import ratio

        d = tempfile.mkdtemp()
        origin = 1_796_000_000 * 10**9  # 2026-11-29 (UTC) in Unix ns
        con = sqlite3.connect(os.path.join(d, "results.db"))
        con.execute("CREATE TABLE runs (run_id TEXT, clock_origin_unix_ns INTEGER)")
        con.execute("CREATE TABLE passes (run_id TEXT, variant TEXT, level INTEGER, status TEXT, output_tokens_per_s REAL, started_ns INTEGER, ended_ns INTEGER)")
        con.execute("INSERT INTO runs VALUES ('r', ?)", (origin,))
        con.executemany(
            "INSERT INTO passes VALUES ('r', 'bf16', ?, ?, ?, ?, ?)",
            [(1, "complete", 90.0, 0, 10 * 10**9), (2, "complete", 150.0, 10 * 10**9, 20 * 10**9), (4, "interrupted", 1.0, 20 * 10**9, 21 * 10**9)],
        )
        con.commit()
        con.close()

        def stamp(sec):
            import datetime

            t = datetime.datetime.fromtimestamp(origin / 1e9 + sec, datetime.timezone.utc)
            return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"

        with open(os.path.join(d, "engine-bf16.log"), "w") as f:
            for sec in (5, 12, 13, 15):
                f.write(f"{stamp(sec)} - ContinuousBatchingLogger - INFO - (IO 0)Creating graph for key = (1, 2, 3)\n")
            f.write(f"{stamp(6)} - ContinuousBatchingLogger - INFO - Setting graph for key = (1, 2, 3)\n")
        with open(os.path.join(d, "ceiling.json"), "w") as f:
            json.dump({"levels": [{"level": 1, "output_tokens_per_s": 100.0, "graph_captures": 2}, {"level": 1, "output_tokens_per_s": 500.0}]}, f)

        out = io.StringIO()
        argv = sys.argv
        sys.argv = ["ratio.py", d, os.path.join(d, "ceiling.json")]
        try:
            with contextlib.redirect_stdout(out):
                ratio.main()
        finally:
            sys.argv = argv
        lines = [line.split() for line in out.getvalue().splitlines()[1:]]
        # level 1: one capture in its window, ratio against the first (cold) ceiling pass;
        # level 2: three captures, no ceiling; the interrupted pass is left out.
        self.assertEqual(lines, [["1", "90.0", "1", "100.0", "2", "0.90"], ["2", "150.0", "3", "-", "-", "-"]])


    def test_median_rows(self):
        import ratio

        passes = [(1, 90.0, 0, 1), (1, 100.0, 2, 3), (1, 110.0, 4, 5), (2, 50.0, 6, 7)]
        ceiling = [{"level": 1, "output_tokens_per_s": v} for v in (100.0, 125.0, 110.0)]
        rows = ratio.median_rows(passes, ceiling)
        level, h, c, r, lo, hi = rows[0]
        self.assertEqual((level, h, c), (1, [90.0, 100.0, 110.0], [100.0, 125.0, 110.0]))
        self.assertAlmostEqual(r, 100.0 / 110.0)
        self.assertAlmostEqual(lo, 0.8)  # paired by repetition: 90/100, 100/125, 110/110
        self.assertAlmostEqual(hi, 1.0)
        self.assertEqual(rows[1][2:], ([], None, None, None))
        self.assertEqual(ratio.median([3.0, 1.0, 2.0, 4.0]), 2.5)

    def test_bad_ceiling_file_is_named(self):
        import tempfile

        import ratio

        d = tempfile.mkdtemp()
        for name, text, want in [
            ("cut.json", '{"levels": [', "cut.json:1: not JSON"),
            ("other.json", "{}", 'not a ceiling.py result (no "levels"'),
            ("level.json", '{"levels": [{"level": "64", "output_tokens_per_s": 1}]}', "levels[0]: needs an integer level"),
        ]:
            path = os.path.join(d, name)
            with open(path, "w") as f:
                f.write(text)
            with self.assertRaises(SystemExit) as cm:
                ratio.load_ceiling(path)
            self.assertIn(want, str(cm.exception.code))
            self.assertIn(path, str(cm.exception.code))


if __name__ == "__main__":
    unittest.main()
