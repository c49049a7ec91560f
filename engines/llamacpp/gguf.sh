#!/usr/bin/env bash
# gguf.sh: makes the GGUF files of the committed model in the cache, checks each against
# gguf.sha256 and prints their paths (one a line, in the order asked):
#
#   engines/llamacpp/gguf.sh [TYPE...]      TYPE: bf16 (default), f16, q8_0, q4_0, q4_k_m
#
# bf16 and f16 come from convert.py, the others from llama-quantize of the bf16 file. A file
# already in the cache is checked, not rewritten. A type that gguf.sha256 lists must match it
# (a mismatch stops with both hashes); one it does not list (q4_k_m) is made and reported.
# UPDATE=1 rewrites gguf.sha256's lines for the types asked instead of checking them.
# Environment: LLAMACPP_BIN (default: what build.sh prints), LLAMACPP_CACHE as for build.sh,
# PYTHON (default /usr/bin/python3: Debian's, with python3-numpy), EXTRACT_MODEL (the model
# directory, default engines/transformers/model/extract-llama-15m), GGUF_DIR (where the files go,
# default the cache's gguf/MODELSHA12/, keyed by the model's SHA256SUMS),
# GGUF_SUMS (the pins, default gguf.sha256), STRICT_QUANT=1 (a tensor that falls back to another
# quantisation type than the one asked fails).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
model="${EXTRACT_MODEL:-$root/engines/transformers/model/extract-llama-15m}"
name="$(basename "$model")"
[[ -f "$model/SHA256SUMS" ]] || { echo "gguf.sh: $model/SHA256SUMS not found: EXTRACT_MODEL must be a train.py model directory" >&2; exit 2; }
sums="${GGUF_SUMS:-$here/gguf.sha256}"
python="${PYTHON:-/usr/bin/python3}"

log() { echo "gguf.sh: $*" >&2; }

src="$("$here/build.sh" --source)"
# The cache is keyed by the model (the sha256 of its SHA256SUMS, as /version reports it): two
# checkouts with different committed weights never serve each other's files under one name.
cache="${GGUF_DIR:-$(dirname "$src")/gguf/$(sha256sum "$model/SHA256SUMS" | cut -c1-12)}"
mkdir -p "$cache"

want_sum() { awk -v f="$1" '$2 == f { print $1 }' "$sums" 2>/dev/null || true; }

record() { # record FILE: puts FILE's sha256 line into gguf.sha256
  local f="$1" s
  s="$(sha256sum "$cache/$f" | cut -d' ' -f1)"
  { grep -v "  $f\$" "$sums" 2>/dev/null || true; echo "$s  $f"; } | sort -k2 > "$sums.tmp"
  mv "$sums.tmp" "$sums"
  log "recorded $f $s"
}

check() { # check FILE: compares with gguf.sha256
  local f="$1" want got
  want="$(want_sum "$f")"
  got="$(sha256sum "$cache/$f" | cut -d' ' -f1)"
  if [[ "${UPDATE:-0}" == 1 ]]; then
    record "$f"
  elif [[ -z "$want" ]]; then
    log "$f: sha256 $got (not in gguf.sha256)"
  elif [[ "$want" != "$got" ]]; then
    log "$f: sha256 $got, gguf.sha256 says $want"
    exit 1
  fi
}

make_float() { # make_float TYPE
  local f="$name-$1.gguf"
  if [[ ! -s "$cache/$f" ]]; then
    nice -n 19 "$python" "$here/convert.py" --gguf-py "$src/gguf-py" --model "$model" \
      --outtype "$1" --out "$cache/$f" >&2
  fi
  check "$f"
}

make_quant() { # make_quant TYPE: llama-quantize from the bf16 file
  local f="$name-$1.gguf" upper
  upper="$(tr '[:lower:]' '[:upper:]' <<<"$1")"
  make_float bf16
  if [[ ! -s "$cache/$f" ]]; then
    local bin="${LLAMACPP_BIN:-$("$here/build.sh")}"
    nice -n 19 "$bin/llama-quantize" "$cache/$name-bf16.gguf" "$cache/$f.tmp" "$upper" 1 >"$cache/$f.log" 2>&1 ||
      { tail -n 20 "$cache/$f.log" >&2; exit 1; }
    mv "$cache/$f.tmp" "$cache/$f"
  fi
  # A row that is not a multiple of the type's block falls back to another type (hidden 384:
  # README, "Q4_K_M does not fit"): say so, and with STRICT_QUANT=1 refuse the file.
  local fell
  fell="$(grep -c "falling back" "$cache/$f.log" 2>/dev/null || true)"
  if [[ "${fell:-0}" != 0 ]]; then
    log "$f: $fell tensors fell back to another type than $upper (see $cache/$f.log)"
    [[ "${STRICT_QUANT:-0}" != 1 ]] || exit 1
  fi
  check "$f"
}

[[ $# -gt 0 ]] || set -- bf16
for t in "$@"; do
  case "$t" in
    bf16|f16|f32) make_float "$t" ;;
    q8_0|q4_0|q4_k_m|q5_0|q5_k_m|q6_k) make_quant "$t" ;;
    *) log "unknown type $t (bf16, f16, f32, q8_0, q4_0, q4_k_m, q5_0, q5_k_m, q6_k)"; exit 2 ;;
  esac
  echo "$cache/$name-$t.gguf"
done
