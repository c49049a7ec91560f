#!/usr/bin/env bash
# rss-scale.sh: peak RSS of `extractbench corpus check` and of a one-pass
# `extractbench run` (built-in engine, no simulated time) on corpora of N
# documents, to see how memory grows with the corpus (issue 17, item 8).
# Each corpus is a bare .jsonl made from corpus/default's 300 documents,
# cycled, each copy with its own id and a unique last line (no duplicates).
#
# Usage: scripts/rss-scale.sh [N ...]   (default: 2000 10000 100000; RUN=0 skips the run,
#        LEVELS="1, 16" sets the sweep's levels (default 1), WORK=DIR keeps the corpora for a
#        rerun; without WORK they are made in a temporary directory removed at the end)
# Each command runs from a fresh copy of the binary: a file the kernel has already backed with
# transparent huge pages counts up to ~17 MB more RSS for the same work.
#
# Peak RSS (MB) on 2 cores, one level, one repetition, built-in engine at time_scale 0 (issue 17,
# item 8). "whole file": the loader before issue 17; "held records": the first streaming corpus,
# which still read a pass's records back whole for its passes row; "streamed": pass rows from
# streamed rows and SQLite's order statistics, a compact corpus index, duplicates found with an
# external sort of 8-byte hashes, telemetry written as it comes.
#   documents  corpus check: whole file / held records / streamed    run: whole file / held records / streamed
#      10,000                 261 /  44 /  41                               248 /  79 /  70
#     100,000               2,138 /  54 /  44                             2,140 / 264 /  85
#   1,000,000           (~21 GB) / 220 /  58                         (not run) / (not run) / 112 *
# * opening the corpus and the first 30,000 documents of the pass (interrupted there). A whole
#   one-pass run at 1,000,000 documents (2,693 s) peaked at 178 MB with an earlier build of this
#   change whose corpus reader kept 8-byte hashes in memory (171 MB while opening, its check 113
#   MB); its pass added ~20 MB (8 bytes a request of client delays, and the GC's share) and its
#   end (pass row, Parquet export) ~30 MB.
#
# REPORT=1 scripts/rss-scale.sh [ROWS ...] (default: 250000 1000000) measures `extractbench report`
# instead: a run of ROWS request rows in passes of DOCS documents (default 62,500: 250,000 rows are
# 4 passes, 1,000,000 are 16), written by BenchmarkReport's builder (results/report/scale_test.go,
# one pass at a time through the store), then the command's peak RSS and its ratio to the first
# size's. OLD=BINARY measures that extractbench too, on the same runs. The report holds one pass's
# documents and what it shows, not the run's rows: the ratio stays near 1 (issue 29). Measured once
# on this 2-core machine, loaded by other jobs (REPORT=1 OLD=<the build before issue 29's streaming>):
#        rows   passes   report s  report RSS MB    ratio      old s     old RSS MB    ratio
#     250,000        4       12.8            133     1.00       19.0          1,631     1.00
#   1,000,000       16       24.8            146     1.10       34.1          4,965     3.04
# (BenchmarkReport in the same run, in process: peak heap 99 MB at 250,000 rows, 92 MB at 1,000,000.)
#
# MERGE=1 scripts/rss-scale.sh [ROWS ...] (default: 60000 240000 960000) measures `extractbench merge`
# (audit, copy, pass rows, export, report): 4 sealed shards of ROWS request rows in all (4 passes),
# written by BenchmarkMerge's builder (EXTRACTBENCH_MERGE_KEEP), merged REPS times (default 3) by
# the binary, OLD=BINARY too, interleaved, with the sqlite3 CLI's INSERT ... SELECT of the same
# shards' rows (256 MiB cache, no sync, journal in memory) as the physical reference. It prints CPU
# (user+sys) as median [min-max], the ratio to the reference's CPU within each repetition, and the
# largest peak RSS with its ratio to the first size's (issue 43, item 1).
# Measured on this 2-core machine, loaded by other jobs (OLD=<the build before issue 43>), one
# repetition (CPU s, ratio to the reference's CPU, peak RSS MB, ratio to 60,000 rows'):
#        rows   merge CPU  ratio  RSS MB  ratio      old CPU  ratio  old RSS MB  ratio
#      60,000        4.23   9.61     161   1.00         4.51  10.25         170   1.00
#     240,000       13.00   8.78     155   0.96        14.08   9.51         292   1.71
#     960,000       50.98   8.51     148   0.92        53.36   8.91         533   3.12
# The copier's cache (16 MiB, was 256) and journal (none, was in memory) and a GC goal of 50 while
# exporting keep RSS flat; the CPU left is SQLite reading the rows again (audit, pass rows, export,
# report), about 60% of it inside SQLite.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
sizes=("$@")
if [ -n "${WORK:-}" ]; then
  work=$WORK; mkdir -p "$work"
