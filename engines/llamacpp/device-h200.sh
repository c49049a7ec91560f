#!/usr/bin/env bash
# device-h200.sh CARRY PACKDIR: the llama.cpp reference on one H200, as one detached job.
#
# CARRY holds what this machine cannot make: llama-src.tar.xz (pack-source.sh) and
# extractbench.xz (CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" ./cmd/extractbench, then
# xz). In order, each step timed in PACKDIR/steps.txt:
#   1. build.sh --cuda (sm_90, 16 jobs) from the unpacked source;
#   2. gguf.sh bf16 q8_0 q4_0: the GGUFs, checked against gguf.sha256 (the CPU-made pins);
#   3. llama-bench of each (pp2048, tg32, 5 repetitions, all layers on the GPU): llama.cpp's own
#      ceiling;
#   4. extractbench run -protocol engines/llamacpp/protocol-h200.yaml (128 slots of 8,192 tokens);
#   5. the run's results.db (xz), report.md and stdout, the GPU's identity.
# PACKDIR.done appears when it ends (its content: the exit status). At most 8 files land in
# PACKDIR, what one device call brings back.
set -uo pipefail
carry="$(cd "${1:?usage: device-h200.sh CARRY PACKDIR}" && pwd)"
pack="${2:?usage: device-h200.sh CARRY PACKDIR}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rm -f "$pack.done"
mkdir -p "$pack"
work="$(mktemp -d /tmp/llh200.XXXXXX)"
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
finish() { echo "$1" >"$pack.done"; exit "$1"; }

{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  nvcc --version | tail -n 2
  nproc
  uname -r
} >"$pack/env.txt" 2>&1

tar -xJf "$carry/llama-src.tar.xz" -C "$work" || finish 1
xz -dc "$carry/extractbench.xz" >"$work/extractbench" && chmod +x "$work/extractbench" || finish 1
export LLAMACPP_SRC="$work/llama.cpp" LLAMACPP_JOBS=16 LLAMACPP_CACHE="$work/cache" PYTHON=python3

step build bash -c "'$here/build.sh' --cuda >'$work/bin.txt' 2>'$work/build.log'" || { tail -n 40 "$work/build.log" >"$pack/build-tail.log"; finish 1; }
bin="$(tail -n 1 "$work/bin.txt")"
export LLAMACPP_BIN="$bin"
step gguf bash -c "'$here/gguf.sh' bf16 q8_0 q4_0 >'$work/gguf.txt' 2>>'$pack/steps.txt'" || finish 1

for g in $(cat "$work/gguf.txt"); do
  echo "## $(basename "$g")" >>"$pack/llama-bench.md"
  step "bench $(basename "$g")" bash -c "'$bin/llama-bench' -m '$g' -ngl 99 -p 2048 -n 32 -r 5 -o md >>'$pack/llama-bench.md' 2>>'$work/bench.log'"
done

cd "$root" || finish 1
export LLAMACPP_PARALLEL=128 LLAMACPP_CTX=1048576
step run bash -c "'$work/extractbench' run -protocol engines/llamacpp/protocol-h200.yaml -out '$work/run' >'$pack/run-stdout.txt' 2>'$work/run.log'"
rc=$?
tail -n 60 "$work/run.log" >"$pack/run-tail.log"
cp "$work/run/report.md" "$pack/" 2>/dev/null
xz -T4 -9 -c "$work/run/results.db" >"$pack/results.db.xz" 2>/dev/null
finish "$rc"
