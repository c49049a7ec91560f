#!/usr/bin/env python3
"""smoke.py checks a running server.py over HTTP and times it.

Checks: /health, /v1/models, /version, a streamed answer (role chunk, content,
finish_reason length, vLLM's usage chunk), a plain answer, the 400 context
error, /metrics names and POST /reset_peaks. Then it sends documents at the
given concurrencies (level:count pairs) and prints output tokens/s, latency
and the engine's own peaks.

Without a corpus it makes synthetic documents in the default corpus's length
mix (100 short, 150 usual, 50 long, by tokenizer.count).

    python3 engines/transformers/smoke.py --url http://127.0.0.1:8000 --levels 1:12,32:300,128:300
"""

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time

import aiohttp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import extraction as ex  # noqa: E402
import tokenizer as tk  # noqa: E402

SYSTEM = "You extract fields from business documents. Answer with JSON only."
USER = (
    "Extract date (issue date, YYYY-MM-DD), amount (total due, a JSON number) and category (one of: utilities, telecom, software, office_supplies, travel, meals, rent, professional_services, taxes, healthcare). "
    "Use null for a field the document lacks. Answer with one JSON object with the keys date, amount and category.\n\n{{document}}"
)  # the protocols' prompt

WORDS = (
    "nota fiscal eletrônica emissão vencimento total a pagar valor serviços prestados imposto "
    "invoice issue date amount due subtotal tax shipping customer account number description quantity "
    "unit price telecom internet plano mensal consumo energia elétrica kWh água esgoto aluguel condomínio "
    "software subscription license seats support hotel flight boarding restaurant meal healthcare consulta"
).split()


def synthetic_docs(seed=7, short=100, usual=150, long=50):
    """synthetic_docs returns documents whose token counts fall in each length class."""
    rnd = random.Random(seed)

    def doc(lo, hi):
        target = rnd.randint(lo, hi)
        parts, n = [], 0
        while n < target:
            line = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(3, 9)))
            line += f": R$ {rnd.randint(1, 99999):,}.{rnd.randint(0, 99):02d} {rnd.randint(1, 28):02d}/0{rnd.randint(1, 9)}/2025\n"
            parts.append(line)
            n += tk.count(line)
        return "".join(parts)

    docs = [("short", doc(60, 280)) for _ in range(short)]
    docs += [("usual", doc(320, 1450)) for _ in range(usual)]
    docs += [("long", doc(5600, 7300)) for _ in range(long)]
    rnd.shuffle(docs)
    return [{"id": f"syn-{i:04d}", "length_class": c, "text": t} for i, (c, t) in enumerate(docs)]


