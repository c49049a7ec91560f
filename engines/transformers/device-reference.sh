#!/usr/bin/env bash
# device-reference.sh OUTDIR PACKDIR [RECIPE...]: the whole reference run in one detached session
# on the H200 (it outlives one 10-minute device call), packed into PACKDIR as at most 8 files
# under 16 MiB (what a device call can bring back): the two weight shards, the rest of the model
# directory as a tar, the run as a tar.xz, the search's logs as a tar.xz, the reproduction check,
# the GPU and software, and the log. PACKDIR.done (beside it, so that PACKDIR holds only what
# comes back) marks the end.
#
# 1. The model. With RECIPEs (train.py flags over run-real-h200.sh's recipe): recipe-search.sh
#    trains them, one per GPU, in order, until one reaches STOP_AT (default 0.9) of the held-out
#    corpus accepted, and takes the best, the committed model (its training log's held-out
#    figures) competing as r0; below MIN_ACCEPTED (default 0.8) nothing is swept. Without: the
#    committed model, or run-real-h200.sh's recipe when it is missing or RETRAIN=1.
# 2. The reproduction check (REPRODUCE=0 skips it): the model's recipe trained again from
#    scratch (both stages for the committed model, whose first stage is also checked against
#    stage1-weights.sha256), its weights' sha256 against the model's (reproduce.txt). With two
#    GPUs or more it runs on the last GPU while the sweep runs on the first, each pinned to its
#    own half of the CPU cores; with one, after the sweep.
# 3. run-real-h200.sh: sweep, ceiling of bf16, ratio, report, compare, memory, plan.
#
#   mkdir -p /tmp/ref && setsid bash engines/transformers/device-reference.sh /tmp/ref /tmp/pack '--seed 2' '--seed 3' &
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=${1:?usage: device-reference.sh OUTDIR PACKDIR [RECIPE...]}
pack=${2:?usage: device-reference.sh OUTDIR PACKDIR [RECIPE...]}
shift 2
mkdir -p "$out" "$pack"
rm -f "${pack%/}.done"
model=engines/transformers/model/extract-llama-15m
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
cores=$(nproc)
{
	echo "== device-reference.sh $(date +%T): $gpus GPU(s), $cores cores"
	flags=
	if [ $# -gt 0 ]; then
		if [ -f "$model/training-log.json" ] && [ -z "${RETRAIN:-}" ]; then
			# The committed model competes as r0 (run-real-h200.sh's recipe, so no flags; its
			# held-out figures are in its training log): a recipe must do better to replace it.
			mkdir -p "$out/search/r0" && cp -r "$model" "$out/search/r0/" && : >"$out/search/r0/flags"
		fi
		STOP_AT=${STOP_AT:-0.9} bash engines/transformers/recipe-search.sh "$out/search" "$@"
		tar -C "$out/search" -cJf "$pack/search.tar.xz" --exclude=data --exclude='*.safetensors' .
		if [ ! -f "$out/search/winner" ]; then
			echo "== no recipe finished"
			touch "${pack%/}.done"
			exit 1
		fi
		read -r win flags <"$out/search/winner"
		acc=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["heldout"]["summary"]["all"]["accepted_share"])' "$out/search/$win/extract-llama-15m/training-log.json")
		echo "== winner $win (held-out accepted $acc): $flags"
		if ! python3 -c 'import sys; sys.exit(float(sys.argv[1]) < float(sys.argv[2]))' "$acc" "${MIN_ACCEPTED:-0.8}"; then
			echo "== below MIN_ACCEPTED ${MIN_ACCEPTED:-0.8}: no sweep"
			touch "${pack%/}.done"
			exit 1
		fi
		model=$out/search/$win/extract-llama-15m
		export TRAIN_DATA=$out/search/data
	elif [ ! -f "$model/SHA256SUMS" ] || [ -n "${RETRAIN:-}" ]; then
		model=$out/model/extract-llama-15m
		MODEL=$model RETRAIN=1 TRAIN_ONLY=1 bash engines/transformers/run-real-h200.sh "$out/run"
	fi
	# A model other than the committed one never lives in the repository's tracked model
	# directory: a later device call re-sends the working tree and would put the committed
	# files back under a running sweep. It is served from where it was trained (MODEL, which
	# run-real-h200.sh passes on to the servers as EXTRACT_MODEL), and copied out at once.
	export MODEL=$model
	echo "== the model: $model"
	cp "$model"/model-0000*-of-0000*.safetensors "$pack/"
	tar -C "$model" -cf "$pack/model-rest.tar" --exclude='model-0000*' .

	reproduce() { # the model's recipe again, from scratch, into /tmp/reproduce
		rm -rf /tmp/reproduce
		local stage1_sums=$PWD/engines/transformers/stage1-weights.sha256
		# The committed model: both stages of run-real-h200.sh's recipe; a searched recipe: its one stage.
		MODEL=/tmp/reproduce/extract-llama-15m RETRAIN=1 TRAIN_ONLY=1 STAGES=$([ -n "$flags" ] && echo 1 || echo 2) \
			TRAIN_ARGS="--heldout-limit 9 --workdir ${TRAIN_DATA:-/tmp/extract-train} $flags" \
			bash engines/transformers/run-real-h200.sh /tmp/reproduce/log >/tmp/reproduce.log 2>&1
		{
			echo "recipe: run-real-h200.sh's + ${flags:-(nothing)}; GPU ${CUDA_VISIBLE_DEVICES:-0} of $gpus"
			(cd "$model" && sha256sum model-0000*.safetensors) | sed 's/^/model      /'
			(cd /tmp/reproduce/extract-llama-15m && sha256sum model-0000*.safetensors) 2>&1 | sed 's/^/retrained  /'
			if cmp -s <(cd "$model" && sha256sum model-0000*.safetensors) <(cd /tmp/reproduce/extract-llama-15m && sha256sum model-0000*.safetensors); then
				echo "SAME weights, bit for bit"
			else
				echo "DIFFERENT weights"
				tail -5 /tmp/reproduce.log
			fi
			stage1=/tmp/reproduce/log/stage-1/extract-llama-15m
			if [ -d "$stage1" ]; then # the first stage, which the second starts from: the pinned weights?
				(cd "$stage1" && sha256sum --check --quiet --status <(grep -v '^#' "$stage1_sums")) &&
					echo "stage 1: the weights of stage1-weights.sha256, bit for bit" || echo "stage 1: not the weights of stage1-weights.sha256"
			fi
		} >"$pack/reproduce.txt"
		echo "== reproduction: $(grep -E '^(SAME|DIFFERENT)|^stage 1' "$pack/reproduce.txt" | tr '\n' ' ')$(date +%T)"
	}
	sweep_cpus='' reproducing=''
	if [ "${REPRODUCE:-1}" != 0 ] && [ "$gpus" -ge 2 ] && command -v taskset >/dev/null; then
		sweep_cpus="taskset -c 0-$((cores / 2 - 1))"
		(
			export CUDA_VISIBLE_DEVICES=$((gpus - 1))
			taskset -cp "$((cores / 2))-$((cores - 1))" "$BASHPID" >/dev/null # its children inherit the cores
			reproduce
		) &
		reproducing=$!
		echo "== reproducing on GPU $((gpus - 1)), cores $((cores / 2))-$((cores - 1)), while the sweep runs on GPU 0, cores 0-$((cores / 2 - 1))"
	fi
	# shellcheck disable=SC2086 # sweep_cpus is a command prefix or nothing
	CUDA_VISIBLE_DEVICES=0 CEILING_VARIANTS=bf16 CEILING_CONCURRENCY=1,2,8,32,128 CEILING_LIMIT=100 CEILING_REPETITIONS=3 SWEEP_TIMEOUT=600 \
		$sweep_cpus bash engines/transformers/run-real-h200.sh "$out/run"
	echo "== run-real-h200.sh exit $? $(date +%T)"
	if [ -n "$reproducing" ]; then
		wait "$reproducing"
	elif [ "${REPRODUCE:-1}" != 0 ]; then
		CUDA_VISIBLE_DEVICES=0 reproduce
	fi
	rm -f "$out/run/sweep/results.db-wal" "$out/run/sweep/results.db-shm"
	tar -C "$out/run" -cJf "$pack/run.tar.xz" .
	nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >"$pack/gpu.txt" 2>&1
	python3 -c 'import torch, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__)' >>"$pack/gpu.txt" 2>&1
	ls -la "$pack"
} >"$pack/device.log" 2>&1
touch "${pack%/}.done"
