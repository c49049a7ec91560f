#!/usr/bin/env bash
# device-retrain.sh CARRY WORK PACKDIR: issue 24's retrain on one H200, as one detached job.
#
# The model of engines/transformers/model/extract-llama-15m retrained with the tokenizer every
# engine reproduces (engines/transformers/retrain/tokenizer.json: no normalizer, superbpe's
# splits; the chat template collapses the spaces) and widths llama.cpp's k-quants accept
# (recipe.sh: --shape h512d8, hidden 512, MLP 768, 8 layers, 17.5M parameters), then measured on
# both engines. CARRY holds what the GPU machine cannot make: llama-src.tar.xz (pack-source.sh)
# and extractbench.xz (CGO_ENABLED=1 go build -trimpath -ldflags "-s -w" ./cmd/extractbench, xz).
# Each step is timed in PACKDIR/steps.txt; PACKDIR.done holds the exit status at the end.
#   1. the CUDA llama.cpp build (build.sh --cuda, nice 19, LLAMACPP_JOBS) in the background,
#      while the corpora are generated and the model trained;
#   2. stage 1 for each of CANDIDATES (default h512d8:2; all at once, on GPU i mod the
#      GPUs there are, and the better held-out share is kept), stage 2 from it: the committed
#      model's two-stage recipe (engines/transformers/recipe.sh);
#   3. the held-out figures (heldout.txt; below MIN_HELDOUT, default 0.90, the sweeps still run
#      and the job ends with status 3);
#   4. the GGUF ladder (gguf.sh bf16 f16 q8_0 q6_k q4_k_m q4_0, sha256 recorded): any
#      llama-quantize fallback fails the job;
#   5. zero token drift: compare_tokens.py against the CUDA llama-server, the Python tokenizers
#      library and cpu_reference.py's BPE over corpus/default and the held-out corpus (tokens.md);
#   6. llama-bench of each GGUF (pp2048, tg32, 3 repetitions);
#   7. the transformers reference (run-real-h200.sh with protocol-retrain-h200.yaml: bf16, fp8,
#      int8 at levels 1, 8, 128, 3 repetitions; the ceiling of bf16 only, 100 documents);
#   8. the llama.cpp sweep (retrain-protocol-h200.yaml: the five GGUFs at levels 1, 8, 128,
#      3 repetitions, 128 slots), then prompt_tokens_agree.py between the two sweeps.
# COMMITTED=1 trains nothing: the committed model (engines/transformers/model/extract-llama-15m)
# is measured as it is, its GGUFs checked against the committed pins (gguf.sha256), and the
# transformers sweep (already committed with the weights) is left out: steps 1, 4-6 and 8.
# SWEEP_TIMEOUT (seconds, default 0: none) or SWEEP_DEADLINE (an epoch second) interrupts the
# llama.cpp sweep (SIGINT: what it measured stays, resumable) so that a slow engine cannot spend
# the job's device time. GPU_AFTER=FILE holds the steps after the build (llama-quantize's CUDA build takes GPU memory too) until FILE
# exists: another job has the GPU until then (scripts/device-h200-session.sh).
# TRAIN_ONLY=1 stops after step 3 (a recipe search; no llama.cpp source needed in CARRY). The
# stages are the committed model's recipe (engines/transformers/recipe.sh); the stage-1 candidates
# are CANDIDATES ("SHAPE:SEED ...", default h512d8 for each of STAGE1_SEEDS, default 2), SEEDS1 and
# STEPS1 override stage 1's corpora and steps, SEEDS2 and STEPS2 stage 2's; STAGE1_ARGS and
# STAGE2_ARGS add train.py flags to one stage, TRAIN_ARGS to both. With none of them it remakes
# the committed weights (reference-weights.sha256).
# PACKDIR gets at most 8 files under 16 MiB (what one device call brings back): the weight shards,
# model.tar.xz (the rest of the model directory and stage 1's training log), transformers.tar.xz,
# llamacpp.tar.xz, device.log.
#
# DRY=1 runs it on a CPU machine as far as it can go: random weights (random_model.py) instead of
# training, the CPU build (LLAMACPP_BIN), HF_TOKENIZERS (hf-tokenizers.sh's directory) instead of
# the Python tokenizers, a short llama-bench, no transformers sweep, and the llama.cpp sweep at
# level 1 over DRY_DOCS (default 3) documents, 4 tokens an answer.
set -uo pipefail
carry="$(cd "${1:?usage: device-retrain.sh CARRY WORK PACKDIR}" && pwd)"
work="${2:?usage: device-retrain.sh CARRY WORK PACKDIR}"
pack="${3:?usage: device-retrain.sh CARRY WORK PACKDIR}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root" || exit 1
rm -f "${pack%/}.done"
mkdir -p "$pack" "$work"
work="$(cd "$work" && pwd)"
steps="$pack/steps.txt"
: >"$steps"
dry="${DRY:-0}"
tf=engines/transformers
tokenizer="$tf/retrain/tokenizer.json"
data="$work/data"
model="$work/model/extract-llama-15m"
res="$work/llamacpp"
mkdir -p "$data" "$res" "$work/model"
export PYTHONUNBUFFERED=1

