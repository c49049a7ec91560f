#!/usr/bin/env bash
# cpu-reference.sh: issue 24 item 8's CPU reference runs of a model's GGUF ladder on llama.cpp's
# CPU llama-server, from one command, resumable:
#
#   engines/llamacpp/cpu-reference.sh MODEL_DIR OUT
#
# MODEL_DIR is a train.py model directory (config.json, safetensors, tokenizer.json,
# chat_template.jinja, SHA256SUMS); OUT a work directory outside the repository (the GGUFs are
# 10-33 MB each). Steps, each skipped when already done, so a killed run is resumed by the same
# command:
#   1. the GGUFs of every variant (gguf.sh: convert.py, then llama-quantize of the bf16 file) in
#      OUT/gguf, their sha256 recorded in OUT/gguf.sha256 the first time and checked after;
#   2. OUT/protocol.yaml: corpus/default, levels 1, 2 and 4, one variant per GGUF type through
#      start: (serve.sh: 4 slots of 8,192 tokens, --parallel 4), tokenizer: MODEL_DIR's
#      tokenizer.json (the drift figure is counted against it); refused when it would differ
#      from the one a run already began with;
#   3. extractbench run (or run -resume of an interrupted one) into OUT/run;
#   4. compare of each variant against the first (f16) at level 1, with its flips:
#      OUT/compare-REF-VARIANT.{txt,json};
#   5. memory: the calculator's weights beside each served file's (OUT/memory.{txt,json}) and,
#      per GGUF, tensor by tensor (OUT/memory-gguf-TYPE.txt);
#   6. OUT/README.md, the tables (cpu_reference_table.py), to copy beside the committed run.
#
# Everything runs under nice (NICE, default 19). BACKGROUND=1 re-runs the script detached
# (setsid nohup), logging to OUT/cpu-reference.log, and prints its pid.
#
# Environment:
#   CPU_REF_VARIANTS  GGUF types, the reference first (default "f16 q8_0 q6_k q4_k_m q4_0")
#   CPU_REF_LEVELS    concurrency levels (default "1 2 4")
#   CPU_REF_DOCS      only the first N documents of corpus/default (a slice to try the script on)
#   CPU_REF_THREADS   llama-server --threads (default 1: on 2 shared cores one thread prefills
#                     faster than two, README "CI: a real engine")
#   CPU_REF_PORT      first port (default 8041; one per variant)
#   LLAMACPP_BIN      the CPU build (default: build.sh's cache; never built here)
#   EB                an extractbench binary (default: built into OUT/bin from this checkout)
#   DRY=1             write the protocol and print the commands, run nothing
set -euo pipefail

