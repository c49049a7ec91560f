#!/usr/bin/env bash
# device-check.sh OUTDIR [SHAPE...]: checks the engine on a GPU machine without
# extractbench: what the installed transformers offers (probe.txt, and its CB
# source in src.tgz), then for each shape server.py + smoke.py (checks and
# timings at a few levels on synthetic documents in the default corpus's
# length mix), then ceiling.py. Short table last.
#
#   LEVELS   smoke.py's level:documents pairs (default 1:12,32:300,128:300)
#   CEILING  ceiling.py's levels (default 128; empty skips it)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
out=${1:?usage: device-check.sh OUTDIR [SHAPE...]}
shift
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(1b 8b)
levels=${LEVELS-1:12,32:300,128:300}
ceiling=${CEILING-128}
export PYTHONUNBUFFERED=1
mkdir -p "$out"
here=engines/transformers
export SRC_TGZ="$out/src.tgz"

{
	nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
	python3 - <<'EOF'
import dataclasses, importlib, inspect, os, sys
import torch, transformers
print("torch", torch.__version__, "cuda", torch.version.cuda, "transformers", transformers.__version__)
for m in ("flash_attn", "kernels", "aiohttp", "yaml", "torch.nn.attention.varlen"):
    try:
        mod = importlib.import_module(m)
        print("have", m, getattr(mod, "__version__", ""))
    except Exception as e:
        print("no", m, type(e).__name__, e)
from transformers import LlamaForCausalLM
print("init_continuous_batching", inspect.signature(LlamaForCausalLM.init_continuous_batching))
try:
    from torch.nn.attention.varlen import varlen_attn
    print("varlen_attn", inspect.signature(varlen_attn))
except Exception as e:
    print("varlen_attn:", e)
from transformers.generation.continuous_batching import continuous_api as ca
M = ca.ContinuousBatchingManager
for n in ("add_request", "register_result_handler", "warmup", "get_result", "cancel_request"):
    print(n, inspect.signature(getattr(M, n)) if hasattr(M, n) else "MISSING")
for mod, cls in (("requests", "GenerationOutput"), ("requests", "RequestState")):
    c = getattr(importlib.import_module("transformers.generation.continuous_batching." + mod), cls, None)
    print(cls, [f.name for f in dataclasses.fields(c)] if c and dataclasses.is_dataclass(c) else c)
from transformers import AttentionInterface
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
print("attention keys", sorted(ALL_ATTENTION_FUNCTIONS.valid_keys()))
root = os.path.dirname(transformers.__file__)
paths = ["generation/continuous_batching", "generation/configuration_utils.py", "integrations/flash_paged.py",
         "integrations/sdpa_paged.py", "integrations/eager_paged.py", "modeling_flash_attention_utils.py",
         "masking_utils.py", "modeling_utils.py", "utils/generic.py"]
import tarfile
with tarfile.open(os.environ["SRC_TGZ"], "w:gz") as t:
    for p in paths:
        if os.path.exists(os.path.join(root, p)):
            t.add(os.path.join(root, p), arcname="transformers/" + p)
    v = os.path.join(os.path.dirname(torch.__file__), "nn/attention/varlen.py")
    if os.path.exists(v):
        t.add(v, arcname="torch/nn/attention/varlen.py")
EOF
} >"$out/probe.txt" 2>&1 </dev/null
head -40 "$out/probe.txt"

syn=corpus/default/documents.jsonl
[ -f $syn ] || { syn=/tmp/synthetic.jsonl; python3 $here/smoke.py --write-synthetic $syn; }

start_server() { # shape attn logfile: starts server.py (pid), waits for /health (load = seconds)
	local t0=$SECONDS
	python3 $here/server.py --shape "$1" --attn "$2" --port 8000 >"$3" 2>&1 &
	pid=$!
	for _ in $(seq 1 600); do
		python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:8000/health', timeout=2)" 2>/dev/null &&
			{ load=$((SECONDS - t0)); return 0; }
		kill -0 $pid 2>/dev/null || return 1
		sleep 0.5
	done
	return 1
}

summary=()
for s in "${shapes[@]}"; do
	log=/tmp/server-$s.log
	rep="$out/$s.txt"
	attn=torch_flash_varlen
	if ! start_server "$s" $attn "$log"; then
		{ echo "== $s: $attn failed to start; tail of log:"; tail -40 "$log"; } | tee -a "$rep"
		kill $pid 2>/dev/null
		wait $pid 2>/dev/null
		attn=sdpa
		mv "$log" "$log.flash"
		start_server "$s" $attn "$log" || {
			tail -40 "$log" | tee -a "$rep"
			summary+=("$s: server failed")
			continue
		}
	fi
	echo "== $s: ready in ${load}s with $attn" | tee -a "$rep"
	timeout ${SMOKE_TIMEOUT:-300} python3 $here/smoke.py --corpus $syn --levels "$levels" --out /tmp/smoke-$s.json 2>&1 | tee -a "$rep"
	kill $pid
	wait $pid 2>/dev/null
	{ echo "== server log"; grep -v ' INFO ' "$log" | tail -40; grep ' ready in ' "$log"; } >>"$rep"
	summary+=("$s: load ${load}s attn $attn; $(grep -c '^FAIL' "$rep") check failures")
	if [ -n "$ceiling" ]; then
		echo "== ceiling" >>"$rep"
		timeout 300 python3 $here/ceiling.py --shape "$s" --attn $attn --corpus $syn --concurrency "$ceiling" \
			--out /tmp/ceiling-$s.json 2>&1 | grep -v ' INFO ' | tail -30 >>"$rep"
	fi
done
echo "== summary"
printf '%s\n' "${summary[@]}"
for s in "${shapes[@]}"; do
	echo "-- $s"
	grep -A4 '^level' "$out/$s.txt" 2>/dev/null
	grep -A3 'out tok/s  *docs/s' "$out/$s.txt" 2>/dev/null
done
