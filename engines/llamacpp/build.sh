#!/usr/bin/env bash
# build.sh: builds a real llama.cpp (llama-server, llama-quantize, llama-tokenize, llama-bench)
# from the source bundle that the npm package node-llama-cpp ships, pinned by version and by the
# registry's sha512 integrity hash, into a cache outside the repository keyed by version.
#
#   engines/llamacpp/build.sh                 CPU build; fetches the tarball with `npm pack`
#   engines/llamacpp/build.sh --cuda BUNDLE   CUDA build for the H200 (sm_90) from a
#                                             gitRelease.bundle or node-llama-cpp-*.tgz already
#                                             on the machine (the GPU machine has no internet)
#   engines/llamacpp/build.sh --source        only clone the source (for convert.py's gguf-py)
#
# The last line of stdout is the bin directory; nothing else goes to stdout. A bin directory that
# already holds the binaries asked for (LLAMACPP_TARGETS) is reused without rebuilding. Environment:
#   LLAMACPP_CACHE   cache root (default ${XDG_CACHE_HOME:-$HOME/.cache}/extractbench/llamacpp)
#   LLAMACPP_JOBS    parallel compile jobs (default 2: the development machine is shared)
#   LLAMACPP_SRC     an unpacked source tree (pack-source.sh) instead of the bundle
#   LLAMACPP_TARGETS the binaries to build and require (default all four; .ci/run asks for
#                    llama-server and llama-quantize only, the two its real-engine test runs)
set -euo pipefail

readonly NPM_VERSION="3.22.1"
# npm view node-llama-cpp@3.22.1 dist.integrity
readonly NPM_INTEGRITY="sha512-bltIipuWmc123H7tMIgDGKSsSrhmhlQYeVUC48XTjVW7XGJJiJJyCdlTMzQ/LiWoPkGDpcL4FviDpgw7qfTiDw=="
# git bundle list-heads on the bundle above: the one commit the release ships (squashed history).
readonly LLAMA_COMMIT="de3ff815ea7d559ee917f063901b8986f038abc6"
read -r -a TARGETS <<<"${LLAMACPP_TARGETS:-llama-server llama-quantize llama-tokenize llama-bench}"
readonly TARGETS
for t in "${TARGETS[@]}"; do
  case "$t" in
    llama-server|llama-quantize|llama-tokenize|llama-bench) ;;
    *) echo "build.sh: LLAMACPP_TARGETS: unknown target $t (llama-server, llama-quantize, llama-tokenize, llama-bench)" >&2; exit 2 ;;
  esac
done

mode=cpu
bundle_from=""
case "${1:-}" in
  "") ;;
  --cuda)
    mode=cuda
    bundle_from="${2:-}"
    if [[ -z "$bundle_from" && -z "${LLAMACPP_SRC:-}" ]]; then
      echo "--cuda needs the path of gitRelease.bundle or node-llama-cpp-${NPM_VERSION}.tgz, or LLAMACPP_SRC" >&2
      exit 2
    fi
    ;;
  --source) mode=source ;;
  *) echo "usage: $0 [--cuda BUNDLE|--source]" >&2; exit 2 ;;
esac

cache="${LLAMACPP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/extractbench/llamacpp}/${NPM_VERSION}"
# LLAMACPP_SRC: a source tree already unpacked (pack-source.sh's tarball, on a machine that has
# neither the registry nor the 35 MB bundle); used as it is, its commit named by its .commit file.
src="${LLAMACPP_SRC:-$cache/src}"
case "$mode" in
  cuda) bin="$cache/bin-cuda"; build="$cache/build-cuda" ;;
  *) bin="$cache/bin"; build="$cache/build-cpu" ;;
esac
jobs="${LLAMACPP_JOBS:-2}"

log() { echo "build.sh: $*" >&2; }

have_all() {
  local t
  for t in "${TARGETS[@]}"; do [[ -x "$bin/$t" ]] || return 1; done
}

if [[ "$mode" != source ]] && have_all; then
  log "reusing $bin"
  echo "$bin"
  exit 0
fi

# verify_tarball FILE: the npm integrity string is "sha512-" + base64 of the raw digest.
verify_tarball() {
  local got
  got="sha512-$(openssl dgst -sha512 -binary "$1" | base64 -w0)"
  if [[ "$got" != "$NPM_INTEGRITY" ]]; then
    log "integrity mismatch for $1: got $got, want $NPM_INTEGRITY"
    exit 1
  fi
  log "tarball integrity ok ($NPM_INTEGRITY)"
}

