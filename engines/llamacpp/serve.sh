#!/usr/bin/env bash
# serve.sh: runs llama-server on the committed model's GGUF, as the protocols' start command:
#
#   engines/llamacpp/serve.sh TYPE PORT [llama-server flags...]     TYPE as for gguf.sh
#
# The binary is $LLAMACPP_BIN/llama-server (default: the CPU build in build.sh's cache; it must
# be built already: serve.sh never starts a 20-minute build inside a ready_timeout). The GGUF
# comes from gguf.sh (made in seconds when missing, checked against gguf.sha256). The server
# replaces this shell (exec), so the start command's pid is the server's.
#   LLAMACPP_CTX       total KV context, split over the slots (default 32768: 8,192 a slot)
#   LLAMACPP_PARALLEL  slots (default 4)
#   LLAMACPP_SLOT_DIR  llama-server's --slot-save-path (default $TMPDIR/extractbench-llama-slots):
#                      without one this build refuses POST /slots/{id}?action=erase (501), the
#                      reset a run asks before every pass (protocol cache: reset, MEASUREMENT.md
#                      section 12); nothing is saved there unless a client asks action=save
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
type="${1:?usage: serve.sh TYPE PORT [llama-server flags...]}"
port="${2:?usage: serve.sh TYPE PORT [llama-server flags...]}"
shift 2

cache="${LLAMACPP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/extractbench/llamacpp}/3.22.1"
bin="${LLAMACPP_BIN:-$cache/bin}"
if [[ ! -x "$bin/llama-server" ]]; then
  echo "serve.sh: no $bin/llama-server: run engines/llamacpp/build.sh (CPU) or set LLAMACPP_BIN" >&2
  exit 1
fi
gguf="$(LLAMACPP_BIN="$bin" "$here/gguf.sh" "$type")"
slots="${LLAMACPP_SLOT_DIR:-${TMPDIR:-/tmp}/extractbench-llama-slots}"
mkdir -p "$slots"

exec "$bin/llama-server" -m "$gguf" --alias extract-llama-15m \
  --host 127.0.0.1 --port "$port" \
  -c "${LLAMACPP_CTX:-32768}" --parallel "${LLAMACPP_PARALLEL:-4}" \
  --metrics --slots --slot-save-path "$slots" "$@"
