#!/usr/bin/env bash
# unpack-reference.sh PACKDIR [DEST]: lays out what device-reference.sh packed (the files a
# device call brought back) as the committed reference, in DEST (default
# reference/h200/extract-llama-15m), replacing the previous run's files there:
#
#   run.tar.xz   sweep/results.db       -> results.db.xz (xz -9)
#                sweep/{requests,passes,telemetry}.parquet, raw_table.csv, report.{md,html},
#                engine-*.log           -> as they are
#                ceiling-*.json, compare-bf16-*.{txt,json}, memory.txt, plan.txt, agree-*.txt
#                train*.log             -> training/ (when the run trained)
#   reproduce.txt, gpu.txt              -> as they are
#   device.log                          -> run.log
#   search.tar.xz                       -> training/search/ (when recipes were searched)
#
# The packed model (its two shards and model-rest.tar) is checked against the committed
# model's SHA256SUMS: it says whether the swept weights are the committed ones, and does not
# copy them (a searched model replaces the committed one only by hand, with its training
# log). The README in DEST is left alone: its figures are written from the new files.
set -euo pipefail
pack=${1:?usage: unpack-reference.sh PACKDIR [DEST]}
root=$(cd "$(dirname "$0")/../.." && pwd)
dest=${2:-$root/reference/h200/extract-llama-15m}
model=$root/engines/transformers/model/extract-llama-15m
for f in run.tar.xz device.log; do
	[ -f "$pack/$f" ] || { echo "unpack-reference.sh: $pack/$f missing: not a finished device-reference.sh pack" >&2; exit 2; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xJf "$pack/run.tar.xz"
[ -f "$tmp/sweep/results.db" ] || { echo "unpack-reference.sh: $pack/run.tar.xz has no sweep/results.db: the sweep did not run" >&2; exit 2; }

mkdir -p "$dest"
# The previous run's files (everything but the README and the training history) go first,
# so that nothing of it stays beside the new run unnoticed.
find "$dest" -maxdepth 1 -type f ! -name README.md -delete
xz -9 -T1 -c "$tmp/sweep/results.db" >"$dest/results.db.xz"
for f in requests.parquet passes.parquet telemetry.parquet raw_table.csv report.md report.html; do
	if [ -f "$tmp/sweep/$f" ]; then cp "$tmp/sweep/$f" "$dest/"; fi
done
cp "$tmp"/sweep/engine-*.log "$dest/" 2>/dev/null || true
for f in "$tmp"/ceiling-*.json "$tmp"/compare-bf16-*.txt "$tmp"/compare-bf16-*.json "$tmp"/memory.txt "$tmp"/plan.txt "$tmp"/agree-*.txt; do
	if [ -f "$f" ]; then cp "$f" "$dest/"; fi
done
for f in reproduce.txt gpu.txt; do
	if [ -f "$pack/$f" ]; then cp "$pack/$f" "$dest/"; fi
done
cp "$pack/device.log" "$dest/run.log"
chmod u+w "$dest"/* # a device call's files come back read-only
if ls "$tmp"/train*.log >/dev/null 2>&1; then
	mkdir -p "$dest/training" && cp "$tmp"/train*.log "$dest/training/"
fi
if [ -f "$pack/search.tar.xz" ]; then
	mkdir -p "$dest/training/search" && tar -C "$dest/training/search" -xJf "$pack/search.tar.xz"
fi

# The swept weights against the committed model.
if ls "$pack"/model-0000*-of-0000*.safetensors >/dev/null 2>&1; then
	if (cd "$pack" && grep ' model-0000' "$model/SHA256SUMS" | sha256sum --check --quiet --status); then
		echo "weights: the committed model's ($(sha256sum "$model/SHA256SUMS" | cut -c1-12))"
	else
		echo "weights: NOT the committed model's: the figures in $dest are another model's"
	fi
fi
echo "unpacked $pack into $dest:"
(cd "$dest" && ls -la | tail -n +4)
grep -E '^(SAME|DIFFERENT)|^stage 1' "$dest/reproduce.txt" 2>/dev/null || true
