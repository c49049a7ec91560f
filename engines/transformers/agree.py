#!/usr/bin/env python3
"""agree.py RESULTS_DIR CPU_JSON [--variant bf16] [--level 1]: how often the
engine's answers, as extractbench stored them (requests.output of the
variant's passes at that level), are the CPU reference's answers
(cpu_reference.py --out) for the same documents, and how often the verdict
(accepted or not) differs. A second opinion on the engine: the same weights
and prompts through another implementation and other numerics (bf16 kernels
vs float32), so a few near-tie flips are expected and many are a bug.

    python3 engines/transformers/agree.py OUTDIR/sweep reference/cpu/extract-llama-15m/cpu-default.json
"""

import argparse
import json
import os
import sqlite3
import sys


def load_engine(db_path, variant, level):
    """load_engine returns {(repetition, doc_id): (output, accepted)} of the
    variant's sent rows at level (one per document and repetition in a run;
    with -append runs in the directory, the last run's in row order)."""
    con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT repetition, doc_id, output, accepted FROM requests WHERE variant = ? AND level = ? AND send_ns IS NOT NULL "
            "ORDER BY repetition, doc_id",
            (variant, level),
        ).fetchall()
    finally:
        con.close()
    return {(r, d): (o, bool(a)) for r, d, o, a in rows}


def agreement(engine, cpu):
    """agreement compares engine answers with the CPU's per repetition:
    {repetition: {"documents", "same_output", "same_verdict", "flips": [...]}}."""
    out = {}
    for (rep, doc), (text, accepted) in sorted(engine.items()):
        c = cpu.get(doc)
        if c is None:
            continue
        s = out.setdefault(rep, {"documents": 0, "same_output": 0, "same_verdict": 0, "flips": []})
        s["documents"] += 1
        same = (text or "").strip() == (c["output"] or "").strip()
        s["same_output"] += same
        if accepted == c["score"]["accepted"]:
            s["same_verdict"] += 1
        else:
            s["flips"].append({"doc_id": doc, "engine": text, "engine_accepted": accepted, "cpu": c["output"], "cpu_accepted": c["score"]["accepted"]})
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("results", help="extractbench results directory (results.db)")
    p.add_argument("cpu", help="cpu_reference.py --out JSON")
    p.add_argument("--variant", default="bf16")
    p.add_argument("--level", type=int, default=1)
    args = p.parse_args()

    db = os.path.join(args.results, "results.db")
    if not os.path.exists(db):
        sys.exit(f"agree.py: {db} not found (is {args.results} an extractbench results directory?)")
    try:
        with open(args.cpu) as f:
            cpu = {r["id"]: r for r in json.load(f)["records"] if r.get("output") is not None}
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"agree.py: {args.cpu}: not a cpu_reference.py --out file ({type(e).__name__}: {e})")
    engine = load_engine(db, args.variant, args.level)
    if not engine:
        sys.exit(f"agree.py: no {args.variant} rows at level {args.level} in {db}")
    res = agreement(engine, cpu)
    if not res:
        sys.exit("agree.py: no document in common")
    for rep, s in sorted(res.items()):
        n = s["documents"]
        print(f"{args.variant} level {args.level} repetition {rep}: {s['same_output']}/{n} answers identical to the CPU reference's, "
              f"{s['same_verdict']}/{n} verdicts the same, {len(s['flips'])} flipped")
        for fl in s["flips"][:10]:
            print(f"  {fl['doc_id']}: engine {'accepted' if fl['engine_accepted'] else 'failed'} {fl['engine']!r}, "
                  f"cpu {'accepted' if fl['cpu_accepted'] else 'failed'} {fl['cpu']!r}")


if __name__ == "__main__":
    main()
