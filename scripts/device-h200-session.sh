#!/usr/bin/env bash
# device-h200-session.sh WORK: one lent H200 session's GPU work as one detached job, inside a
# fixed device-time budget, two packs that come back in two device calls:
#
#   WORK/mpack  issue 30's memory boundary (engines/transformers/device-margin.sh), on the GPU
#               first; killed at MARGIN_LIMIT seconds (default 1000) if it has not ended, its
#               runs so far packed all the same (runs.tar.xz, device.log, steps.txt);
#   WORK/lpack  issue 24's llama.cpp reference of the committed model
#               (engines/llamacpp/device-retrain.sh with COMMITTED=1): its CUDA build runs
#               (niced) while the margin job has the GPU, its steps after the build wait for WORK/gpu-free;
#               the sweep is interrupted at SESSION_LIMIT seconds (default 1450) after the start;
#               plus the float32 CPU reference of the committed weights (cpu_reference.py, 4
#               threads, niced, beside the margin job: answers, not timings, are its point):
#               cpu-default.json, cpu-default.txt.
#
# WORK/mpack.done and WORK/lpack.done mark each pack's end; WORK/session.log says what ran.
# The repository root must hold .llcarry/llama-src.tar.xz (engines/llamacpp/pack-source.sh) and
# .llcarry/extractbench.xz (CGO_ENABLED=1 go build -trimpath -ldflags "-s -w", then xz): it is
# unpacked once as ./extractbench, which both jobs run.
#
#   setsid nohup bash scripts/device-h200-session.sh /tmp/s >/tmp/s.out 2>&1 </dev/null &
#
# Poll it in device calls chained within the machine's idle release (30 s), and make every poll
# fail fast on a fresh machine, where the job and its files are gone:
#   [ -d /tmp/s ] || { echo "a fresh machine: the job is gone"; exit 3; }
# (2026-12-02: a poll that waited on a released machine spent 575 s of device time on nothing
# and the llama.cpp pack it was waiting for was lost with the machine.)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${1:?usage: device-h200-session.sh WORK}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
cd "$root" || exit 1
start=$(date +%s)
margin_limit=${MARGIN_LIMIT:-1000}
session_limit=${SESSION_LIMIT:-1450}
log() { echo "== $(date +%T) +$(($(date +%s) - start)) s $*" >>"$work/session.log"; }
rm -f "$work/gpu-free" "$work/mpack.done" "$work/lpack.done"
xz -dc .llcarry/extractbench.xz >extractbench.tmp && chmod +x extractbench.tmp && mv -f extractbench.tmp extractbench || { log "no .llcarry/extractbench.xz"; exit 2; }
mkdir -p "$work/lpack"

log "llama.cpp job (COMMITTED=1), its GPU steps after $work/gpu-free"
(COMMITTED=1 GPU_AFTER="$work/gpu-free" SWEEP_DEADLINE=$((start + session_limit)) \
  bash engines/llamacpp/device-retrain.sh .llcarry "$work/llwork" "$work/lpack" >"$work/lpack/device.log" 2>&1) &
ll=$!

log "CPU reference (cpu_reference.py, 4 threads, nice 10)"
(nice -n 10 python3 engines/transformers/cpu_reference.py --model engines/transformers/model/extract-llama-15m \
  --threads 4 --out "$work/lpack/cpu-default.json" >"$work/lpack/cpu-default.txt" 2>&1
  echo "cpu_reference.py: exit $?, $(($(date +%s) - start)) s after the start" >>"$work/session.log") &
cpuref=$!

log "margin job (limit $margin_limit s)"
mkdir -p "$work/margin"
(bash engines/transformers/device-margin.sh "$work/margin" "$work/mpack" >"$work/margin.out" 2>&1) &
mj=$!
while kill -0 "$mj" 2>/dev/null && [ $(($(date +%s) - start)) -lt "$margin_limit" ]; do sleep 2; done
if kill -0 "$mj" 2>/dev/null; then
  log "margin job over its limit: stopped; its runs so far packed"
  # The job's shell first, so that it cannot start its next level while its engine is being
  # stopped (2026-12-02: a level started then had every request refused, filed memory); then
  # the run (SIGINT: what it measured stays), then the engine.
  kill "$mj" 2>/dev/null
  pkill -f device-margin.sh 2>/dev/null
  pkill -INT -f 'extractbench run' 2>/dev/null
  sleep 5
  pkill -f 'engines/transformers/server.py' 2>/dev/null
  sleep 3
  find "$work/margin" \( -name 'results.db-wal' -o -name 'results.db-shm' \) -exec rm -f {} +
  tar -C "$work/margin" -cJf "$work/mpack/runs.tar.xz" --exclude=extractbench --exclude=corpus-gen --exclude='corpus-long*' --exclude=corpus-classes --exclude=.extractbench.lock .
  echo "stopped at the session's limit ($margin_limit s)" >>"$work/mpack/steps.txt"
  touch "$work/mpack.done"
fi
wait "$mj" 2>/dev/null
log "margin job ended; the GPU is the llama.cpp job's"
touch "$work/gpu-free"
wait "$cpuref"
wait "$ll"
log "llama.cpp job ended: status $(cat "$work/lpack.done" 2>/dev/null)"
cp "$work/session.log" "$work/lpack/"
touch "$work/lpack.done.all"