step() { # step NAME CMD...: runs CMD, logging its time and status
  local name="$1" t0=$SECONDS rc
  shift
  "$@"
  rc=$?
  echo "$name: $((SECONDS - t0)) s, exit $rc" >>"$steps"
  return $rc
}
log() { echo "== $(date +%T) $*"; }
pack_up() { # the files that come back
  local f
  if [[ "${COMMITTED:-0}" != 1 ]]; then # trained weights come back; committed ones are in the repository
    for f in "$model"/model-*.safetensors; do [[ -f "$f" ]] && cp "$f" "$pack/"; done
    tar -C "$work" -cJf "$pack/model.tar.xz" --exclude='*.safetensors' model stage1 2>/dev/null
  fi
  [[ -d "$work/tf" ]] && tar -C "$work" -cJf "$pack/transformers.tar.xz" tf 2>/dev/null
  tar -C "$work" -cJf "$pack/llamacpp.tar.xz" --exclude='*.gguf' llamacpp 2>/dev/null
}
finish() { pack_up; echo "$1" >"${pack%/}.done"; exit "$1"; }

if [[ "$dry" != 1 ]]; then
  {
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
    nvcc --version | tail -n 2
    python3 -c 'import torch, transformers, tokenizers; print("torch", torch.__version__, "transformers", transformers.__version__, "tokenizers", tokenizers.__version__)'
  } >"$res/env.txt" 2>&1
fi
echo "cores $(nproc); $(uname -r); tokenizer $(sha256sum "$tokenizer")" >>"$res/env.txt"

xz -dc "$carry/extractbench.xz" >"$root/extractbench.tmp" && chmod +x "$root/extractbench.tmp" && mv -f "$root/extractbench.tmp" "$root/extractbench" || finish 1
eb="$root/extractbench"
python=python3
if [[ "$dry" == 1 ]]; then
  python="${PYTHON:-/usr/bin/python3}"
  bin="${LLAMACPP_BIN:?DRY=1 needs LLAMACPP_BIN (the CPU build)}"
  hf="${HF_TOKENIZERS:?DRY=1 needs HF_TOKENIZERS (hf-tokenizers.sh)}"
  # the CPU build's own source checkout serves gguf.sh (build.sh --source)
elif [[ "${TRAIN_ONLY:-0}" == 1 ]]; then
  hf=python # no llama.cpp: only the trainings and their held-out figures
else
  tar -xJf "$carry/llama-src.tar.xz" -C "$work" || finish 1
  export LLAMACPP_SRC="$work/llama.cpp" LLAMACPP_JOBS="${LLAMACPP_JOBS:-12}" LLAMACPP_CACHE="$work/cache"
  log "CUDA build in the background"
  (step build bash -c "'$here/build.sh' --cuda >'$work/bin.txt' 2>'$work/build.log'") &
  build_pid=$!
  hf=python
fi
export PYTHON="$python"

# ---- corpora: every training seed and the held-out 999, once (train.py skips what exists)
# shellcheck source=../transformers/recipe.sh
. "$tf/recipe.sh"
gen() { seq "$1" "$2" | xargs -P "$(nproc)" -I{} "$eb" corpus generate -seed {} -out "$data/seed-{}" >/dev/null; }
if [[ "$dry" == 1 ]]; then
  step corpora gen 999 999 || finish 1
