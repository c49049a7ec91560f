#!/usr/bin/env bash
# device-cache.sh CARRY PACKDIR: issue 38's cache isolation on one H200, as one detached job.
#
# The committed llama.cpp protocol (retrain-protocol-h200.yaml as reference/h200/
# llamacpp-extract-llama-15m ran it: the committed model's BF16 GGUF on a CUDA llama-server,
# -ngl 99 --cache-ram 0, 128 slots of 8,192 tokens, levels 1, 8, 128, 3 repetitions, 8 warm-up
# requests), its bf16 variant only, run RESET_RUNS times (default 3) with cache: reset and
# KEEP_RUNS times (default 1) with cache: keep, each run its own llama-server started afresh by
# the protocol. serve.sh starts it with --slot-save-path (without it llama-server b1-de3ff81
# refuses POST /slots/{id}?action=erase with 501) and --slots (on by default in this build).
# CACHE_RAM_RUN=1 adds one more cache: reset run with llama-server's default host-memory prompt
# cache (--cache-ram 8192 instead of 0), which no endpoint empties: it shows what a slot erase
# leaves there.
#
# CARRY holds what the machine cannot make: llama-src.tar.xz (engines/llamacpp/pack-source.sh)
# and extractbench.xz (CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" ./cmd/extractbench,
# then xz). Each step is timed in PACKDIR/steps.txt; PACKDIR.done appears at the end, holding the
# exit status. At most 6 files land in PACKDIR:
#   steps.txt    each step's seconds and exit status
#   env.txt      the GPU, driver, CUDA, cores, kernel
#   passes.tsv   one line a pass of every run: run, cache, level, repetition, cache_reset,
#                cached_prompt_share, output tok/s, TTFT p50, E2E p50 (ms), accepted
#   levels.txt   each run's summary as it printed it (the level table with each level's
#                verdict, NOT STEADY and CACHE labels, the variant's state and recommendations),
#                then its cache_reset events, first and last
#   runs.tar.xz  every run's results.db, report.md and llama-server's log
#   build-tail.log  only when the build failed
#
# Run it detached; the job outlives the device call that starts it, and PACKDIR must be a path
# that stays (not $OUT, which is each call's own):
#
#   setsid nohup bash engines/llamacpp/device-cache.sh .llcarry /tmp/dcache/pack \
#     >/tmp/dcache.out 2>&1 </dev/null &
#
# then poll in calls chained within the machine's idle release, each failing fast on a fresh
# machine: [ -d /tmp/dcache ] || { echo "a fresh machine: the job is gone"; exit 3; }
# and when /tmp/dcache/pack.done exists: cp /tmp/dcache/pack/* "$OUT"/
# About 7 min of build, then about 2 min a run (the reference's 45 passes took 476 s; a run here
# has 9): about 15 min in all for 4 runs.
set -uo pipefail
carry="$(cd "${1:?usage: device-cache.sh CARRY PACKDIR}" && pwd)"
pack="${2:?usage: device-cache.sh CARRY PACKDIR}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rm -f "${pack%/}.done"
mkdir -p "$pack"
pack="$(cd "$pack" && pwd)"
# WORK: an earlier job's work folder, to reuse its build (build.sh keeps a bin folder that holds
# the binaries) after a failed run.
work="${WORK:-$(mktemp -d /tmp/llcache.XXXXXX)}"
steps="$pack/steps.txt"
: >"$steps"
step() { # step NAME CMD...: runs CMD, logging its time and status
  local name="$1" t0=$SECONDS rc
  shift
  "$@"
  rc=$?
  echo "$name: $((SECONDS - t0)) s, exit $rc" >>"$steps"
  return $rc
}
pack_up() {
  [[ -d "$work/runs" ]] && tar -C "$work" -cJf "$pack/runs.tar.xz" --exclude='*.parquet' --exclude='*.csv' --exclude='.extractbench.lock' runs 2>/dev/null
}
finish() { pack_up; echo "$1" >"${pack%/}.done"; exit "$1"; }

{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  nvcc --version | tail -n 2
  echo "cores $(nproc); kernel $(uname -r)"
} >"$pack/env.txt" 2>&1

tar -xJf "$carry/llama-src.tar.xz" -C "$work" || finish 1
xz -dc "$carry/extractbench.xz" >"$work/extractbench" && chmod +x "$work/extractbench" || finish 1
eb="$work/extractbench"
export LLAMACPP_SRC="$work/llama.cpp" LLAMACPP_JOBS="${LLAMACPP_JOBS:-16}" LLAMACPP_CACHE="$work/cache" PYTHON=python3

step build bash -c "'$here/build.sh' --cuda >'$work/bin.txt' 2>'$work/build.log'" ||
  { tail -n 40 "$work/build.log" >"$pack/build-tail.log"; finish 1; }
