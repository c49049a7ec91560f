#!/usr/bin/env bash
# unpack-margin.sh PACKDIR [DEST]: lays out what device-margin.sh packed as the committed
# reference (default reference/h200/margin), replacing the previous run's files there and
# keeping its README.md (a template whose figures are written from the new files):
#
#   runs.tar.xz   each run directory (<card>/c<L>/, <card>/context/, extract-llama-15m-capped/run/)
#                 -> its results.db as results.db.xz (xz -9; the readers take it as it is),
#                    engine logs, protocols and version.json as they are; the Parquet and CSV
#                    exports are left out (results.db holds them: `extractbench export`)
#   select.md, margins.json, steps.txt, predictions.txt, gpu.txt -> as they are
#   device.log    -> run.log
#
# Then `extractbench select DEST/*/c* DEST/*/context DEST/extract-llama-15m-capped/run` rebuilds
# select.md from the committed files.
set -euo pipefail
pack=${1:?usage: unpack-margin.sh PACKDIR [DEST]}
root=$(cd "$(dirname "$0")/../.." && pwd)
dest=${2:-$root/reference/h200/margin}
for f in runs.tar.xz device.log steps.txt; do
	[ -f "$pack/$f" ] || { echo "unpack-margin.sh: $pack/$f missing: not a finished device-margin.sh pack" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xJf "$pack/runs.tar.xz"
mkdir -p "$dest"
find "$dest" -mindepth 1 ! -name README.md -delete
(cd "$tmp" && find . -type f ! -name '*.parquet' ! -name raw_table.csv ! -name dry-config.json) | while read -r f; do
	mkdir -p "$dest/$(dirname "$f")"
	if [ "$(basename "$f")" = results.db ]; then
		xz -9 -T1 -c "$tmp/$f" >"$dest/$f.xz"
	else
		cp "$tmp/$f" "$dest/$f"
	fi
done
for f in select.md margins.json steps.txt predictions.txt gpu.txt; do
	if [ -f "$pack/$f" ]; then cp "$pack/$f" "$dest/"; fi
done
cp "$pack/device.log" "$dest/run.log"
echo "unpack-margin.sh: $(find "$dest" -name results.db.xz | wc -l) runs in $dest ($(du -sh "$dest" | cut -f1))"
