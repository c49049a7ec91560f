#!/usr/bin/env python3
"""cpu_reference_table.py: the README.md of a cpu-reference.sh work directory (stdlib only).

    cpu_reference_table.py --model MODEL_DIR --variants "f16 q8_0 ..." OUT > OUT/README.md

Reads what cpu-reference.sh left in OUT: run/raw_table.csv (one row per pass), the
compare-REF-VARIANT.json of each variant against the first, memory.json (the calculator
beside each served file) and memory-gguf-TYPE.json (each GGUF tensor by tensor), and writes
the machine, the versions, the commands and three tables: per variant and level (accepted
share, failure classes, tokens/s, latency, tokenizer drift, cached prompt share), weights
(file, tensor bytes, calculator), and the paired verdicts against the reference with flips.
"""
import argparse, csv, json, os, platform, subprocess, sys


def load(path, default=None):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return default


def num(row, key):
    v = row.get(key, "")
    if v in ("", None):
        return None
    try:
        return float(v)
    except ValueError:
        return None


def ms(ns):
    return "n/a" if ns is None else f"{ns / 1e6:,.0f} ms"


def group(n):
    return "n/a" if n is None else f"{int(n):,}"


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def passes(out):
    """The last attempt of each complete pass, by (variant, level)."""
    path = os.path.join(out, "run", "raw_table.csv")
    rows = {}
    with open(path, newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r.get("status") != "complete" or r.get("mode") != "concurrency":
                continue
            key = (r["variant"], int(r["level"]), int(r["repetition"]))
            if key not in rows or int(r["attempt"]) > int(rows[key]["attempt"]):
                rows[key] = r
    return rows


def drift(r):
    compared, docs = num(r, "prompt_drift_compared"), num(r, "prompt_drift_docs")
    if compared is None:
        return "not compared"
    if not docs:
        return f"none of {int(compared)}"
    med, mx = num(r, "prompt_drift_median"), num(r, "prompt_drift_max")
    s = f"{int(docs)} of {int(compared)}"
    if med is not None and mx is not None:
        s += f" ({med * 100:+.1f}% median, up to {mx * 100:+.1f}%)"
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--variants", required=True)
    ap.add_argument("out")
    a = ap.parse_args()
    out, variants = a.out, a.variants.split()
    ref = variants[0]
    rows = passes(out)
    compares = {v: load(os.path.join(out, f"compare-{ref}-{v}.json")) for v in variants[1:]}
    memory = load(os.path.join(out, "memory.json"), {}) or {}
    ggufs = {v: load(os.path.join(out, f"memory-gguf-{v}.json"), {}) or {} for v in variants}
    seconds = 0
    try:
        with open(os.path.join(out, "run-seconds.txt"), encoding="utf-8") as f:
            seconds = sum(int(x) for x in f.read().split())
    except FileNotFoundError:
        pass
    engine = {}
    for c in compares.values():
        if c:
            engine = c["sides"][0]["engine"]
            break
    eb = os.path.join(out, "bin", "extractbench")
    ebv = subprocess.run([eb, "version"], capture_output=True, text=True).stdout.strip() if os.path.exists(eb) else "unknown"
    try:
        with open(os.path.join(a.model, "SHA256SUMS"), "rb") as f:
            import hashlib
            sums = hashlib.sha256(f.read()).hexdigest()
    except FileNotFoundError:
        sums = "unknown"

    w = sys.stdout.write
    w(f"# llama.cpp CPU reference: {os.path.basename(a.model.rstrip('/'))}, GGUF ladder {' '.join(variants)}\n\n")
    w(f"Made by `engines/llamacpp/cpu-reference.sh` (tables by `cpu_reference_table.py`). Machine: {cpu_model()}, "
      f"{os.cpu_count()} cores, {platform.system()} {platform.release()}; llama.cpp `{engine.get('version', 'unknown')}` "
      f"(build.sh's CPU build); {ebv}. Model directory `{a.model}` (SHA256SUMS sha256 `{sums}`). "
      f"Run time {seconds / 60:.1f} min (the run's own clock; all steps under nice).\n\n")
    w("```sh\n" f"engines/llamacpp/cpu-reference.sh {a.model} {out}\n" "```\n\n")

    w("## Per variant and level\n\n")
    w("| variant | level | accepted | memory | truncation | format | quality | error | output tok/s | E2E p50 / p95 | TTFT p50 | cached prompt | tokenizer drift |\n")
    w("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- |\n")
    for v in variants:
        for (var, level, rep), r in sorted(rows.items(), key=lambda kv: (variants.index(kv[0][0]) if kv[0][0] in variants else 99, kv[0][1], kv[0][2])):
            if var != v:
                continue
            docs, acc = int(num(r, "docs") or 0), int(num(r, "accepted") or num(r, "accepted_docs") or 0)
            share = f"{acc}/{docs} ({100 * acc / docs:.1f}%)" if docs else "0/0"
            fails = [group(num(r, "failures_" + k)) for k in ("memory", "truncation", "format", "quality", "error")]
            tok = num(r, "output_tokens_per_s")
            cached = num(r, "cached_prompt_share")
            lvl = f"{level}" + (f" (rep {rep})" if rep > 1 else "")
            w(f"| {v} | {lvl} | {share} | {' | '.join(fails)} | {'n/a' if tok is None else f'{tok:.1f}'} | "
              f"{ms(num(r, 'e2e_p50_ns'))} / {ms(num(r, 'e2e_p95_ns'))} | {ms(num(r, 'ttft_p50_ns'))} | "
              f"{'n/a' if cached is None else f'{cached * 100:.1f}%'} | {drift(r)} |\n")
    w("\n")

    w("## Weights: the GGUF files beside the calculator\n\n")
    w("| variant | file bytes | tensor bytes (file) | llama.cpp loaded | calculator | tensors that differ | types in the file |\n")
    w("| --- | ---: | ---: | ---: | ---: | ---: | --- |\n")
    served = {e["variant"]: e for e in memory.get("estimates", [])}
    for v in variants:
        g = ggufs[v].get("gguf", {})
        e = served.get(v, {})
        loaded = (e.get("file") or {}).get("bytes")
        calc = (e.get("estimate") or {}).get("model_weight_bytes", g.get("predicted_bytes"))
        types = ", ".join(f"{t['tensors']} {t['type']}" for t in g.get("file_types", []))
        w(f"| {v} | {group(g.get('file_bytes'))} | {group(g.get('file_tensor_bytes'))} | {group(loaded)} | {group(calc)} | "
          f"{len(g.get('differences', [])) if g else 'n/a'} | {types} |\n")
    w("\n")

    w(f"## Paired verdicts against {ref} (level 1, δ = 2 points)\n\n")
    w(f"| variant | documents | {ref} right, variant wrong | variant right, {ref} wrong | Δ accepted | 90% interval | verdict | flipped documents |\n")
    w("| --- | ---: | ---: | ---: | ---: | --- | --- | --- |\n")
    for v in variants[1:]:
        c = compares.get(v)
        if not c:
            w(f"| {v} | n/a | | | | | not compared | |\n")
            continue
        e = c["equivalence"]
        verdict = "EQUIVALENT" if e.get("Equivalent") else ("INCONCLUSIVE" if e.get("TooFew") else "NOT EQUIVALENT")
        if e.get("TooFew") and e.get("NeededN"):
            verdict += f" ({e['NeededN']:,} documents would do)"
        flips = ", ".join(p.get("DocID", "?") for p in (e.get("Flips") or [])[:12])
        if len(e.get("Flips") or []) > 12:
            flips += f", … ({len(e['Flips'])} in all)"
        w(f"| {v} | {e.get('N')} | {e.get('B')} | {e.get('C')} | {e.get('Delta', 0) * 100:+.1f} points | "
          f"[{e.get('Lo', 0) * 100:+.1f}, {e.get('Hi', 0) * 100:+.1f}] | {verdict} | {flips or 'none'} |\n")
    w("\nEach compare's text (`compare-*.txt`) and the calculator's tensor-by-tensor check (`memory-gguf-*.txt`) are beside this file.\n")


if __name__ == "__main__":
    main()
