#!/usr/bin/env bash
# cold-build.sh: times a cold `go build ./cmd/extractbench` (an empty Go
# build cache; the module cache as it is) and says where its CPU time goes,
# from `go build -debug-actiongraph`. CPU time (user + system) is the figure
# to compare: on a shared machine the wall time mostly measures the others.
#
# Usage: scripts/cold-build.sh   (TOP=15; DOWNLOAD=1 also times the module
#        download into an empty module cache, through the Go module proxy)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
work=$(mktemp -d /tmp/cold-build.XXXXXX)
trap 'GOMODCACHE=$work/mod go clean -modcache >/dev/null 2>&1 || true; rm -rf "$work"' EXIT  # the download's cache only: its files are read-only
if [ "${DOWNLOAD:-0}" = 1 ]; then
  # go list -deps downloads exactly the modules the build needs.
  GOMODCACHE=$work/mod GOFLAGS=-mod=mod GOCACHE=$work/cache-dl \
    /usr/bin/time -f 'download: %e s wall' go list -deps ./cmd/extractbench >/dev/null 2>"$work/dl.log" || { cat "$work/dl.log" >&2; exit 1; }
  tail -1 "$work/dl.log"
  echo "downloaded: $(find "$work/mod/cache/download" -name '*.zip' | wc -l) module zips, $(du -sm "$work/mod/cache/download" | cut -f1) MB"
  GOMODCACHE=$work/mod go clean -modcache
fi
GOCACHE=$work/cache /usr/bin/time -f 'cold build: %e s wall, %U s user + %S s system CPU' \
  go build -debug-actiongraph="$work/actions.json" -o "$work/extractbench" ./cmd/extractbench
go run ./scripts/actiongraph -top "${TOP:-15}" "$work/actions.json"
