#!/usr/bin/env bash
# run-real-h200.sh OUTDIR: the reference run of the trained extraction model on one H200.
#
# 1. The model (engines/transformers/model/extract-llama-15m, committed): its files are checked
#    against SHA256SUMS; when the directory is missing (or RETRAIN=1) train.py makes it again
#    first, offline, with the two-stage recipe below (about 7 minutes; README.md, "Reproducing").
# 2. The sweep: ./extractbench run with protocol-real.yaml (bf16, fp8, int8 in turn, each a
#    fresh server.py on port 8000; levels 1-128, 3 repetitions, strict parsing).
# 3. The engine's own ceiling (ceiling.py) per variant over the same levels, in process,
#    CEILING_REPETITIONS passes per level; then ratio.py --median per variant: the
#    harness/ceiling ratio per level as a median and a range.
# 4. The report (extractbench report), compare, memory, plan, and agree.py against the CPU
#    reference's answers when one is committed for these weights.
# Run from anywhere; it works in the repository root, where ./extractbench must already be
# (CGO_ENABLED=1 go build -o extractbench ./cmd/extractbench), or .devcarry/extractbench.gz.
#
#   TRAIN_ARGS           more train.py flags when training (RETRAIN=1 or no model), both stages
#   STAGES               1: train the first stage only (default 2)
#   TRAIN_ONLY           stop after training
#   MODEL                the model directory (default engines/transformers/model/extract-llama-15m,
#                        the committed one); the sweep's servers load it (EXTRACT_MODEL in
#                        protocol-real.yaml's start commands), as do the ceiling and the calculator
#   CEILING_VARIANTS     variants whose ceiling is measured (default: bf16 fp8 int8)
#   CEILING_REPETITIONS  passes per ceiling level (default 3)
#   CEILING_LIMIT        documents per ceiling pass, in the corpus's class proportions
#                        (default 100, to keep the whole run near 13 minutes; 0 = all 300)
#   CEILING_CONCURRENCY  ceiling levels (default the protocol's, 1,2,4,8,16,32,64,128)
#   SWEEP_TIMEOUT, CEILING_TIMEOUT  seconds before a step is cut
#   PROTOCOL             the sweep's protocol (default protocol-real.yaml; device-retrain.sh: protocol-retrain-h200.yaml)
set -euo pipefail
cd "$(dirname "$0")/../.."

out=${1:?usage: run-real-h200.sh OUTDIR}
here=engines/transformers
model=${MODEL:-$here/model/extract-llama-15m}
export EXTRACT_MODEL=$model
root=$(pwd)
proto=${PROTOCOL:-$here/protocol-real.yaml}
corpus=corpus/default/documents.jsonl
levels=${CEILING_CONCURRENCY:-1,2,8,32,128}
reps=${CEILING_REPETITIONS:-3}
limit=${CEILING_LIMIT:-100}
export PYTHONUNBUFFERED=1
# The tree with the model is about 36 MB, so a device call can carry the binary only gzipped
# (build with -ldflags "-s -w", gzip -9 into .devcarry/extractbench.gz, carry .devcarry).
if [ ! -x ./extractbench ] && [ -f .devcarry/extractbench.gz ]; then
	gunzip -c .devcarry/extractbench.gz >./extractbench && chmod +x ./extractbench
fi
[ -x ./extractbench ] || { echo "run-real-h200.sh: ./extractbench not found in $(pwd); build it first" >&2; exit 2; }
[ -f "$corpus" ] || { echo "run-real-h200.sh: $corpus not found" >&2; exit 2; }
mkdir -p "$out"

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
if [ ! -f "$model/SHA256SUMS" ] || [ -n "${RETRAIN:-}" ]; then
	# The committed model's recipe (recipe.sh), two stages, about 16 minutes on an H200. TRAIN_ARGS come last in each, so they override it (argparse keeps the last
	# value). STAGES=1: the first stage only, into $model (recipe-search.sh's from-scratch
	# recipes; the weights of stage1-weights.sha256).
	stage1=$model
	[ "${STAGES:-2}" = 1 ] || stage1=$out/stage-1/$(basename "$model")
	# shellcheck source=recipe.sh
	. "$here/recipe.sh"
	echo "== training $stage1 (stage 1: from scratch) $(date +%T)"
	python3 $here/train.py --extractbench ./extractbench --out "$stage1" "${RECIPE_STAGE1[@]}" ${TRAIN_ARGS:-} 2>&1 | tee "$out/train.log"
	if [ "${STAGES:-2}" != 1 ]; then
		echo "== training $model (stage 2: from $stage1) $(date +%T)"
		python3 $here/train.py --extractbench ./extractbench --out "$model" --init "$stage1" "${RECIPE_STAGE2[@]}" ${TRAIN_ARGS:-} 2>&1 | tee "$out/train-stage-2.log"
	fi
	[ -z "${TRAIN_ONLY:-}" ] || exit 0