def load_docs(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def messages(text, system=SYSTEM, user=USER):
    return [{"role": "system", "content": system}, {"role": "user", "content": user.replace("{{document}}", text)}]


async def chat(session, url, model, text, max_tokens, stream=True):
    """chat sends one request and returns its record."""
    body = {"model": model, "messages": messages(text), "max_tokens": max_tokens, "temperature": 0, "seed": 7}
    if stream:
        body.update(stream=True, stream_options={"include_usage": True})
    t0 = time.perf_counter()
    rec = {"ttft": None, "content": "", "finish": None, "usage": None, "chunks": [], "status": None}
    async with session.post(url + "/v1/chat/completions", json=body) as r:
        rec["status"] = r.status
        if r.status != 200 or not stream:
            rec["body"] = await r.json(content_type=None)
            rec["e2e"] = time.perf_counter() - t0
            return rec
        async for raw in r.content:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                rec["done"] = rec.get("done") or line == "data: [DONE]"
                continue
            ch = json.loads(line[6:])
            rec["chunks"].append(ch)
            if ch.get("usage"):
                rec["usage"] = ch["usage"]
            for c in ch.get("choices", []):
                piece = c.get("delta", {}).get("content")
                if piece and rec["ttft"] is None:
                    rec["ttft"] = time.perf_counter() - t0
                rec["content"] += piece or ""
                rec["finish"] = c.get("finish_reason") or rec["finish"]
    rec["e2e"] = time.perf_counter() - t0
    return rec


def check(ok, what, failures):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


async def metrics(session, url):
    async with session.get(url + "/metrics") as r:
        vals = {}
        for line in (await r.text()).splitlines():
            if line and not line.startswith("#"):
                name, _, v = line.rpartition(" ")
                vals[name] = float(v)
        return vals


def metric(vals, prefix):
    return next((v for k, v in vals.items() if k.split("{")[0] == prefix), None)


async def checks(session, url, model, docs, max_tokens):
    failures = []
    async with session.get(url + "/health") as r:
        check(r.status == 200, "/health 200", failures)
    async with session.get(url + "/v1/models") as r:
        models = await r.json()
        check(models["data"][0]["id"] == model, f"/v1/models lists {model}", failures)
    async with session.get(url + "/version") as r:
        version = await r.json()
        print("version:", json.dumps({k: v for k, v in version.items() if k != "chat_template"}))
    trained = version.get("random_weights") is False
    rec = await chat(session, url, model, docs[0]["text"], max_tokens)
    first = rec["chunks"][0]["choices"][0]["delta"] if rec["chunks"] else {}
    check(first.get("role") == "assistant", "stream starts with the role chunk", failures)
    check(bool(rec["content"]), f"stream carries content ({rec['content'][:40]!r})", failures)
    check(rec["finish"] in ("length", "stop"), f"finish_reason {rec['finish']}", failures)
    u = rec["usage"] or {}
    check(u.get("completion_tokens") == max_tokens or rec["finish"] == "stop", f"usage {u}", failures)
    check(rec["chunks"][-1].get("choices") == [], "usage chunk has empty choices", failures)
    if trained:  # the trained model answers with JSON and stops
        check(rec["finish"] == "stop" and ex.parse_strict(rec["content"])[0] is not None, f"a JSON answer that stops: {rec['content']!r}", failures)
        if docs[0].get("expected"):
            print("first answer scored:", ex.score(rec["content"], docs[0]["expected"]))
    else:
        check(u.get("prompt_tokens") == len(tk.render_chat(messages(docs[0]["text"]))), "prompt_tokens = tokenizer count", failures)
    plain = await chat(session, url, model, docs[0]["text"], 8, stream=False)
    check(plain["status"] == 200 and plain["body"]["usage"]["completion_tokens"] <= 8, "non-streamed answer", failures)
    big = await chat(session, url, model, "palavra " * 9000, max_tokens)
    msg = (big.get("body") or {}).get("message", "")
    check(big["status"] == 400 and msg.startswith("This model's maximum context length is 8192 tokens."), f"context 400: {msg[:90]}", failures)
    m = await metrics(session, url)
    for name in (
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
        "vllm:kv_cache_usage_perc",
        "vllm:request_queue_time_seconds_count",
        "vllm:time_to_first_token_seconds_count",
        "vllm:e2e_request_latency_seconds_count",
        "torch_cuda_max_memory_allocated_bytes",
        "torch_cuda_max_memory_reserved_bytes",
        "engine_graph_captures_total",
    ):
        check(metric(m, name) is not None, f"/metrics has {name}", failures)
    print("preemptions metric:", metric(m, "vllm:num_preemptions_total"))
    async with session.post(url + "/reset_peaks") as r:
        check(r.status == 200, "/reset_peaks 200", failures)
    m2 = await metrics(session, url)
    check(metric(m2, "torch_cuda_max_memory_allocated_bytes") <= metric(m, "torch_cuda_max_memory_allocated_bytes"), "peaks reset", failures)
    return failures


async def run_level(session, url, model, docs, level, count, max_tokens):
    """run_level keeps level requests in flight over count documents."""
    await session.post(url + "/reset_peaks")
    captures0 = metric(await metrics(session, url), "engine_graph_captures_total")
    todo = list(docs[:count])
    recs, peaks = [], {"running": 0, "waiting": 0, "kv": 0.0}
    stop = asyncio.Event()

    async def sampler():
        while not stop.is_set():
            try:
                m = await metrics(session, url)
            except Exception as e:  # noqa: BLE001
                print("metrics scrape failed:", e)
                await asyncio.sleep(0.5)
                continue
            peaks["running"] = max(peaks["running"], metric(m, "vllm:num_requests_running") or 0)
            peaks["waiting"] = max(peaks["waiting"], metric(m, "vllm:num_requests_waiting") or 0)
            peaks["kv"] = max(peaks["kv"], metric(m, "vllm:kv_cache_usage_perc") or 0)
            await asyncio.sleep(0.2)

    async def worker():
        while todo:
            d = todo.pop(0)
            r = await chat(session, url, model, d["text"], max_tokens)
            r["class"] = d.get("length_class")
            if d.get("expected") is not None and r["status"] == 200:
                r["accepted"] = ex.score(r["content"], d["expected"])["accepted"]
            recs.append(r)

    s = asyncio.create_task(sampler())
    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(level)))
    wall = time.perf_counter() - t0
    stop.set()
    await s
    m = await metrics(session, url)
    ok = [r for r in recs if r["status"] == 200 and r["usage"]]
    out_tokens = sum(r["usage"]["completion_tokens"] for r in ok)
    e2e = sorted(r["e2e"] for r in ok)
    by_class = {}
    for r in ok:
        by_class.setdefault(r["class"], []).append(r["e2e"])
    return {
        "level": level,
        "docs": len(recs),
        "ok": len(ok),
        "wall_s": round(wall, 2),
        "out_tok_s": round(out_tokens / wall, 1),
        "prompt_tokens": sum(r["usage"]["prompt_tokens"] for r in ok),
        "e2e_p50_s": round(statistics.median(e2e), 3) if e2e else None,
        "e2e_p95_s": round(e2e[int(0.95 * (len(e2e) - 1))], 3) if e2e else None,
        "ttft_p50_s": round(statistics.median([r["ttft"] for r in ok if r["ttft"]]), 3) if ok else None,
        "e2e_mean_by_class": {k: round(statistics.mean(v), 3) for k, v in by_class.items()},
        "max_running": peaks["running"],
        "max_waiting": peaks["waiting"],
        "peak_kv": round(peaks["kv"], 3),
        "peak_alloc_gib": round((metric(m, "torch_cuda_max_memory_allocated_bytes") or 0) / 2**30, 2),
        "peak_reserved_gib": round((metric(m, "torch_cuda_max_memory_reserved_bytes") or 0) / 2**30, 2),
        "preemptions": metric(m, "vllm:num_preemptions_total"),
        "graph_captures": None if captures0 is None else metric(m, "engine_graph_captures_total") - captures0,
        "graph_captures_total": metric(m, "engine_graph_captures_total"),
        "accepted": sum(1 for r in recs if r.get("accepted")) if any("accepted" in r for r in recs) else None,
        "e2e_mean_s": round(statistics.mean(e2e), 4) if e2e else None,
        "finish": {f: sum(1 for r in recs if r["finish"] == f) for f in {r["finish"] for r in recs}},
    }


