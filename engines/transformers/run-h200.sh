#!/usr/bin/env bash
# run-h200.sh OUTDIR [SHAPE...]: the whole transformers measurement on one H200.
#
# For each shape (default: 1b 8b): the protocol's sweep through extractbench,
# which starts server.py, times its load and stops it at the end; then the
# engine's own in-process ceiling on the same prompts, over the same levels in
# the same order (the batching manager captures CUDA graphs lazily, so only
# passes that met as many new batch shapes compare); then the per-level
# harness/ceiling ratio (ratio.py) and the report.
# Run from anywhere; it works in the repository root, where the lead's CGO
# build of ./extractbench must already be.
#
#   CEILING_CONCURRENCY  levels for ceiling.py (default 1,2,4,8,16,32,64,128: the
#                        protocols' sweep, in its order)
#   CEILING_REPETITIONS  passes per ceiling level (default 1; more warm the engine
#                        beyond what the sweep's single passes saw)
#   MAX_TOKENS           passed to ceiling.py when the protocol was changed too
#   SWEEP_TIMEOUT, CEILING_TIMEOUT  seconds before a step is cut (what it measured stays in results.db)
set -euo pipefail
cd "$(dirname "$0")/../.."

out=${1:?usage: run-h200.sh OUTDIR [SHAPE...]}
shift
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(1b 8b)
ceiling=${CEILING_CONCURRENCY:-1,2,4,8,16,32,64,128}
ceiling_reps=${CEILING_REPETITIONS:-1}
export PYTHONUNBUFFERED=1
mkdir -p "$out"
[ -x ./extractbench ] || { echo "run-h200.sh: ./extractbench not found in $(pwd); build it first" >&2; exit 2; }
corpus=corpus/default/documents.jsonl
[ -f "$corpus" ] || { echo "run-h200.sh: $corpus not found" >&2; exit 2; }

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
status=0
for s in "${shapes[@]}"; do
	proto=engines/transformers/protocol-$s.yaml
	[ -f "$proto" ] || { echo "run-h200.sh: no protocol for shape $s" >&2; exit 2; }
	echo "== $s: sweep $(date +%T)"
	start=$SECONDS
	timeout "${SWEEP_TIMEOUT:-1800}" ./extractbench run -quiet -protocol "$proto" -out "$out/$s" || { echo "run-h200.sh: sweep $s failed or was cut" >&2; status=1; }
	echo "== $s: sweep took $((SECONDS - start)) s; ceiling at $ceiling $(date +%T)"
	start=$SECONDS
	timeout "${CEILING_TIMEOUT:-600}" python3 engines/transformers/ceiling.py --shape "$s" --protocol "$proto" --corpus "$corpus" \
		--concurrency "$ceiling" --repetitions "$ceiling_reps" ${MAX_TOKENS:+--max-tokens "$MAX_TOKENS"} --out "$out/$s/ceiling-sweep.json" ||
		{ echo "run-h200.sh: ceiling $s failed" >&2; status=1; }
	echo "== $s: ceiling took $((SECONDS - start)) s"
	python3 engines/transformers/ratio.py "$out/$s" "$out/$s/ceiling-sweep.json" || status=1
	./extractbench report "$out/$s" || { echo "run-h200.sh: report $s failed" >&2; status=1; }
done
exit $status
