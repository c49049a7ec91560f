#!/bin/sh
# screenshot.sh renders the report of a real (simulated-engine) run in
# headless Chromium and saves testdata/screenshot.png (the page's top 2600
# px) and testdata/first-screen-1400x900.png and -1000x800.png (the first
# screen at two window sizes). The committed first-screen pictures are of
# the default run instead (`extractbench run`, no protocol: bf16 and int4,
# int4 NOT EQUIVALENT), re-encoded with a 256-colour palette to stay small.
# Run it from the
# repository root after a change to the report's look:
#   sh results/report/screenshot.sh
# It needs Debian's chromium (apt-get install -y chromium) and takes about
# a minute: a short sweep of the embedded corpus on the built-in engine.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/extractbench" ./cmd/extractbench
"$work/extractbench" run -quiet -protocol "$here/testdata/screenshot-protocol.yaml" -out "$work/run"
"$work/extractbench" report "$work/run"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --disable-dev-shm-usage --hide-scrollbars --user-data-dir="$work/profile" \
  --virtual-time-budget=5000 --window-size=1400,2600 \
  --screenshot="$here/testdata/screenshot.png" "file://$work/run/report.html"
for size in 1400x900 1000x800; do
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-dev-shm-usage --user-data-dir="$work/profile" \
    --virtual-time-budget=5000 --window-size="$(echo $size | tr x ,)" \
    --screenshot="$here/testdata/first-screen-$size.png" "file://$work/run/report.html"
done
echo "wrote $here/testdata/screenshot.png and $here/testdata/first-screen-*.png"
