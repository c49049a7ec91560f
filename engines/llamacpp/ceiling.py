#!/usr/bin/env python3
"""ceiling.py RESULTS_DB LLAMA_BENCH_MD: the served sweep against llama.cpp's own ceiling.

llama-bench measures one stream: pp2048 (prompt tokens/s, one 2,048-token batch) and tg32
(generated tokens/s). An extraction request is mostly prompt (about 1,300 prompt tokens to 26
generated), so the ceiling of a pass is the time llama-bench would need for that pass's own work,
done back to back at those rates:

    ceiling s = uncached prompt tokens / pp2048 + output tokens / tg32

where the uncached prompt tokens are the pass's prompt tokens less those the engine said it
served from its cache (passes.cached_prompt_share). The harness share is the pass's measured
output tokens/s over the ceiling's output tokens/s: 1.0 is llama-bench's speed through the
server, HTTP and scheduling included. Above 1 is possible where requests overlap (several slots
decode in one batch, which one-stream llama-bench does not do). Prints one markdown row per
variant and level: the median and the range over the level's repetitions.
"""
import re
import sqlite3
import statistics
import sys


def bench_rates(path):
    """bench_rates reads llama-bench's markdown (device-retrain.sh's llama-bench.md): per variant
    (from its '## extract-llama-15m-<variant>.gguf' heading) the mean pp and tg tokens/s."""
    rates, variant = {}, None
    for line in open(path):
        m = re.match(r"## extract-llama-15m-(\S+)\.gguf", line)
        if m:
            variant = m.group(1)
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if variant and len(cells) >= 7 and re.match(r"(pp|tg)\d+$", cells[-2]):
            rates.setdefault(variant, {})[cells[-2][:2]] = float(cells[-1].split("±")[0])
    return rates


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: ceiling.py RESULTS_DB LLAMA_BENCH_MD")
    rates = bench_rates(sys.argv[2])
    db = sqlite3.connect(sys.argv[1])
    rows = db.execute(
        "select variant, level, output_tokens, prompt_tokens, coalesce(cached_prompt_share, 0), duration_ns, output_tokens_per_s"
        " from passes where status = 'complete' and output_tokens > 0 order by variant, level, repetition").fetchall()
    by = {}
    for variant, level, out, prompt, cached, dur, otps in rows:
        r = rates.get(variant)
        if not r or "pp" not in r or "tg" not in r:
            sys.exit(f"ceiling.py: no llama-bench pp and tg for variant {variant} in {sys.argv[2]}")
        ceiling_s = prompt * (1 - cached) / r["pp"] + out / r["tg"]
        by.setdefault((variant, level), []).append((otps, out / ceiling_s, otps / (out / ceiling_s)))
    print("| variant | level | reps | served output tok/s | ceiling output tok/s (llama-bench) | served / ceiling |")
    print("| --- | ---: | ---: | --- | --- | --- |")

    def spread(xs, fmt):
        return f"{fmt.format(statistics.median(xs))} [{fmt.format(min(xs))}–{fmt.format(max(xs))}]"

    for (variant, level), v in by.items():
        served, ceil, share = zip(*v)
        print(f"| {variant} | {level} | {len(v)} | {spread(served, '{:,.0f}')} | {spread(ceil, '{:,.0f}')} | {spread(share, '{:.2f}')} |")


if __name__ == "__main__":
    main()
