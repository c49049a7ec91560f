#!/usr/bin/env bash
# rss-scale.sh: peak RSS of `extractbench corpus check` and of a one-pass
# `extractbench run` (built-in engine, no simulated time) on corpora of N
# documents, to see how memory grows with the corpus (issue 17, item 8).
# Each corpus is a bare .jsonl made from corpus/default's 300 documents,
# cycled, each copy with its own id and a unique last line (no duplicates).
#
# Usage: scripts/rss-scale.sh [N ...]   (default: 2000 10000 100000; RUN=0 skips the run,
#        LEVELS="1, 16" sets the sweep's levels (default 1), WORK=DIR keeps the corpora for a rerun)
#
# Measured on 2 cores (issue 17, item 8; before = the whole-file loader):
#   documents  check RSS MB before/after  run RSS MB (levels [1]) before/after
#      10,000        261 /  53                 248 /  81
#     100,000      2,138 /  69               2,140 / 278
#   1,000,000    (~21 GB, not run) / 220     (not run: ~40 min a pass on 2 cores)
# The run's remainder grows ~2 KB a document: a pass's records (without
# outputs) are still read back whole to compute its passes row.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(2000 10000 100000)
work=${WORK:-$(mktemp -d /tmp/rss-scale.XXXXXX)}
go build -o "$work/extractbench" ./cmd/extractbench
printf '%10s %12s %12s %14s %10s %14s\n' documents "file MB" "check s" "check RSS MB" "run s" "run RSS MB"
for n in "${sizes[@]}"; do
  f=$work/c$n.jsonl
  [ -f "$f" ] || python3 - "$n" "$f" <<'PY'
import json, sys
n, out = int(sys.argv[1]), sys.argv[2]
src = [json.loads(l) for l in open("corpus/default/documents.jsonl", encoding="utf-8")]
with open(out, "w", encoding="utf-8") as w:
    for i in range(n):
        d = dict(src[i % len(src)])
        d["id"] = "s%08d" % i
        d["text"] = d["text"] + "\nRef S%08d." % i
        w.write(json.dumps(d, ensure_ascii=False, separators=(",", ":")) + "\n")
PY
  mb=$(( $(stat -c %s "$f") / 1000000 ))
  t0=$(date +%s%N)
  /usr/bin/time -o "$work/rss" -f %M "$work/extractbench" corpus check "$f" >/dev/null 2>&1 || true
  check_kb=$(tail -1 "$work/rss")
  check_s=$(( ($(date +%s%N) - t0) / 1000000000 ))
  run_mb=- run_s=-
  if [ "${RUN:-1}" != 0 ]; then
    cat >"$work/p$n.yaml" <<YAML
name: rss-$n
corpus: $f
prompt: {user: "Extract date (YYYY-MM-DD), amount and category.\n\n{{document}}"}
generation: {max_tokens: 128, temperature: 0, seed: 7}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [${LEVELS:-1}], repetitions: 1, warmup: 2}
variants:
  - name: v
    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0}}
YAML
    rm -rf "$work/out$n"
    t0=$(date +%s%N)
    /usr/bin/time -o "$work/rss" -f %M "$work/extractbench" run -quiet -protocol "$work/p$n.yaml" -out "$work/out$n" >/dev/null 2>&1 || true
    run_kb=$(tail -1 "$work/rss")
    run_mb=$(( run_kb / 1024 ))
    run_s=$(( ($(date +%s%N) - t0) / 1000000000 ))
    rm -rf "$work/out$n"
  fi
  printf '%10d %12d %12d %14d %10s %14s\n' "$n" "$mb" "$check_s" $(( check_kb / 1024 )) "$run_s" "$run_mb"
done
