#!/usr/bin/env bash
# replicas-demo.sh: the same concurrency sweep against one built-in engine
# (engine.url) and against two replicas of it (engine.urls), each served by
# `extractbench engine serve` on its own port, to see the least-loaded
# dispatch spread the load and the throughput it buys (issue 15, replicas).
#
# Usage: scripts/replicas-demo.sh   (TIME_SCALE=0.05 LEVELS="1, 8, 16" PORT=8101 WORK=DIR)
#
# Measured on the shared 2-core machine (default corpus, 300 documents, one
# repetition, time scale 0.05; the client and both engines share the cores):
#   level  accepted/h one engine  two replicas  requests per replica (min–max)
#       1               89,840        89,419    150–150
#       8              169,450       278,500    148–152
#      16              186,122       332,904    148–152
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
work=${WORK:-$(mktemp -d /tmp/replicas-demo.XXXXXX)}
scale=${TIME_SCALE:-0.05}
levels=${LEVELS:-1, 8, 16}
p1=${PORT:-8101}
p2=$((p1 + 1))
go build -o "$work/extractbench" ./cmd/extractbench
eb=$work/extractbench
"$eb" engine serve -addr "127.0.0.1:$p1" -time-scale "$scale" 2>"$work/engine1.log" &
e1=$!
"$eb" engine serve -addr "127.0.0.1:$p2" -time-scale "$scale" 2>"$work/engine2.log" &
e2=$!
trap 'kill $e1 $e2 2>/dev/null || true' EXIT
sleep 1
sweep="{mode: concurrency, levels: [$levels], repetitions: 1, warmup: 4}"
cat >"$work/one.yaml" <<YAML
name: replicas-demo
sweep: $sweep
acceptance: {min_accepted: 0.9}
variants:
  - {name: one, engine: {url: "http://127.0.0.1:$p1", model: sim-8b}}
YAML
cat >"$work/two.yaml" <<YAML
name: replicas-demo
sweep: $sweep
acceptance: {min_accepted: 0.9}
variants:
  - {name: two, engine: {urls: ["http://127.0.0.1:$p1", "http://127.0.0.1:$p2"], model: sim-8b}}
YAML
for v in one two; do
  rm -rf "${work:?}/$v"
  "$eb" run -protocol "$work/$v.yaml" -out "$work/$v" -quiet || true
done
echo "results in $work/one and $work/two; per replica: extractbench report $work/two (report.md, Replicas)"
