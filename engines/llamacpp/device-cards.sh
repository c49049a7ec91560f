#!/usr/bin/env bash
# device-cards.sh CARRY WORK PACK: issue 30's emulated cards for llama.cpp, on the lent H200, as
# one detached job. llama.cpp sizes its KV cache whole at start from the total context it is
# given (-c), shared by its slots (--parallel N: -c / N tokens each), so its memory boundary on a
# card is the most slots of SLOT_CONTEXT tokens whose start-up allocation fits: weights, the KV
# cache, the compute buffers and its CUDA context. llama.cpp has no allocator cap, so the card is
# emulated by balloon.py, which holds all but the card's bytes of the device in another process
# ("emulated <card> on H200: memory only; bandwidth and compute are the H200's").
#
# Per card (CARDS_GB, datasheet decimal GB) N grows 1, 2, 4, ... up to MAX_SLOTS, then is
# bisected between the last N that served and the first that did not: an N served when
# llama-server answered /health and one request of ~6,000 prompt tokens; it did not when the
# server exited (cudaMalloc failed: its log says which buffer) or never became healthy. Each
# start's log lines on its buffers and the device memory it took (nvidia-smi's used memory
# after its start less before it) go to PACK/starts.tsv; PACK/cards.tsv has one line per card:
# the most slots that served and the first that did not. The calculator's side
# (`memory -model GGUF -cache static -utilisation 1`) is computed beside it afterwards, on any
# machine: reference/h200/margin/llamacpp/README.md.
#
# CARRY holds llama-src.tar.xz (pack-source.sh). The model is the committed one's bf16 GGUF,
# made here by gguf.sh and checked against gguf.sha256.
#
#   setsid nohup bash engines/llamacpp/device-cards.sh .llcarry /tmp/c /tmp/c/pack >/tmp/c.out 2>&1 </dev/null &
#
# LLAMACPP_BIN and GGUF given: no build, that server and file (a rehearsal elsewhere, with
# BALLOON=a stand-in for balloon.py). PACK.done marks the end. CARDS_GB (default "2 4 8"), SLOT_CONTEXT (default 8192, the model's
# context), MAX_SLOTS (default 256, llama.cpp's most sequences), LLAMACPP_JOBS (default 16).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
carry="$(cd "${1:?usage: device-cards.sh CARRY WORK PACK}" && pwd)" || { echo "device-cards.sh: CARRY $1: no such folder" >&2; exit 2; }
work="${2:?usage: device-cards.sh CARRY WORK PACK}"
pack="${3:?usage: device-cards.sh CARRY WORK PACK}"
mkdir -p "$work" "$pack"
work="$(cd "$work" && pwd)"
pack="$(cd "$pack" && pwd)"
rm -f "$pack.done"
cards="${CARDS_GB:-2 4 8}"
ctx="${SLOT_CONTEXT:-8192}"
max_slots="${MAX_SLOTS:-256}"
port=8093
steps="$pack/steps.txt"
: >"$steps"
finish() { echo "status $1" >>"$steps"; touch "$pack.done"; exit "$1"; }
step() { # step NAME CMD...: runs CMD, its wall time to steps.txt
  local name=$1 t0=$SECONDS rc
  shift
  "$@"
  rc=$?
  echo "$name rc=$rc $((SECONDS - t0)) s" >>"$steps"
  return $rc
}

{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  nvcc --version | tail -n 1
  python3 -c 'import torch; print("torch", torch.__version__)'
  echo "cores $(nproc)"
} >"$pack/env.txt" 2>&1

if [[ -n "${LLAMACPP_BIN:-}" && -n "${GGUF:-}" ]]; then # given (a rehearsal on another machine)
  bin=$LLAMACPP_BIN gguf=$GGUF
else
  tar -xJf "$carry/llama-src.tar.xz" -C "$work" || finish 1
  export LLAMACPP_SRC="$work/llama.cpp" LLAMACPP_CACHE="$work/cache" LLAMACPP_JOBS="${LLAMACPP_JOBS:-16}"
  step build bash -c "LLAMACPP_TARGETS=llama-server '$here/build.sh' --cuda >'$work/bin.txt' 2>'$work/build.log'" ||
    { tail -n 40 "$work/build.log" >"$pack/build-tail.log"; finish 1; }
  bin="$(tail -n 1 "$work/bin.txt")"
  gguf="$(step gguf env PYTHON=python3 LLAMACPP_BIN="$bin" "$here/gguf.sh" bf16 2>"$pack/gguf.log" | tail -n 1)"
  [[ -f "$gguf" ]] || finish 1