# The whole script is one function, read before it runs: editing the file under a running
# (background) job cannot change what it does.
main() {

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
usage="usage: engines/llamacpp/cpu-reference.sh MODEL_DIR OUT"
model_in="${1:?$usage}"
out_in="${2:?$usage}"
[[ -f "$model_in/config.json" && -f "$model_in/tokenizer.json" ]] ||
  { echo "cpu-reference.sh: $model_in has no config.json and tokenizer.json: want a train.py model directory" >&2; exit 2; }
mkdir -p "$out_in"
model="$(cd "$model_in" && pwd)"
out="$(cd "$out_in" && pwd)"
[[ "$model$out" != *[[:space:]\"\']* ]] || { echo "cpu-reference.sh: MODEL_DIR and OUT go into start: lines unquoted: no spaces or quotes" >&2; exit 2; }

if [[ "${BACKGROUND:-0}" == 1 ]]; then
  BACKGROUND=0 setsid nohup "${BASH_SOURCE[0]}" "$model" "$out" >>"$out/cpu-reference.log" 2>&1 </dev/null &
  echo "cpu-reference.sh: running in the background, pid $!, log $out/cpu-reference.log"
  exit 0
fi
renice -n "${NICE:-19}" -p $$ >/dev/null 2>&1 || true # every child inherits it

read -r -a variants <<<"${CPU_REF_VARIANTS:-f16 q8_0 q6_k q4_k_m q4_0}"
read -r -a levels <<<"${CPU_REF_LEVELS:-1 2 4}"
threads="${CPU_REF_THREADS:-1}"
port0="${CPU_REF_PORT:-8041}"
ref="${variants[0]}"
[[ ${#variants[@]} -ge 2 ]] || { echo "cpu-reference.sh: CPU_REF_VARIANTS needs a reference and at least one other type" >&2; exit 2; }

exec 3>&2 # the log goes to the script's stderr even where a step's stderr is redirected
log() { echo "cpu-reference.sh: $(date -u +%H:%M:%S) $*" >&3; }
run() { # run CMD...: print it, and run it unless DRY=1
  log "+ $*"
  [[ "${DRY:-0}" == 1 ]] || "$@"
}
cd "$root"

bin="${LLAMACPP_BIN:-${LLAMACPP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/extractbench/llamacpp}/3.22.1/bin}"
if [[ "${DRY:-0}" != 1 ]] && [[ ! -x "$bin/llama-server" || ! -x "$bin/llama-quantize" ]]; then
  echo "cpu-reference.sh: no llama-server and llama-quantize in $bin: run engines/llamacpp/build.sh (or set LLAMACPP_BIN)" >&2
  exit 1
fi
export LLAMACPP_BIN="$bin" EXTRACT_MODEL="$model" GGUF_DIR="$out/gguf" GGUF_SUMS="$out/gguf.sha256"

eb="${EB:-$out/bin/extractbench}"
if [[ -z "${EB:-}" && ! -x "$eb" ]]; then
  run mkdir -p "$out/bin"
  run go build -o "$eb" ./cmd/extractbench
fi

# 1. The GGUFs: pinned the first time each is made, checked every time after.
touch "$out/gguf.sha256"
for ty in "${variants[@]}"; do
  if grep -q " extract-llama-15m-$ty.gguf\$" "$out/gguf.sha256"; then
    run "$here/gguf.sh" "$ty" >/dev/null
  else
    run env UPDATE=1 "$here/gguf.sh" "$ty" >/dev/null
  fi
done

# 2. The protocol.
corpus="$root/corpus/default"
if [[ -n "${CPU_REF_DOCS:-}" ]]; then
  mkdir -p "$out/corpus"
  head -n "$CPU_REF_DOCS" "$root/corpus/default/documents.jsonl" >"$out/corpus/documents.jsonl"
  corpus="$out/corpus/documents.jsonl"
fi
# The parameter count of a dense Llama config.json (sizing's Params: 16,204,800 at h512).
params="$(/usr/bin/python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
h, L, f, v = c["hidden_size"], c["num_hidden_layers"], c["intermediate_size"], c["vocab_size"]
hd = c.get("head_dim") or h // c["num_attention_heads"]
q, kv = c["num_attention_heads"] * hd, c.get("num_key_value_heads", c["num_attention_heads"]) * hd
print(v * h * (1 if c.get("tie_word_embeddings") else 2) + L * (2 * h * q + 2 * h * kv + 3 * h * f + 2 * h) + h)
' "$model/config.json")"
# Every start: names the model, its GGUFs, their pins and the build, so a resume (or anyone
# running OUT/protocol.yaml) serves the same files: extractbench refuses a variant whose served
# file changed (its environment).
serve_env="EXTRACT_MODEL=$model GGUF_DIR=$out/gguf GGUF_SUMS=$out/gguf.sha256 LLAMACPP_BIN=$bin LLAMACPP_PARALLEL=4 LLAMACPP_CTX=32768"
weights_of() { case "$1" in bf16) echo bf16 ;; f16) echo fp16 ;; q8_0|q6_k) echo int8 ;; *) echo int4 ;; esac; }
quant_of() { # the variant's quantization: line
  case "$1" in
    bf16) echo "none (convert.py: the model's bf16 weights, norms f32)" ;;
    f16) echo "none (convert.py: f16 from the model's bf16 weights, norms f32)" ;;
    *) echo "llama.cpp $(tr '[:lower:]' '[:upper:]' <<<"$1") (llama-quantize of the bf16 file; memory-gguf-$1.txt lists every tensor's type)" ;;
  esac
}
{
  echo "# Written by engines/llamacpp/cpu-reference.sh for $model (do not edit: a resume needs the same file)."
  echo "name: llamacpp-cpu-reference"
  echo "description: the GGUF ladder ($(echo "${variants[@]}")) of $(basename "$model") on llama.cpp's CPU llama-server, levels $(echo "${levels[@]}"), 4 slots (--parallel 4), $threads thread(s)."
  echo "corpus: \"$corpus\""
  cat <<'EOF'
prompt:
  system: "You extract fields from business documents. Answer with JSON only."
  user: "Extract date (issue date, YYYY-MM-DD), amount (total due, a JSON number) and category (one of: utilities, telecom, software, office_supplies, travel, meals, rent, professional_services, taxes, healthcare). Use null for a field the document lacks. Answer with one JSON object with the keys date, amount and category.\n\n{{document}}"
output_schema: default
parse: strict
generation: {max_tokens: 48, temperature: 0, seed: 7}
acceptance: {min_accepted: 0.9, latency_p95_ms: 60000}
EOF
  echo "sweep: {mode: concurrency, levels: [$(IFS=,; echo "${levels[*]}" | sed 's/,/, /g')], repetitions: 1, warmup: 1}"
  echo "request_timeout: 600s"
  echo "variants:"
  port=$port0
  for ty in "${variants[@]}"; do
    cat <<EOF
  - name: $ty
    engine:
      url: "http://127.0.0.1:$port"
      model: extract-llama-15m
      kind: llamacpp
      start: "$serve_env engines/llamacpp/serve.sh $ty $port --threads $threads"
      ready_timeout: 300s
      weights: $(weights_of "$ty")
      quantization: "$(quant_of "$ty")"
      params: $params
      context_window: 8192
      tokenizer: "$model/tokenizer.json"
EOF
    port=$((port + 1))
  done
} >"$out/protocol.yaml.new"
if [[ -e "$out/run/results.db" && -e "$out/protocol.yaml" ]] && ! cmp -s "$out/protocol.yaml" "$out/protocol.yaml.new"; then
  echo "cpu-reference.sh: the protocol differs from the one $out/run began with (diff $out/protocol.yaml $out/protocol.yaml.new):" >&2
  echo "  run with the same MODEL_DIR and CPU_REF_* settings to resume, or remove $out/run to start again" >&2
  exit 2
