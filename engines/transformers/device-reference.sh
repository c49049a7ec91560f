#!/usr/bin/env bash
# device-reference.sh OUTDIR PACKDIR: the whole reference run in one detached session on the
# H200 (it outlives one 10-minute device call): retrain the model (TRAIN_ARGS below), then
# run-real-h200.sh (sweep, ceiling of bf16, ratio, report, compare, memory, plan), then pack
# what is committed into PACKDIR as at most 8 files under 16 MiB: the two weight shards, the
# rest of the model directory as a tar, the run as a tar.xz, and the log. DONE marks the end.
#
#   mkdir -p /tmp/ref && setsid bash engines/transformers/device-reference.sh /tmp/ref /tmp/pack &
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: device-reference.sh OUTDIR PACKDIR}
pack=${2:?usage: device-reference.sh OUTDIR PACKDIR}
mkdir -p "$out" "$pack"
model=engines/transformers/model/extract-llama-15m
{
	# Short and usual documents first (the long ones of the first 40 chunks are skipped):
	# more answers per optimiser step, so the model sees ~4x more of them than the first
	# training did in the same time.
	RETRAIN=1 TRAIN_ARGS="--seeds 1000:1800 --long-skip-chunks 40 --steps 2200 --max-seconds 230 --lm-weight 0.3 --heldout-limit 90" \
		CEILING_VARIANTS=bf16 CEILING_CONCURRENCY=1,2,8,32,128 CEILING_LIMIT=100 CEILING_REPETITIONS=3 SWEEP_TIMEOUT=480 \
		bash engines/transformers/run-real-h200.sh "$out/run"
	echo "== run-real-h200.sh exit $? $(date +%T)"
	cp "$model"/model-0000*-of-0000*.safetensors "$pack/"
	tar -C "$model" -cf "$pack/model-rest.tar" --exclude='model-0000*' .
	rm -f "$out/run/sweep/results.db-wal" "$out/run/sweep/results.db-shm"
	tar -C "$out/run" -cJf "$pack/run.tar.xz" .
	nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >"$pack/gpu.txt" 2>&1
	python3 -c 'import torch, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__)' >>"$pack/gpu.txt" 2>&1
	ls -la "$pack"
} >"$pack/device.log" 2>&1
touch "$pack/DONE"
