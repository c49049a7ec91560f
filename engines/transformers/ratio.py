#!/usr/bin/env python3
"""ratio.py puts an extractbench run beside ceiling.py's in-process passes,
level by level: output tokens/s of each, their ratio (harness / ceiling), and
the CUDA graphs the batching manager captured during each pass.

The manager captures a graph lazily for every new batch shape, and a capture
stalls generation, so a pass is only comparable with one that met as many
new shapes: a fresh engine's first pass, or the third pass of the same
prompts at the same level, are not. Compare a sweep with a ceiling run over
the same levels in the same order (ceiling.py --concurrency 1,2,4,...).
The harness's captures are counted in the engine's log (engine-<variant>.log)
between each pass's first send and last answer.

    python3 engines/transformers/ratio.py reference/h200/8b ceiling-sweep-8b.json
    python3 engines/transformers/ratio.py RUN_DIR ceiling-fp8.json --variant fp8 --median

With --median (for engines that capture nothing inside a pass, such as the
trained model's, whose graphs are all captured at start-up), each level is
one line: the median and range of the harness's passes and of the ceiling's
repetitions, the ratio of the medians, and the range of the ratios of passes
paired by repetition (every pairing when the counts differ).
"""

import argparse
import datetime
import json
import os
import re
import sqlite3
import sys

LOG_STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*Creating graph for key")


def harness_passes(run_dir, variant):
    """harness_passes returns the variant's complete passes: level, output
    tokens/s and the pass's wall-clock window in Unix ns."""
    db = os.path.join(run_dir, "results.db")
    if not os.path.exists(db):
        sys.exit(f"ratio.py: {db} not found (xz -dk {db}.xz)")
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        rows = con.execute(
            """SELECT p.level, p.output_tokens_per_s, r.clock_origin_unix_ns + p.started_ns, r.clock_origin_unix_ns + p.ended_ns
               FROM passes p JOIN runs r ON r.run_id = p.run_id
               WHERE p.variant = ? AND p.status = 'complete' ORDER BY p.started_ns""",
            (variant,),
        ).fetchall()
        con.close()
    except sqlite3.Error as e:
        sys.exit(f"ratio.py: {db}: not an extractbench results database: {e}")
    if not rows:
        sys.exit(f"ratio.py: {db}: no complete pass of variant {variant!r}")
    return rows


def capture_times(log_path):
    """capture_times returns the Unix ns of every graph capture in an engine
    log (transformers stamps its lines in the machine's local time, UTC there)."""
    out = []
    with open(log_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LOG_STAMP.match(line)
            if m:
                t = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=datetime.timezone.utc)
                out.append(int(t.timestamp() * 1e9))
    return out


def median(v):
    """median of a non-empty list (the mean of the middle two for an even count)."""
    v = sorted(v)
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def median_rows(passes, ceiling_rows):
    """median_rows gives, per level of the harness's passes in order: (level,
    harness values, ceiling values, ratio of medians, lowest and highest
    paired ratio), None where the ceiling lacks the level."""
    out = []
    for level in dict.fromkeys(p[0] for p in passes):
        h = [p[1] for p in passes if p[0] == level]
        c = [r["output_tokens_per_s"] for r in ceiling_rows if r["level"] == level]
        if not c:
            out.append((level, h, c, None, None, None))
            continue
        pairs = list(zip(h, c)) if len(h) == len(c) else [(a, b) for a in h for b in c]
        ratios = [a / b for a, b in pairs if b]
        out.append((level, h, c, median(h) / median(c), min(ratios), max(ratios)))
    return out


def load_ceiling_rows(path):
    """load_ceiling_rows returns every ceiling.py row (all repetitions)."""
    load_ceiling(path)  # validates, exits on a bad file
    with open(path, encoding="utf-8") as f:
        return json.load(f)["levels"]


def load_ceiling(path):
    """load_ceiling returns ceiling.py's first pass per level (as cold as the
    sweep's single pass), or exits naming the file and what is wrong with it."""
    try:
        with open(path, encoding="utf-8") as f:
            rows = json.load(f)["levels"]
        ceiling = {}
        for i, row in enumerate(rows):
            if not isinstance(row.get("level"), int) or not isinstance(row.get("output_tokens_per_s"), (int, float)):
                raise ValueError(f"levels[{i}]: needs an integer level and a number output_tokens_per_s")
            ceiling.setdefault(row["level"], row)
        return ceiling
    except OSError as e:
        sys.exit(f"ratio.py: {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        sys.exit(f"ratio.py: {path}:{e.lineno}: not JSON: {e.msg}")
    except (KeyError, TypeError, AttributeError):
        sys.exit(f'ratio.py: {path}: not a ceiling.py result (no "levels" list of objects)')
    except ValueError as e:
        sys.exit(f"ratio.py: {path}: {e}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", help="extractbench results directory (results.db, engine-<variant>.log)")
    p.add_argument("ceiling", help="ceiling.py's JSON result")
    p.add_argument("--variant", default="bf16")
    p.add_argument("--median", action="store_true", help="one line per level: medians and ranges over repetitions")
    args = p.parse_args()

    passes = harness_passes(args.run_dir, args.variant)
    if args.median:
        rows = median_rows(passes, load_ceiling_rows(args.ceiling))
        print(f"{'level':>5} {'harness tok/s median [min-max] n':>34} {'ceiling tok/s median [min-max] n':>34} {'ratio':>6} {'paired range':>13}")
        for level, h, c, r, lo, hi in rows:
            hs = f"{median(h):.1f} [{min(h):.1f}-{max(h):.1f}] {len(h)}"
            cs = f"{median(c):.1f} [{min(c):.1f}-{max(c):.1f}] {len(c)}" if c else "-"
            rs = f"{r:.2f}" if r is not None else "-"
            rg = f"{lo:.2f}-{hi:.2f}" if r is not None else "-"
            print(f"{level:>5} {hs:>34} {cs:>34} {rs:>6} {rg:>13}")
        return
    ceiling = load_ceiling(args.ceiling)
    log_path = os.path.join(args.run_dir, f"engine-{args.variant}.log")
    captures = capture_times(log_path) if os.path.exists(log_path) else None

    print(f"{'level':>5} {'harness tok/s':>13} {'graphs':>6} {'ceiling tok/s':>13} {'graphs':>6} {'ratio':>6}")
    for level, tok_s, start, end in passes:
        n = "-" if captures is None else sum(start <= t <= end for t in captures)
        c = ceiling.get(level)
        if c is None:
            print(f"{level:>5} {tok_s:>13.1f} {n:>6} {'-':>13} {'-':>6} {'-':>6}")
            continue
        print(f"{level:>5} {tok_s:>13.1f} {n:>6} {c['output_tokens_per_s']:>13.1f} {c.get('graph_captures', '-')!s:>6} {tok_s / c['output_tokens_per_s']:>6.2f}")


if __name__ == "__main__":
    main()
