#!/usr/bin/env bash
# crash-soak.sh: kill -9 a run at N random points, resume it (sometimes
# killing the resume too) until it completes, and check each results
# directory against an uninterrupted run of the same protocol: same number
# of passes and requests, no duplicate (pass, document), no interrupted or
# incomplete row left, SQLite integrity ok, Parquet row counts equal to the
# tables'. Not part of `go test`: it takes minutes.
#
# Usage: scripts/crash-soak.sh [N]      (N kill points, default 50; SEED=n for another draw)
set -euo pipefail
N=${1:-50}
SEED=${SEED:-17}
RANDOM=$SEED
cd "$(git rev-parse --show-toplevel)"
work=$(mktemp -d /tmp/crash-soak.XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/extractbench" ./cmd/extractbench
go build -o "$work/soakcheck" ./scripts/soakcheck
eb=$work/extractbench

cat >"$work/soak.yaml" <<'YAML'
name: crash-soak
corpus: default
prompt:
  system: "You extract fields from business documents. Answer with JSON only."
  user: "Extract date (issue date, YYYY-MM-DD), amount (total due) and category.\n\n{{document}}"
generation: {max_tokens: 128, temperature: 0, seed: 7}
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1, 8, 32], repetitions: 2, warmup: 4}
request_timeout: 30s
interrupt_grace: 1s
variants:
  - name: bf16
    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0.002}}
YAML

start=$(date +%s%N)
"$eb" run -quiet -protocol "$work/soak.yaml" -out "$work/ref" >/dev/null || [ $? -eq 1 ]
span_ms=$(( ($(date +%s%N) - start) / 1000000 ))
ref=$("$work/soakcheck" "$work/ref")
ref_passes=$(jq .passes <<<"$ref"); ref_requests=$(jq .requests <<<"$ref")
echo "reference run: ${span_ms} ms, $ref_passes passes, $ref_requests requests"

# run_killed DIR ARGS...: start extractbench, kill -9 it after a random
# delay within the reference run's span; returns its exit status.
run_killed() {
  local delay_ms=$(( (RANDOM * 32768 + RANDOM) % span_ms + 1 ))
  "$eb" "$@" -quiet >/dev/null 2>>"$work/stderr" &
  local pid=$!
  sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

kills=0 resumes=0 complete=0 bad=0 dups=0 integrity_bad=0 parquet_bad=0 rows_bad=0
for i in $(seq 1 "$N"); do
  d=$work/t$i
  run_killed run -protocol "$work/soak.yaml" -out "$d"; kills=$((kills + 1))
  # Kill a third of the resumes too: a crash during recovery.
  if (( RANDOM % 3 == 0 )) && [ -f "$d/results.db" ]; then
    run_killed run -resume "$d"; kills=$((kills + 1))
  fi
  for _ in 1 2 3; do
    if [ -f "$d/results.db" ]; then
      rc=0; "$eb" run -quiet -resume "$d" >/dev/null 2>>"$work/stderr" || rc=$?
      # Killed before the run row was written: nothing to resume, start it.
      if [ $rc -eq 2 ] && grep -q "no run in" "$work/stderr"; then
        rm -f "$d/results.db"*; : >"$work/stderr"
        rc=0; "$eb" run -quiet -protocol "$work/soak.yaml" -out "$d" >/dev/null 2>>"$work/stderr" || rc=$?
      fi
    else
      rc=0; "$eb" run -quiet -protocol "$work/soak.yaml" -out "$d" >/dev/null 2>>"$work/stderr" || rc=$?
    fi
    resumes=$((resumes + 1))
    [ $rc -le 1 ] && break
  done
  got=$("$work/soakcheck" "$d")
  ok=1
  [ "$(jq -r .integrity <<<"$got")" = ok ] || { integrity_bad=$((integrity_bad + 1)); ok=0; }
  dups=$((dups + $(jq .duplicate_requests <<<"$got")))
  [ "$(jq .duplicate_requests <<<"$got")" = 0 ] || ok=0
  if [ "$(jq .passes <<<"$got")" != "$ref_passes" ] || [ "$(jq .requests <<<"$got")" != "$ref_requests" ] \
     || [ "$(jq '.incomplete_passes + .interrupted_requests + .pass_docs_mismatch + .pass_fields_mismatch' <<<"$got")" != 0 ] \
     || [ "$(jq -r '.statuses.complete // 0' <<<"$got")" != 1 ] || [ "$(jq .runs <<<"$got")" != 1 ]; then
    rows_bad=$((rows_bad + 1)); ok=0
  fi
  if [ "$(jq '(.parquet_rows["requests.parquet"] == .requests) and (.parquet_rows["passes.parquet"] == .passes) and (.parquet_rows["telemetry.parquet"] == .telemetry)' <<<"$got")" != true ]; then
    parquet_bad=$((parquet_bad + 1)); ok=0
  fi
  if (( ok )); then complete=$((complete + 1)); else bad=$((bad + 1)); echo "trial $i: $got" >&2; fi
  rm -rf "$d"; : >"$work/stderr"
done
echo "crash-soak: $N kill points (seed $SEED), $kills kill -9 in all, $resumes resume/restart runs;" \
  "$complete complete and equal to the reference ($ref_passes passes, $ref_requests requests), $bad not;" \
  "duplicates $dups, integrity failures $integrity_bad, row-count mismatches $rows_bad, Parquet mismatches $parquet_bad"
[ "$bad" -eq 0 ]
