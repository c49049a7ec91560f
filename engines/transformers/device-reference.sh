#!/usr/bin/env bash
# device-reference.sh OUTDIR PACKDIR: the whole reference run in one detached session on the
# H200 (it outlives one 10-minute device call): retrain the model (TRAIN_ARGS below), then
# run-real-h200.sh (sweep, ceiling of bf16, ratio, report, compare, memory, plan), then pack
# what is committed into PACKDIR as at most 8 files under 16 MiB: the two weight shards, the
# rest of the model directory as a tar, the run as a tar.xz, and the log. Between training and
# sweep, the determinism check: two short trainings whose weights must hash the same
# (determinism-a.txt, determinism-b.txt). DONE marks the end.
#
#   mkdir -p /tmp/ref && setsid bash engines/transformers/device-reference.sh /tmp/ref /tmp/pack &
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: device-reference.sh OUTDIR PACKDIR}
pack=${2:?usage: device-reference.sh OUTDIR PACKDIR}
mkdir -p "$out" "$pack"
model=engines/transformers/model/extract-llama-15m
{
	# Train first (run-real-h200.sh's reference recipe) and copy the weights out at once: a
	# later device call re-sends the working tree, and the model must not depend on surviving it.
	RETRAIN=1 TRAIN_ONLY=1 bash engines/transformers/run-real-h200.sh "$out/run"
	cp "$model"/model-0000*-of-0000*.safetensors "$pack/"
	tar -C "$model" -cf "$pack/model-rest.tar" --exclude='model-0000*' .
	# The determinism check, before the sweep (nothing else on the GPU): the recipe's first 300
	# steps twice; strict deterministic algorithms must give the same weights both times.
	for t in a b; do
		MODEL=/tmp/determinism-$t/extract-llama-15m RETRAIN=1 TRAIN_ONLY=1 TRAIN_ARGS="--steps 300 --heldout-limit 9" \
			bash engines/transformers/run-real-h200.sh /tmp/determinism-$t/log >/dev/null 2>&1
		(cd /tmp/determinism-$t/extract-llama-15m && sha256sum model-0000*.safetensors) >"$pack/determinism-$t.txt" 2>&1
	done
	cmp "$pack/determinism-a.txt" "$pack/determinism-b.txt" && echo "== determinism: two 300-step trainings gave the same weights" ||
		echo "== determinism: two 300-step trainings gave DIFFERENT weights"
	cat "$pack/determinism-a.txt" "$pack/determinism-b.txt"
	CEILING_VARIANTS=bf16 CEILING_CONCURRENCY=1,2,8,32,128 CEILING_LIMIT=100 CEILING_REPETITIONS=3 SWEEP_TIMEOUT=480 \
		bash engines/transformers/run-real-h200.sh "$out/run"
	echo "== run-real-h200.sh exit $? $(date +%T)"
	rm -f "$out/run/sweep/results.db-wal" "$out/run/sweep/results.db-shm"
	tar -C "$out/run" -cJf "$pack/run.tar.xz" .
	nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >"$pack/gpu.txt" 2>&1
	python3 -c 'import torch, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__)' >>"$pack/gpu.txt" 2>&1
	ls -la "$pack"
} >"$pack/device.log" 2>&1
touch "$pack/DONE"