fi
echo "gguf $gguf" >>"$steps"

used_mib() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -n 1; }
prompt="$(python3 -c 'print(" ".join(f"item {i} costs {i * 7 % 1000}.{i % 100:02d}" for i in range(500)))')"

# try N LOG: 0 when llama-server with N slots of ctx tokens started and served one request.
try() {
  local n=$1 log=$2 before pid ok=1 t0=$SECONDS
  before=$(used_mib)
  "$bin/llama-server" -m "$gguf" -ngl 99 --cache-ram 0 -c $((n * ctx)) --parallel "$n" --host 127.0.0.1 --port "$port" >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 180); do
    kill -0 "$pid" 2>/dev/null || break
    if python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
      python3 - "$port" "$prompt" >>"$log" 2>&1 <<'EOF' && ok=0
import json, sys, urllib.request
req = urllib.request.Request(f"http://127.0.0.1:{sys.argv[1]}/completion", json.dumps({"prompt": sys.argv[2], "n_predict": 4}).encode(), {"Content-Type": "application/json"})
r = json.load(urllib.request.urlopen(req, timeout=120))
print("device-cards.sh: served, prompt tokens", r["timings"]["prompt_n"])
sys.exit(0 if r["timings"]["prompt_n"] > 1000 else 1)
EOF
      break
    fi
    sleep 0.5
  done
  local took=$(( $(used_mib) - before ))
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  local why
  # llama-server's first error line ("E" after its timestamp; its "W common_fit_params: failed to
  # fit" warning comes with -ngl 99 whether or not the rest fits), then the CUDA call that failed
  why=$(grep -m 2 -E '^[0-9.]+ E ' "$log" | sed -E 's/^[0-9.]+ E +//' | paste -sd ' ' | tr '\t' ' ' | cut -c1-240)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$card" "$n" "$([[ $ok == 0 ]] && echo served || echo failed)" "$took" "$((SECONDS - t0))" "${why:--}" >>"$pack/starts.tsv"
  return $ok
}

printf 'card_gb\tslots\tresult\tdevice_mib_taken\tseconds\tfirst_failure_line\n' >"$pack/starts.tsv"
printf 'card_gb\tfree_bytes\tslot_context\tmost_slots_served\tfirst_slots_failed\n' >"$pack/cards.tsv"
mkdir -p "$work/logs"
for card in $cards; do
  t0=$SECONDS
  rm -f "$work/ready"
  python3 "${BALLOON:-$here/balloon.py}" "$card" "$work/ready" >"$work/logs/balloon-$card.log" 2>&1 &
  bpid=$!
  for _ in $(seq 1 120); do [[ -s "$work/ready" ]] && break; kill -0 "$bpid" 2>/dev/null || break; sleep 0.5; done
  [[ -s "$work/ready" ]] || { echo "card $card: no balloon" >>"$steps"; kill "$bpid" 2>/dev/null; continue; }
  free=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["free_bytes"])' "$work/ready")
  cp "$work/ready" "$work/logs/balloon-$card.json"
  good=0 bad=0 n=1
  while (( n <= max_slots )); do
    if try "$n" "$work/logs/card$card-n$n.log"; then good=$n; n=$((n * 2)); else bad=$n; break; fi
  done
  if (( bad == 0 && good < max_slots )); then # 1, 2, ... passed max_slots: try max_slots itself
    if try "$max_slots" "$work/logs/card$card-n$max_slots.log"; then good=$max_slots; else bad=$max_slots; fi
  fi
  while (( bad > 0 && bad - good > 1 )); do
    n=$(((good + bad) / 2))
    if try "$n" "$work/logs/card$card-n$n.log"; then good=$n; else bad=$n; fi
  done
  printf '%s\t%s\t%s\t%s\t%s\n' "$card" "$free" "$ctx" "$good" "${bad:-0}" >>"$pack/cards.tsv"
  echo "card $card GB: served $good, failed $bad, $((SECONDS - t0)) s" >>"$steps"
  kill "$bpid" 2>/dev/null
  wait "$bpid" 2>/dev/null
done
tar -C "$work/logs" -cJf "$pack/logs.tar.xz" .
finish 0
