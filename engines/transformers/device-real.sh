#!/usr/bin/env bash
# device-real.sh MODE OUTDIR: the trained model's work on one H200, in one go.
#
#   pilot  checks the pieces on a short training (about 30 s): versions, the
#          installed batching manager's source (cbsrc.tgz), quant.py's GPU
#          tests, train.py on a few seeds, evaluate.py on a few documents in
#          bf16/fp8/int8, then server.py per variant with smoke.py (a second
#          identical load shows whether engine_graph_captures_total moves),
#          and once with CUDA graphs on for comparison.
#   main   trains the model for real into engines/transformers/model/NAME,
#          evaluates bf16/fp8/int8 on corpus/default, times level 1 over
#          HTTP, and leaves in OUTDIR the files to commit (the safetensors
#          shards, model-small.tar with the rest) with the logs.
#
# Needs ./extractbench or .devcarry/extractbench.gz (a copy of it) for corpus
# generation. Environment: SEEDS (main, default 1000:1280), NAME (default
# extract-llama-15m), TRAIN_ARGS (train.py flags; main default: --steps 1200
# --max-seconds 265).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
mode=${1:?usage: device-real.sh pilot|main OUTDIR}
out=${2:?usage: device-real.sh pilot|main OUTDIR}
mkdir -p "$out"
here=engines/transformers
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=true
eb=./extractbench
if [ ! -x "$eb" ] && [ -f .devcarry/extractbench.gz ]; then
	gunzip -c .devcarry/extractbench.gz >/tmp/extractbench && chmod +x /tmp/extractbench && eb=/tmp/extractbench
fi
[ -x "$eb" ] || { echo "device-real.sh: no extractbench binary" >&2; exit 2; }
name=${NAME:-extract-llama-15m}
logs=/tmp/device-logs
mkdir -p "$logs"

step() { echo "== $* $(date +%T)"; }

serve_smoke() { # tag smoke-args... -- server-args...
	local tag=$1
	shift
	local sargs=()
	while [ "$1" != "--" ]; do sargs+=("$1"); shift; done
	shift
	step "server $tag: $*"
	python3 $here/server.py "$@" --port 8000 >"$logs/server-$tag.log" 2>&1 &
	local pid=$!
	timeout 180 python3 $here/smoke.py --url http://127.0.0.1:8000 --corpus corpus/default/documents.jsonl --wait 120 \
		--max-tokens 48 --out "$logs/smoke-$tag.json" "${sargs[@]}" || echo "smoke $tag failed: $?"
	python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:8000/metrics').read().decode())" 2>&1 | grep -E '^engine_|^# TYPE engine' || true
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	grep -E "ready in|Error|error|Traceback" "$logs/server-$tag.log" | head -5
	grep -c "Creating graph" "$logs/server-$tag.log" | sed "s/^/$tag: 'Creating graph' log lines: /"
}

case "$mode" in
pilot)
	step versions
	nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
	OUTDIR="$out" python3 - <<'EOF'
import inspect, os, tarfile, torch, transformers, tokenizers
print("torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__, "tokenizers", tokenizers.__version__)
from transformers import ContinuousBatchingConfig
print("ContinuousBatchingConfig fields:", sorted(getattr(ContinuousBatchingConfig, "__dataclass_fields__", {}) or inspect.signature(ContinuousBatchingConfig).parameters))
root = os.path.dirname(transformers.__file__)
with tarfile.open(os.environ.get("OUTDIR", "/tmp") + "/cbsrc.tgz", "w:gz") as t:
    for p in ("generation/continuous_batching", "generation/configuration_utils.py", "integrations/flash_paged.py"):
        t.add(os.path.join(root, p), arcname="transformers/" + p)
print("_weight_int8pack_mm:", hasattr(torch.ops.aten, "_weight_int8pack_mm"))
EOF
	step "quant + capture tests"
	(cd $here && timeout 120 python3 -m unittest -v test_quant 2>&1 | tail -15)
	step "train (pilot)"
	timeout 240 python3 $here/train.py --extractbench "$eb" --out /tmp/model/extract-llama-pilot --seeds 1000:1040 --chunk-seeds 4 \
		--tokenizer-seeds 8 --heldout-limit 60 --max-seconds 30 --log-every 10 ${TRAIN_ARGS:-} 2>&1 | tee "$logs/train.log"
	cp /tmp/model/extract-llama-pilot/training-log.json "$out/" 2>/dev/null
	ls -la /tmp/model/extract-llama-pilot
	step "evaluate (pilot)"
	timeout 150 python3 $here/evaluate.py --model /tmp/model/extract-llama-pilot --limit 12 --failures 3 --out "$logs/eval.json" 2>&1 | tail -40
	m=/tmp/model/extract-llama-pilot
	serve_smoke bf16 --levels 1:12,8:24 --repeat 2 -- --model $m --quant bf16
	serve_smoke fp8 --levels 1:12,8:24 --repeat 2 --skip-checks -- --model $m --quant fp8
	serve_smoke int8 --levels 1:12,8:24 --repeat 2 --skip-checks -- --model $m --quant int8
	serve_smoke bf16-graphs --levels 1:12,8:24 --repeat 2 --skip-checks -- --model $m --quant bf16 --cuda-graphs on
	;;
main)
	step "train"
	timeout 420 python3 $here/train.py --extractbench "$eb" --out $here/model/$name --seeds "${SEEDS:-1000:1280}" \
		${TRAIN_ARGS:---steps 1200 --max-seconds 265} 2>&1 | tee "$logs/train.log"
	ls -la $here/model/$name
	cp $here/model/$name/*.safetensors "$out/" 2>/dev/null
	tar cf "$out/model-small.tar" -C $here/model --exclude='*.safetensors' "$name"
	step "evaluate"
	timeout 240 python3 $here/evaluate.py --model $here/model/$name --out "$out/eval-default.json" 2>&1 | tee "$logs/eval.log" | grep -v "^   "
	grep "^   " "$logs/eval.log" | head -30
	serve_smoke bf16 --levels 1:30,8:64,32:128,128:300 --repeat 2 -- --model $here/model/$name --quant bf16
	serve_smoke fp8 --levels 1:20,128:300 --repeat 2 --skip-checks -- --model $here/model/$name --quant fp8
	serve_smoke int8 --levels 1:20,128:300 --repeat 2 --skip-checks -- --model $here/model/$name --quant int8
	;;
final)
	# Train and evaluate only (the servers were checked by main on the same architecture).
	step "train"
	timeout 200 python3 $here/train.py --extractbench "$eb" --out $here/model/$name --seeds "${SEEDS:-1000:1400}" \
		${TRAIN_ARGS:---steps 1600 --max-seconds 140} 2>&1 | tee "$logs/train.log" | grep -v '"step": [0-9]*[1-9]0,\|"step": [0-9]*[1-9]5,'
	cp $here/model/$name/*.safetensors "$out/" 2>/dev/null
	tar cf "$out/model-small.tar" -C $here/model --exclude='*.safetensors' "$name"
	step "evaluate"
	timeout 60 python3 $here/evaluate.py --model $here/model/$name --out "$out/eval-default.json" 2>&1 | tee "$logs/eval.log" | grep -v "^   "
	grep "^   " "$logs/eval.log" | head -12
	;;
*)
	echo "device-real.sh: mode pilot, main or final" >&2
	exit 2
	;;
esac
tar czf "$out/logs.tgz" -C "$logs" .
ls -la "$out"
