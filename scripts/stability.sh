#!/usr/bin/env bash
# stability.sh: does the default protocol give the same decisions, run after
# run, idle and on a loaded machine? (issue 38; MEASUREMENT.md "Stable
# judgements"). It runs `extractbench run` on the built-in defaults IDLE
# times on the machine as it is, then LOADED times under `stress-ng --cpu
# 8`, and prints one line per run: each variant's verdict, interactive and
# offline recommendation, the paired verdict, the exit code, the load
# average and the wall time; then whether every run agrees with the first.
# Exit 0 when all agree, 1 when one differs, 2 when it cannot run.
#
# Usage: scripts/stability.sh [IDLE [LOADED]]   (default 10 10)
# Needs jq and stress-ng (Debian: apt-get install jq stress-ng). Takes
# about a minute and a half a run idle and three to four loaded, on 2 cores.
set -euo pipefail
IDLE=${1:-10}
LOADED=${2:-10}
cd "$(git rev-parse --show-toplevel)"
for tool in jq stress-ng; do
  command -v "$tool" >/dev/null || { echo "stability.sh: needs $tool (apt-get install $tool)" >&2; exit 2; }
done
work=$(mktemp -d /tmp/stability.XXXXXX)
stress_pid=""
cleanup() { [ -n "$stress_pid" ] && kill "$stress_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
go build -o "$work/extractbench" ./cmd/extractbench

# decisions FILE: the decisions of one run's -json summary, one line.
decisions() {
  jq -r '
    [.variants[] | "\(.variant) \(.state) interactive \(.series[0].recommendation.recommended // 0) offline \(.series[0].recommendation.offline.level // 0)"]
    + [(.paired // [])[] | "paired \(.variant) \(if .equivalent then "EQUIVALENT" elif .inconclusive then "INCONCLUSIVE" else "NOT-EQUIVALENT" end)"]
    | join("; ")' "$1"
}

printf '%-4s %-6s %5s %6s %5s  %s\n' run load load1 wall exit decisions
first=""
agree=0
total=0
run_one() { # run_one N LABEL
  local out="$work/run$1" start rc=0 load
  start=$(date +%s)
  "$work/extractbench" run -out "$out" -quiet -json >"$work/run$1.json" 2>"$work/run$1.err" || rc=$?
  load=$(cut -d' ' -f1 /proc/loadavg)
  local d
  d=$(decisions "$work/run$1.json" 2>/dev/null || echo "no summary: $(tail -n 1 "$work/run$1.err")")
  d="$d; exit $rc"
  printf '%-4s %-6s %5s %5ss %5s  %s\n' "$1" "$2" "$load" "$(( $(date +%s) - start ))" "$rc" "$d"
  total=$((total + 1))
  if [ -z "$first" ]; then first=$d; fi
  if [ "$d" = "$first" ]; then agree=$((agree + 1)); fi
  rm -rf "$out"
}
n=0
for _ in $(seq 1 "$IDLE"); do n=$((n + 1)); run_one "$n" idle; done
if [ "$LOADED" -gt 0 ]; then
  stress-ng --cpu 8 --quiet >/dev/null 2>&1 &
  stress_pid=$!
  sleep 20 # let the load average climb
  for _ in $(seq 1 "$LOADED"); do n=$((n + 1)); run_one "$n" loaded; done
fi
echo "$agree of $total runs agree with run 1"
[ "$agree" = "$total" ]