else
  last="$RECIPE_LAST_SEED"
for r in ${SEEDS1:-} ${SEEDS2:-}; do [[ "${r#*:}" -gt "$last" ]] && last=$((${r#*:} - 1)); done
if [[ "${COMMITTED:-0}" == 1 ]]; then # the held-out corpus only: the token comparison reads it
  step corpora gen 999 999 || finish 1
else
  step corpora bash -c "$(declare -f gen); eb='$eb' data='$data' gen 999 $last" || finish 1
fi
fi

# ---- training (COMMITTED=1: none, the committed weights as they are)
heldout_of() { "$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["heldout"]["summary"]["all"]["accepted_share"])' "$1/training-log.json" 2>/dev/null || echo 0; }
status=0
if [[ "${COMMITTED:-0}" == 1 ]]; then
  rm -rf "$model" && cp -r "$tf/model/extract-llama-15m" "$model" || finish 1
  (cd "$model" && sha256sum -c --quiet SHA256SUMS) || { log "the committed model does not match its SHA256SUMS"; finish 1; }
  echo "committed model: held-out accepted $(heldout_of "$model") (model_sha256 $(sha256sum "$model/SHA256SUMS" | cut -d' ' -f1))" >>"$res/heldout.txt"
else
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | wc -l)
[[ "$gpus" -ge 1 ]] || gpus=1
# CANDIDATES: stage-1 trainings as SHAPE:SEED words, all at once (default: h512d8 for each of
# STAGE1_SEEDS); the best held-out share goes on to stage 2 with its shape.
candidates="${CANDIDATES:-}"
if [[ -z "$candidates" ]]; then
  for s in ${STAGE1_SEEDS:-2}; do candidates+="h512d8:$s "; done
fi
i=0
for c in $candidates; do
  shape="${c%%:*}" s="${c##*:}" name="$shape-seed-${c##*:}"
  out1="$work/stage1/$name/extract-llama-15m"
  mkdir -p "$(dirname "$out1")"
  if [[ "$dry" == 1 ]]; then
    "$python" "$here/random_model.py" --shape "$shape" --tokenizer "$tokenizer" --out "$out1" --seed "$s" 2>"$work/stage1/$name/train.log" &
  else
    log "stage 1, $name, GPU $((i % gpus))"
    CUDA_VISIBLE_DEVICES=$((i % gpus)) python3 $tf/train.py --extractbench "$eb" --workdir "$data" --out "$out1" \
      "${RECIPE_STAGE1[@]}" --shape "$shape" --seed "$s" ${SEEDS1:+--seeds $SEEDS1} ${STEPS1:+--steps $STEPS1} \
      ${TRAIN_ARGS:-} ${STAGE1_ARGS:-} >"$work/stage1/$name/train.log" 2>&1 &
  fi
  i=$((i + 1))
done
t0=$SECONDS
wait_training() { local p rc=0; for p in $(jobs -p); do [[ "${build_pid:-}" == "$p" ]] && continue; wait "$p" || rc=1; done; return $rc; }
wait_training
echo "stage 1 ($candidates): $((SECONDS - t0)) s" >>"$steps"
best='' best_acc=-1 best_shape=''
for c in $candidates; do
  name="${c%%:*}-seed-${c##*:}"
  d="$work/stage1/$name/extract-llama-15m"
  [[ -f "$d/SHA256SUMS" ]] || { log "stage 1 $name made no model"; tail -n 20 "$work/stage1/$name/train.log"; continue; }
  acc=$(heldout_of "$d")
  log "stage 1 $name: held-out accepted $acc"
  echo "stage 1 $name: held-out accepted $acc" >>"$res/heldout.txt"
  if "$python" -c 'import sys; sys.exit(not float(sys.argv[1]) > float(sys.argv[2]))' "$acc" "$best_acc"; then best="$d" best_acc="$acc" best_shape="${c%%:*}"; fi
done
[[ -n "$best" ]] || finish 1
log "stage 2 from $best"
if [[ "$dry" == 1 ]]; then
  step stage2 cp -r "$best" "$(dirname "$model")/" || finish 1
  echo '{"heldout": {"summary": {"all": {"accepted_share": 0}}}, "dry_run": "random weights"}' >"$model/training-log.json"
else
  step stage2 python3 $tf/train.py --extractbench "$eb" --workdir "$data" --out "$model" --init "$best" "${RECIPE_STAGE2[@]}" \
    --shape "$best_shape" ${SEEDS2:+--seeds $SEEDS2} ${STEPS2:+--steps $STEPS2} ${TRAIN_ARGS:-} ${STAGE2_ARGS:-} >"$work/stage1/train-stage-2.log" 2>&1 ||
    { tail -n 30 "$work/stage1/train-stage-2.log"; finish 1; }
fi
acc=$(heldout_of "$model")
echo "stage 2: held-out accepted $acc (model_sha256 $(sha256sum "$model/SHA256SUMS" | cut -d' ' -f1))" >>"$res/heldout.txt"
cat "$res/heldout.txt"
"$python" -c 'import sys; sys.exit(float(sys.argv[1]) < float(sys.argv[2]))' "$acc" "${MIN_HELDOUT:-0.90}" || { [[ "$dry" == 1 ]] || status=3; }

fi

if [[ "${TRAIN_ONLY:-0}" == 1 ]]; then # a recipe search: the weights and logs come back, nothing else runs
  if [[ "$dry" != 1 ]]; then # corpus/default at level 1 in bf16, the bar's own figure, in process
    step default timeout 300 python3 $tf/evaluate.py --model "$model" --quant bf16 --level 1 \
      --out "$res/default-bf16.json" >"$res/default-bf16.txt" 2>&1
    cat "$res/default-bf16.txt"
  fi
  log "TRAIN_ONLY: done, status $status"
  finish "$status"
fi

# ---- the CUDA build must be done by now
if [[ "$dry" != 1 ]]; then
  wait "$build_pid" || { tail -n 40 "$work/build.log"; finish 1; }
  bin="$(tail -n 1 "$work/bin.txt")"
fi
export LLAMACPP_BIN="$bin" EXTRACT_MODEL="$model" GGUF_DIR="$res/gguf" GGUF_SUMS="$res/gguf.sha256"
mkdir -p "$GGUF_DIR"
update=1
if [[ "${COMMITTED:-0}" == 1 ]]; then # the committed weights: their GGUFs must be the pinned ones
  cp "$here/gguf.sha256" "$GGUF_SUMS" && update=0
else
  : >"$GGUF_SUMS"
fi

# ---- the GPU is this job's once GPU_AFTER exists
if [[ -n "${GPU_AFTER:-}" ]]; then
  log "waiting for $GPU_AFTER"
  t_wait=$SECONDS
  while [[ ! -e "$GPU_AFTER" ]]; do sleep 2; done
  echo "waiting for the GPU ($GPU_AFTER): $((SECONDS - t_wait)) s" >>"$steps"
fi

# ---- GGUF ladder, no fallback
step gguf bash -c "UPDATE=$update STRICT_QUANT=1 '$here/gguf.sh' bf16 f16 q8_0 q6_k q4_k_m q4_0 >'$work/gguf.txt' 2>'$res/gguf.log'" || { cat "$res/gguf.log"; finish 1; }
cp "$GGUF_DIR"/*.log "$res/" 2>/dev/null
if grep -l "falling back\|required fallback" "$GGUF_DIR"/*.log; then
  log "llama-quantize fell back on some tensor"
  finish 1
fi
ls -l "$GGUF_DIR"/*.gguf >"$res/gguf-sizes.txt"

# ---- zero token drift against the (CUDA) llama-server
ngl=(-ngl 99)
[[ "$dry" == 1 ]] && ngl=()
"$bin/llama-server" -m "$GGUF_DIR/extract-llama-15m-bf16.gguf" --host 127.0.0.1 --port 8039 -c 8192 --parallel 1 "${ngl[@]}" >"$res/tokens-server.log" 2>&1 &
srv=$!
for _ in $(seq 1 300); do # no curl needed: Python asks /health
  "$python" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' http://127.0.0.1:8039/health 2>/dev/null && break
  sleep 0.2
done
step tokens "$python" "$here/compare_tokens.py" --url http://127.0.0.1:8039 --model "$model" --hf "$hf" \
  --corpus corpus/default/documents.jsonl --corpus "$data/seed-999/documents.jsonl" \
  --out "$res/tokens.json" --table "$res/tokens.md" >"$res/tokens.txt" 2>&1 || status=4
kill "$srv"; wait "$srv" 2>/dev/null
cat "$res/tokens.txt"

# ---- llama-bench: llama.cpp's own ceiling per GGUF
bench=(-p 2048 -n 32 -r 3)
[[ "$dry" == 1 ]] && bench=(-p 64 -n 8 -r 1 -t 2)
for t in bf16 q8_0 q6_k q4_k_m q4_0; do
  echo "## extract-llama-15m-$t.gguf" >>"$res/llama-bench.md"
  step "bench $t" bash -c "'$bin/llama-bench' -m '$GGUF_DIR/extract-llama-15m-$t.gguf' ${ngl[*]} ${bench[*]} -o md >>'$res/llama-bench.md' 2>>'$res/bench.log'"
done

# ---- the transformers reference with the new weights
if [[ "$dry" != 1 && "${COMMITTED:-0}" != 1 ]]; then
  log "transformers sweep"
  step transformers env MODEL="$model" PROTOCOL=$tf/protocol-retrain-h200.yaml CEILING_VARIANTS=bf16 CEILING_CONCURRENCY=1,8,128 \
    CEILING_LIMIT=100 CEILING_REPETITIONS=3 SWEEP_TIMEOUT=600 bash $tf/run-real-h200.sh "$work/tf" >"$work/tf.log" 2>&1 || status=5
  mkdir -p "$work/tf" && cp "$work/tf.log" "$work/tf/run.log"
fi

# ---- the llama.cpp sweep
proto=engines/llamacpp/retrain-protocol-h200.yaml
if [[ "$dry" == 1 ]]; then
  head -n "${DRY_DOCS:-3}" corpus/default/documents.jsonl >"$work/dry-docs.jsonl"
  sed -e "s#^corpus: .*#corpus: $work/dry-docs.jsonl#" -e 's#^sweep: .*#sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 1}#' \
    -e 's#^generation: .*#generation: {max_tokens: 4, temperature: 0, seed: 7}#' -e 's#^request_timeout: .*#request_timeout: 300s#' \
    -e 's# -ngl 99##' -e "s#tokenizer: \.\./#tokenizer: $root/engines/#" "$proto" >"$work/dry-protocol.yaml"
  proto="$work/dry-protocol.yaml"
else
  export LLAMACPP_PARALLEL=128 LLAMACPP_CTX=1048576
fi
log "llama.cpp sweep"
cut=()
limit="${SWEEP_TIMEOUT:-0}"
[[ -n "${SWEEP_DEADLINE:-}" ]] && limit=$((SWEEP_DEADLINE - $(date +%s)))
if [[ -n "${SWEEP_DEADLINE:-}" || "$limit" -gt 0 ]]; then
  [[ "$limit" -ge 30 ]] || limit=30
  cut=(timeout -s INT -k 60 "$limit")
  log "the sweep is interrupted after $limit s if it has not ended"
fi
step llamacpp "${cut[@]}" "$eb" run -quiet -protocol "$proto" -out "$res/sweep" >"$res/run-stdout.txt" 2>"$res/run.log" || status=6
"$eb" report "$res/sweep" >"$res/report.txt" 2>&1 || true
for t in q8_0 q6_k q4_k_m q4_0; do
  "$eb" compare "$res/sweep:bf16" "$res/sweep:$t" >"$res/compare-bf16-$t.txt" 2>&1 || true
done
"$eb" memory -model "$model" -context 8192 "$res/sweep" >"$res/memory.txt" 2>&1 || true
if [[ -f "$work/tf/sweep/results.db" ]]; then
  "$python" "$here/prompt_tokens_agree.py" "$work/tf/sweep/results.db" "$res/sweep/results.db" >"$res/prompt-tokens-agree.txt" 2>&1 || status=7
  cat "$res/prompt-tokens-agree.txt"
fi
for db in "$res/sweep/results.db" "$work/tf/sweep/results.db"; do
  [[ -f "$db" ]] && xz -T4 -9 "$db"
done
log "done, status $status"
finish "$status"