# fetch_bundle: leaves $cache/gitRelease.bundle from a verified tarball.
fetch_bundle() {
  local b="$cache/gitRelease.bundle"
  [[ -s "$b" ]] && return 0
  mkdir -p "$cache"
  local tmp
  tmp="$(mktemp -d)"
  local tgz="$tmp/node-llama-cpp-$NPM_VERSION.tgz"
  if [[ -n "$bundle_from" ]]; then
    case "$bundle_from" in
      *.tgz) cp "$bundle_from" "$tgz" ;;
      *) # a bare bundle cannot be checked against the npm hash; its commit is checked below
        log "using bare bundle $bundle_from (tarball integrity not checkable; commit is)"
        cp "$bundle_from" "$b"; rm -rf "$tmp"; return 0 ;;
    esac
  else
    (cd "$tmp" && npm pack --silent "node-llama-cpp@$NPM_VERSION" >/dev/null)
    # The registry's own statement of the hash, when reachable, must agree with the pin.
    local reg
    if reg="$(npm view "node-llama-cpp@$NPM_VERSION" dist.integrity 2>/dev/null)" && [[ -n "$reg" && "$reg" != "$NPM_INTEGRITY" ]]; then
      log "registry integrity $reg differs from the pinned $NPM_INTEGRITY"
      exit 1
    fi
  fi
  verify_tarball "$tgz"
  tar -xzf "$tgz" -C "$tmp" package/llama/gitRelease.bundle
  mv "$tmp/package/llama/gitRelease.bundle" "$b"
  rm -rf "$tmp"
}

checkout_source() {
  if [[ -n "${LLAMACPP_SRC:-}" ]]; then
    if [[ "$(cat "$src/.commit" 2>/dev/null)" != "$LLAMA_COMMIT" ]]; then
      log "LLAMACPP_SRC=$src is not llama.cpp $LLAMA_COMMIT (its .commit file says: $(cat "$src/.commit" 2>/dev/null || echo nothing))"
      exit 1
    fi
    # No .git there, so llama.cpp's build-info.cmake would say b0-unknown: give it what the
    # bundle's squashed history gives (one commit), so both builds report b1-<short commit>.
    if [[ ! -d "$src/.git" ]]; then
      sed -i -e "s/^set(BUILD_NUMBER 0)/set(BUILD_NUMBER 1)/" \
        -e "s/^set(BUILD_COMMIT \"unknown\")/set(BUILD_COMMIT \"${LLAMA_COMMIT:0:7}\")/" "$src/cmake/build-info.cmake"
    fi
    return 0
  fi
  if [[ -d "$src/.git" ]] && [[ "$(git -C "$src" rev-parse HEAD)" == "$LLAMA_COMMIT" ]]; then
    return 0
  fi
  fetch_bundle
  local heads
  heads="$(git bundle list-heads "$cache/gitRelease.bundle")"
  if ! grep -q "^$LLAMA_COMMIT " <<<"$heads"; then
    log "bundle does not hold $LLAMA_COMMIT (it holds: $heads)"
    exit 1
  fi
  rm -rf "$src"
  git clone --quiet --no-checkout "$cache/gitRelease.bundle" "$src"
  git -C "$src" -c advice.detachedHead=false checkout --quiet "$LLAMA_COMMIT"
  log "source at $src ($LLAMA_COMMIT)"
}

need_cmake() {
  command -v cmake >/dev/null && return 0
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    log "installing cmake with apt-get"
    apt-get install -y cmake >&2
  else
    log "cmake is missing: apt-get install -y cmake (as root)"
    exit 1
  fi
}

checkout_source
if [[ "$mode" == source ]]; then
  echo "$src"
  exit 0
fi
need_cmake

flags=(
  -DCMAKE_BUILD_TYPE=Release
  -DBUILD_SHARED_LIBS=OFF          # self-contained binaries: bin/ can be copied on its own
  -DLLAMA_BUILD_TESTS=OFF
  -DLLAMA_BUILD_EXAMPLES=OFF
  -DLLAMA_OPENSSL=OFF              # no HTTPS model downloads: we only serve local files
  -DLLAMA_BUILD_UI=OFF             # the web UI needs npm ci; the API does not need it
  -DLLAMA_USE_PREBUILT_UI=OFF      # and no download of it from Hugging Face either
)
if [[ "$mode" == cuda ]]; then
  flags+=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_NATIVE=OFF)
else
  flags+=(-DGGML_NATIVE=ON)
fi

started=$(date +%s)
log "configuring $build (${flags[*]})"
nice -n 19 cmake -S "$src" -B "$build" "${flags[@]}" >&2
log "building ${TARGETS[*]} with -j$jobs"
nice -n 19 cmake --build "$build" --config Release -j"$jobs" --target "${TARGETS[@]}" >&2
mkdir -p "$bin"
for t in "${TARGETS[@]}"; do
  install -m 0755 "$build/bin/$t" "$bin/$t"
done
log "built in $(( $(date +%s) - started ))s"
echo "$bin"