fi
mv "$out/protocol.yaml.new" "$out/protocol.yaml"

# 3. The run (exit 0: every verdict passed, 1: one failed; both are a complete run).
if [[ ! -e "$out/run.done" ]]; then
  started=$(date +%s)
  set +e
  if [[ -e "$out/run/results.db" ]]; then
    run "$eb" run -quiet -resume "$out/run" >>"$out/run-stdout.txt" 2>>"$out/run.log"
  else
    run "$eb" run -quiet -protocol "$out/protocol.yaml" -out "$out/run" >"$out/run-stdout.txt" 2>"$out/run.log"
  fi
  rc=$?
  set -e
  echo "$(( $(date +%s) - started ))" >>"$out/run-seconds.txt"
  case $rc in
    0|1) [[ "${DRY:-0}" == 1 ]] || echo "$rc" >"$out/run.done" ;;
    *) log "extractbench run exited $rc (tail of $out/run.log below): run the same command again to resume"
       tail -n 20 "$out/run.log" >&2 || true
       exit "$rc" ;;
  esac
fi

# 4. compare against the reference, level 1, with the flips.
for ty in "${variants[@]:1}"; do
  set +e
  run "$eb" compare "$out/run:$ref" "$out/run:$ty" >"$out/compare-$ref-$ty.txt"
  run "$eb" compare -json "$out/run:$ref" "$out/run:$ty" >"$out/compare-$ref-$ty.json"
  rc=$?
  set -e
  [[ $rc == 0 || $rc == 1 || $rc == 4 ]] || { log "compare $ref $ty exited $rc"; exit "$rc"; }
done

# 5. memory: the calculator against each served file, and each GGUF tensor by tensor.
run "$eb" memory -model "$model" "$out/run" >"$out/memory.txt"
run "$eb" memory -json -model "$model" "$out/run" >"$out/memory.json"
for ty in "${variants[@]}"; do
  run "$eb" memory -model "$out/gguf/extract-llama-15m-$ty.gguf" >"$out/memory-gguf-$ty.txt"
  run "$eb" memory -json -model "$out/gguf/extract-llama-15m-$ty.gguf" >"$out/memory-gguf-$ty.json"
done

# 6. The README's tables.
run /usr/bin/python3 "$here/cpu_reference_table.py" --model "$model" --variants "${variants[*]}" "$out" >"$out/README.md.new"
[[ "${DRY:-0}" == 1 ]] || mv "$out/README.md.new" "$out/README.md"
log "done: $out/README.md"
}

main "$@"