LLAMACPP_BIN="$(tail -n 1 "$work/bin.txt")"
export LLAMACPP_BIN
# The committed model's BF16 GGUF, checked against the committed pin (gguf.sha256).
step gguf bash -c "'$here/gguf.sh' bf16 >'$work/gguf.txt' 2>>'$steps'" || finish 1
"$LLAMACPP_BIN/llama-server" --help 2>&1 | grep -E -- '--slots|--slot-save-path|--cache-ram' >>"$pack/env.txt"

# protocol CACHE CACHE_RAM OUT: the committed protocol's header and bf16 variant, with the cache
# key and llama-server's --cache-ram as given. OUT sits beside the committed protocol, so that
# its relative paths (the tokenizer) resolve as they do there.
protocol() {
  awk -v cache="$1" '
    /^  - name: / && seen++ { exit }       # the second variant ends the bf16 one
    /^name: / { print "name: llamacpp-h200-cache-" cache; next }
    /^description: / { print "description: \"the committed extract-llama-15m as BF16 GGUF on a CUDA llama-server, levels 1, 8, 128, 3 repetitions, cache " cache " (device-cache.sh)\""; next }
    /^variants:/ { print "cache: " cache }
    { print }' "$here/retrain-protocol-h200.yaml" | sed -e "s#--cache-ram 0#--cache-ram $2#" >"$3"
}

cd "$root" || finish 1
export LLAMACPP_PARALLEL=128 LLAMACPP_CTX=1048576 LLAMACPP_SLOT_DIR="$work/slots"
runs=()
for i in $(seq 1 "${RESET_RUNS:-3}"); do runs+=("reset-$i:reset:0"); done
for i in $(seq 1 "${KEEP_RUNS:-1}"); do runs+=("keep-$i:keep:0"); done
[[ "${CACHE_RAM_RUN:-0}" == 1 ]] && runs+=("reset-cacheram:reset:8192")
mkdir -p "$work/runs"
status=0
for r in "${runs[@]}"; do
  IFS=: read -r label cache ram <<<"$r"
  out="$work/runs/$label"
  proto="$here/.device-cache-$label.yaml"
  protocol "$cache" "$ram" "$proto"
  step "run $label (cache: $cache, --cache-ram $ram)" "$eb" run -quiet -protocol "$proto" -out "$out" \
    >"$work/stdout-$label.txt" 2>"$work/stderr-$label.txt" || status=2
  mv "$proto" "$out/protocol.yaml" 2>/dev/null
  cp "$work/stdout-$label.txt" "$work/stderr-$label.txt" "$out/" 2>/dev/null
  for log in "$out"/engine-*.log; do [[ -f "$log" ]] && xz -T4 "$log"; done
  {
    echo "==== $label (cache: $cache, --cache-ram $ram)"
    cat "$work/stdout-$label.txt"
    tail -n 5 "$work/stderr-$label.txt"
  } >>"$pack/levels.txt"
done

# Per pass, every run: the cached share beside output tok/s (and the latencies it moves).
step passes python3 - "$work/runs" >"$pack/passes.tsv" 2>>"$steps" <<'EOF'
import os, sqlite3, sys
root = sys.argv[1]
print("\t".join(["run", "cache", "level", "repetition", "cache_reset", "cached_prompt_share",
                 "output_tok_s", "ttft_p50_ms", "e2e_p50_ms", "accepted", "docs"]))
events = []
for run in sorted(os.listdir(root)):
    db = os.path.join(root, run, "results.db")
    if not os.path.exists(db):
        continue
    con = sqlite3.connect(db)
    cache = con.execute("SELECT json_extract(manifest, '$.cache') FROM runs").fetchone()[0]
    cols = [r[1] for r in con.execute("PRAGMA table_info(passes)")]
    reset = "cache_reset" if "cache_reset" in cols else "NULL"
    for row in con.execute(f"""SELECT level, repetition, {reset}, cached_prompt_share, output_tokens_per_s,
            ttft_p50_ns / 1e6, e2e_p50_ns / 1e6, accepted, docs FROM passes ORDER BY level, repetition"""):
        lvl, rep, cr, share, tps, ttft, e2e, acc, docs = row
        f = lambda v, fmt: "" if v is None else fmt % v
        print("\t".join([run, str(cache), str(lvl), str(rep), str(cr or ""), f(share, "%.4f"), f(tps, "%.1f"),
                         f(ttft, "%.2f"), f(e2e, "%.2f"), str(acc), str(docs)]))
    es = con.execute("SELECT detail FROM events WHERE kind = 'cache_reset' ORDER BY at_ms, rowid").fetchall()
    events.append((run, len(es), es[:1] + es[-1:]))
with open(os.path.join(root, "..", "cache-events.txt"), "w") as out:
    for run, n, some in events:
        out.write(f"==== {run}: {n} cache_reset events (first, last)\n")
        for (d,) in some:
            out.write(d[:600] + "\n")
EOF
cat "$work/cache-events.txt" >>"$pack/levels.txt" 2>/dev/null
finish "$status"
