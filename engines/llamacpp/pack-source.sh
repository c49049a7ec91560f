#!/usr/bin/env bash
# pack-source.sh OUT.tar.xz: the pinned llama.cpp source that build.sh checked out, without what a
# build of the four binaries and convert.py's gguf-py never read (models/, docs/, tests/,
# benches/, examples/: 140 of its 175 MB), as one xz tarball of about 8.5 MB with a .commit file.
# It is how the source reaches a machine with no registry and a 64 MiB transfer limit (the H200):
# there, unpack it and give build.sh LLAMACPP_SRC=DIR (device-h200.sh does).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${1:?usage: pack-source.sh OUT.tar.xz}"
src="$("$here/build.sh" --source)"
commit="$(git -C "$src" rev-parse HEAD)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
git -C "$src" archive --format=tar --prefix=llama.cpp/ HEAD -- \
  ':(exclude)models' ':(exclude)docs' ':(exclude)tests' ':(exclude)benches' ':(exclude)examples' . >"$tmp/src.tar"
mkdir -p "$tmp/llama.cpp" && echo "$commit" >"$tmp/llama.cpp/.commit"
tar -rf "$tmp/src.tar" -C "$tmp" llama.cpp/.commit
xz -T2 -6 -c "$tmp/src.tar" >"$out"
echo "pack-source.sh: $out ($(du -h "$out" | cut -f1), llama.cpp $commit)" >&2