else
  work=$(mktemp -d /tmp/rss-scale.XXXXXX); trap 'rm -rf "$work"' EXIT # corpora of GBs: never left behind
fi
go build -o "$work/extractbench" ./cmd/extractbench
if [ "${MERGE:-0}" = 1 ]; then
  [ ${#sizes[@]} -gt 0 ] || sizes=(60000 240000 960000)
  reps=${REPS:-3}
  # CPU seconds (user+sys) and peak RSS (kB) of BINARY's merge of the shards in DIR, from a fresh
  # copy of the binary
  measure() {
    cp "$1" "$work/eb-merge"
    rm -rf "$2/merged"
    /usr/bin/time -o "$work/rss" -f '%U %S %M' "$work/eb-merge" merge -out "$2/merged" "$2"/shard-* >/dev/null 2>&1 || true
    rm -f "$work/eb-merge"
    read -r u s kb < <(tail -1 "$work/rss")
    echo "$(echo "$u + $s" | bc -l) $kb"
  }
  # CPU seconds of SQLite's own copy of the shards' request rows (the sqlite3 CLI, INSERT … SELECT,
  # the Copier's pragmas) into an empty database of the same schema: the physical reference
  reference() {
    local dst=$1/ref.db sql=$work/ref.sql
    rm -f "$dst"; sqlite3 "$1/shard-0-0/results.db" .schema | grep -v '^CREATE TABLE sqlite_' | sqlite3 "$dst"
    echo "PRAGMA synchronous = OFF; PRAGMA cache_size = -262144; PRAGMA journal_mode = MEMORY;" >"$sql"
    for d in "$1"/shard-*; do
      echo "ATTACH '$d/results.db' AS shard; INSERT INTO main.requests SELECT * FROM shard.requests WHERE rowid > 0; DETACH shard;" >>"$sql"
    done
    /usr/bin/time -o "$work/rss" -f '%U %S' sqlite3 "$dst" <"$sql" >/dev/null
    rm -f "$dst"
    read -r u s < <(tail -1 "$work/rss")
    echo "$u + $s" | bc -l
  }
  # median [min-max] of the numbers given
  stat() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {printf "%.2f [%.2f-%.2f]", v[int((NR+1)/2)], v[1], v[NR]}'; }
  printf '%10s %22s %22s %18s %10s %8s\n' rows "merge CPU s" "SQLite copy CPU s" "CPU ratio" "RSS MB" "ratio"
  [ -z "${OLD:-}" ] || printf '%10s %22s %22s %18s %10s %8s\n' "" "(old)" "" "(old)" "(old)" "(old)"
  first=0 firstOld=0
  for n in "${sizes[@]}"; do
    dir=$work/merge-$n
    [ -d "$dir/shard-0-0" ] || EXTRACTBENCH_MERGE_ROWS=$n EXTRACTBENCH_MERGE_KEEP=$dir \
      go test ./pipeline/merge -run '^$' -bench '^BenchmarkMerge$' -benchtime 1x >"$work/bench-$n.txt"
    cpus=() refs=() ratios=() kbs=() ocpus=() oratios=() okbs=()
    for r in $(seq "$reps"); do # interleaved: old, new, reference, the order turning each repetition
      order=(new ref old); [ $((r % 2)) = 0 ] && order=(old ref new)
      for which in "${order[@]}"; do
        case $which in
        new) read -r c kb < <(measure "$work/extractbench" "$dir"); cpus+=("$c"); kbs+=("$kb") ;;
        old) [ -z "${OLD:-}" ] || { read -r c kb < <(measure "$OLD" "$dir"); ocpus+=("$c"); okbs+=("$kb"); } ;;
        ref) refs+=("$(reference "$dir")") ;;
        esac
      done
      ratios+=("$(echo "${cpus[-1]} / ${refs[-1]}" | bc -l)")
      [ -z "${OLD:-}" ] || oratios+=("$(echo "${ocpus[-1]} / ${refs[-1]}" | bc -l)")
    done
    kb=$(printf '%s\n' "${kbs[@]}" | sort -n | tail -1)
    [ "$first" != 0 ] || first=$kb
    printf '%10d %22s %22s %18s %10d %8.2f\n' "$n" "$(stat "${cpus[@]}")" "$(stat "${refs[@]}")" "$(stat "${ratios[@]}")" $(( kb / 1024 )) "$(echo "$kb / $first" | bc -l)"
    if [ -n "${OLD:-}" ]; then
      okb=$(printf '%s\n' "${okbs[@]}" | sort -n | tail -1)
      [ "$firstOld" != 0 ] || firstOld=$okb
      printf '%10s %22s %22s %18s %10d %8.2f\n' "" "$(stat "${ocpus[@]}")" "" "$(stat "${oratios[@]}")" $(( okb / 1024 )) "$(echo "$okb / $firstOld" | bc -l)"
    fi
  done
  exit 0
