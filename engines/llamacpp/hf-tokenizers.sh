#!/usr/bin/env bash
# hf-tokenizers.sh: Hugging Face's tokenizers library (its Rust core, the release transformers
# 5.17 uses on the H200: 0.23) for this machine, which has no PyPI: the npm package
# tokenizers@0.23.2 ships the same core as a Node addon. Unpacked into
# ${XDG_CACHE_HOME:-~/.cache}/extractbench/tokenizers/0.23.2/package (reused when present), its
# tarball checked against the pinned sha512; prints that directory. hf_encode.js uses it to
# encode as tokenizer.json says (compare_tokens.py --hf).
set -euo pipefail
version=0.23.2
integrity="sha512-OS99VXTXuGuyUncICcS0hEawgKQlrFVKNU+UlzRsTN03RpOeJiCmcai5nKg3JrdIvUDo7/RC5puVEjlJd2e5oA=="
dir="${XDG_CACHE_HOME:-$HOME/.cache}/extractbench/tokenizers/$version"
if [[ ! -f "$dir/package/index.js" ]]; then
  command -v npm >/dev/null || { echo "hf-tokenizers.sh: npm is needed" >&2; exit 1; }
  mkdir -p "$dir"
  (cd "$dir" && npm pack --silent "tokenizers@$version" >/dev/null)
  got="sha512-$(openssl dgst -sha512 -binary "$dir/tokenizers-$version.tgz" | base64 -w0)"
  if [[ "$got" != "$integrity" ]]; then
    echo "hf-tokenizers.sh: tokenizers-$version.tgz is $got, pinned $integrity" >&2
    exit 1
  fi
  tar -xzf "$dir/tokenizers-$version.tgz" -C "$dir"
fi
echo "$dir/package"