fi
echo "== checking $model against its SHA256SUMS"
(cd "$model" && sha256sum --check --quiet SHA256SUMS) || { echo "run-real-h200.sh: $model differs from its SHA256SUMS" >&2; exit 2; }
echo "model sha256 (of SHA256SUMS, as /version reports it): $(sha256sum "$model/SHA256SUMS" | cut -d' ' -f1)"
if (cd "$model" && sha256sum --check --quiet --status <(grep -v '^#' "$root/$here/reference-weights.sha256")); then
	echo "the weights are the reference run's (reference-weights.sha256)"
else
	echo "NOTE: these are not the weights the committed reference run measured (reference-weights.sha256): its figures are not theirs"
fi

status=0
echo "== sweep $(date +%T)"
start=$SECONDS
timeout "${SWEEP_TIMEOUT:-1500}" ./extractbench run -quiet -protocol "$proto" -out "$out/sweep" || { echo "run-real-h200.sh: sweep failed, was cut, or a verdict failed" >&2; status=1; }
echo "== sweep took $((SECONDS - start)) s"
for q in ${CEILING_VARIANTS:-bf16 fp8 int8}; do
	echo "== ceiling $q at $levels, $reps repetitions, $limit documents $(date +%T)"
	start=$SECONDS
	timeout "${CEILING_TIMEOUT:-600}" python3 $here/ceiling.py --model "$model" --quant "$q" --protocol "$proto" --corpus "$corpus" \
		--concurrency "$levels" --repetitions "$reps" --limit "$limit" --out "$out/ceiling-$q.json" ||
		{ echo "run-real-h200.sh: ceiling $q failed" >&2; status=1; }
	echo "== ceiling $q took $((SECONDS - start)) s"
	python3 $here/ratio.py "$out/sweep" "$out/ceiling-$q.json" --variant "$q" --median || status=1
done
./extractbench report "$out/sweep" || { echo "run-real-h200.sh: report failed" >&2; status=1; }
# The paired verdicts (is fp8 / int8 equivalent to bf16?) and the calculator beside the
# measured peaks, each variant predicted with its own weight precision.
for q in fp8 int8; do
	rc=0
	./extractbench compare "$out/sweep:bf16" "$out/sweep:$q" >"$out/compare-bf16-$q.txt" 2>&1 || rc=$?
	echo "== compare bf16 vs $q: exit $rc (0 equivalent, 1 not)"
	./extractbench compare -json "$out/sweep:bf16" "$out/sweep:$q" >"$out/compare-bf16-$q.json" 2>/dev/null || true
done
# A second opinion on the engine's answers: the CPU reference's for the same weights, when one
# is committed (cpu_reference.py --out; its model_sha256 must be this model's): the committed
# model's, or the first stage's.
sha=$(sha256sum "$model/SHA256SUMS" | cut -d' ' -f1)
cpu=
for c in ${CPU_REFERENCE:-reference/cpu/extract-llama-15m/cpu-default.json}; do
	if [ -f "$c" ] && python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])).get("model_sha256") != sys.argv[2])' "$c" "$sha"; then
		cpu=$c
		break
	fi
done
if [ -n "$cpu" ]; then
	for q in bf16 fp8 int8; do
		python3 $here/agree.py "$out/sweep" "$cpu" --variant "$q" --level 1 >"$out/agree-$q.txt" 2>&1 || true
		head -3 "$out/agree-$q.txt"
	done
else
	echo "== no committed CPU reference for these weights (model_sha256 ${sha:0:12}): agree.py not run"
fi
./extractbench memory -model "$model" -context 8192 "$out/sweep" >"$out/memory.txt" 2>&1 || status=1
./extractbench plan "$out/sweep" >"$out/plan.txt" 2>&1 || true
exit $status