def stratified(docs, n):
    """stratified picks n documents in the corpus's class proportions, long first."""
    by = {}
    for d in docs:
        by.setdefault(d.get("length_class"), []).append(d)
    total = len(docs)
    out = []
    for c in ("long", "usual", "short"):
        k = max(1, round(n * len(by.get(c, [])) / total)) if by.get(c) else 0
        out += by.get(c, [])[:k]
    return out[:n]


async def main_async(args):
    docs = load_docs(args.corpus) if args.corpus else synthetic_docs()
    timeout = aiohttp.ClientTimeout(total=args.timeout)
    conn = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(timeout=timeout, connector=conn) as session:
        deadline = time.monotonic() + args.wait
        while True:  # --wait: the server may still be loading
            try:
                async with session.get(args.url + "/health") as r:
                    if r.status == 200:
                        break
            except aiohttp.ClientError:
                pass
            if time.monotonic() > deadline:
                print(f"no healthy server at {args.url} after {args.wait:.0f}s", flush=True)
                return 2
            await asyncio.sleep(0.5)
        async with session.get(args.url + "/v1/models") as r:
            model = (await r.json())["data"][0]["id"]
        failures = [] if args.skip_checks else await checks(session, args.url, model, docs, args.max_tokens)
        rows = []
        for spec in [x for _ in range(args.repeat) for x in filter(None, args.levels.split(","))]:
            level, count = (int(x) for x in spec.split(":"))
            pick = stratified(docs, count) if count < len(docs) else docs
            row = await run_level(session, args.url, model, pick, level, count, args.max_tokens)
            print(json.dumps(row), flush=True)
            rows.append(row)
    if rows:
        print(f"{'level':>5} {'docs':>5} {'wall s':>7} {'out tok/s':>9} {'e2e mean':>8} {'e2e p50':>8} {'e2e p95':>8} {'ttft p50':>8} {'run':>4} {'kv':>5} {'alloc GiB':>9} {'resv GiB':>8} {'acc':>4} {'graphs':>6}")
        for r in rows:
            print(
                f"{r['level']:>5} {r['docs']:>5} {r['wall_s']:>7} {r['out_tok_s']:>9} {r['e2e_mean_s']!s:>8} {r['e2e_p50_s']!s:>8} {r['e2e_p95_s']!s:>8} "
                f"{r['ttft_p50_s']!s:>8} {r['max_running']:>4.0f} {r['peak_kv']:>5} {r['peak_alloc_gib']:>9} {r['peak_reserved_gib']:>8} "
                f"{r['accepted']!s:>4} {r['graph_captures']!s:>6}"
            )
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"failures": failures, "levels": rows}, f, indent=1)
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default="http://127.0.0.1:8000")
    p.add_argument("--corpus", help="documents.jsonl (default: synthetic documents in the default corpus's mix)")
    p.add_argument("--levels", default="1:4,32:64", help="concurrency:documents pairs")
    p.add_argument("--max-tokens", type=int, default=128)
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--skip-checks", action="store_true")
    p.add_argument("--wait", type=float, default=0, help="seconds to wait for /health first")
    p.add_argument("--repeat", type=int, default=1, help="run the levels this many times (a second identical load shows whether anything is captured again)")
    p.add_argument("--out", help="write the results as JSON here")
    p.add_argument("--write-synthetic", help="write the synthetic documents to this .jsonl and exit")
    args = p.parse_args()
    if args.write_synthetic:
        with open(args.write_synthetic, "w", encoding="utf-8") as f:
            for d in synthetic_docs():
                f.write(json.dumps(d, ensure_ascii=False) + "\n")
        return
    sys.exit(asyncio.run(main_async(args)))


if __name__ == "__main__":
    main()
