#!/bin/sh
# screenshot.sh renders the report of a real (simulated-engine) run in
# headless Chromium and saves testdata/screenshot.png. Run it from the
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
echo "wrote $here/testdata/screenshot.png"