fi
if [ "${REPORT:-0}" = 1 ]; then
  [ ${#sizes[@]} -gt 0 ] || sizes=(250000 1000000)
  docs=${DOCS:-62500}
  # peak RSS (kB) and seconds of BINARY's report of run DIR, from a fresh copy of the binary
  measure() {
    cp "$1" "$work/eb-report"
    local t0; t0=$(date +%s%N)
    /usr/bin/time -o "$work/rss" -f %M "$work/eb-report" report "$2" >/dev/null
    echo "$(tail -1 "$work/rss") $(( ($(date +%s%N) - t0) / 1000000 ))"
    rm -f "$work/eb-report"
  }
  printf '%10s %8s %10s %14s %8s' rows passes "report s" "report RSS MB" ratio
  [ -z "${OLD:-}" ] && echo || printf ' %10s %14s %8s\n' "old s" "old RSS MB" ratio
  first=0 firstOld=0
  for n in "${sizes[@]}"; do
    dir=$work/report-$n-$docs
    EXTRACTBENCH_REPORT_ROWS=$n EXTRACTBENCH_REPORT_DOCS=$docs EXTRACTBENCH_REPORT_KEEP=$dir \
      go test ./results/report -run '^$' -bench '^BenchmarkReport$' -benchtime 1x >"$work/bench-$n.txt"
    read -r kb ms < <(measure "$work/extractbench" "$dir")
    [ "$first" != 0 ] || first=$kb
    printf '%10d %8d %10.1f %14d %8.2f' "$n" $(( n / docs )) "$(echo "$ms / 1000" | bc -l)" $(( kb / 1024 )) "$(echo "$kb / $first" | bc -l)"
    if [ -n "${OLD:-}" ]; then
      read -r okb oms < <(measure "$OLD" "$dir")
      [ "$firstOld" != 0 ] || firstOld=$okb
      printf ' %10.1f %14d %8.2f' "$(echo "$oms / 1000" | bc -l)" $(( okb / 1024 )) "$(echo "$okb / $firstOld" | bc -l)"
    fi
    echo
  done
  exit 0
fi
[ ${#sizes[@]} -gt 0 ] || sizes=(2000 10000 100000)
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
  cp "$work/extractbench" "$work/eb-check"
  /usr/bin/time -o "$work/rss" -f %M "$work/eb-check" corpus check "$f" >/dev/null 2>&1 || true
  rm -f "$work/eb-check"
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
    cp "$work/extractbench" "$work/eb-run"
    /usr/bin/time -o "$work/rss" -f %M "$work/eb-run" run -quiet -protocol "$work/p$n.yaml" -out "$work/out$n" >/dev/null 2>&1 || true
    rm -f "$work/eb-run"
    run_kb=$(tail -1 "$work/rss")
    run_mb=$(( run_kb / 1024 ))
    run_s=$(( ($(date +%s%N) - t0) / 1000000000 ))
    rm -rf "$work/out$n"
  fi
  printf '%10d %12d %12d %14d %10s %14s\n' "$n" "$mb" "$check_s" $(( check_kb / 1024 )) "$run_s" "$run_mb"
done
