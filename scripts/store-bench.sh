#!/usr/bin/env bash
# store-bench.sh: the store's benchmarks (results/bench_test.go) of this tree
# and of the tree before issue 29's store work, interleaved, each beside its
# physical reference: BenchmarkStore_AddFlush and BenchmarkStore_SQLiteReference
# (ingest), BenchmarkExport and BenchmarkExport_ArrowReference (export). Prints
# every line, then the median rows/s, CPU ns/row and peak heap per benchmark
# and build. Two steps, so that the measuring can happen on a quiet machine
# without a Go toolchain or module cache (the binaries are static enough to
# copy):
#
#   scripts/store-bench.sh build      test binaries of HEAD's tree and of BASE
#                                     (default 3965a90) into bin/store-bench/
#   scripts/store-bench.sh run        REPS=5 (interleaved), ROWS=50000 (export)
#   DRY=1 scripts/store-bench.sh run  one repetition of 2,000 rows: a smoke test
#
# The base tree predates bench_test.go: build copies it in and adapts the two
# lines that name what the base lacks (the column table, exportProps), so that
# both builds run the same benchmarks on their own code.
set -euo pipefail
cd "$(git rev-parse --show-toplevel 2>/dev/null || dirname "$0"/..)"
bin=bin/store-bench
case "${1:-}" in
build)
  base=${2:-3965a90}
  mkdir -p "$bin"
  go test -c -ldflags='-s -w' -o "$bin/final.test" ./results/
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  git archive "$base" | tar -x -C "$tmp"
  cp results/bench_test.go results/cputime_*_test.go "$tmp/results/"
  sed -i 's/^func fillStore(t \*testing.T, /func fillStore(t testing.TB, /' "$tmp/results/export_test.go"
  python3 - "$tmp/results" <<'EOF'
import sys, re
d = sys.argv[1]
b = open(d + '/bench_test.go').read()
b = b.replace('insert := requestColumns.insertSQL("requests", 1, "")',
  'insert := `INSERT INTO requests (` + strings.Join(requestColumns, ", ") + `) VALUES (` + strings.TrimSuffix(strings.Repeat("?, ", len(requestColumns)), ", ") + `)`')
b = b.replace('exportProps(t.dict)', 'parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithMaxRowGroupLength(exportBatchRows))')
b = b.replace('fw.WriteBuffered(rb)', 'fw.Write(rb)')
b = b.replace('"strconv"\n', '"strconv"\n\t"strings"\n')
b = b.replace('"github.com/apache/arrow-go/v18/parquet/pqarrow"\n',
  '"github.com/apache/arrow-go/v18/parquet"\n\t"github.com/apache/arrow-go/v18/parquet/compress"\n\t"github.com/apache/arrow-go/v18/parquet/pqarrow"\n')
open(d + '/bench_test.go', 'w').write(b)
s = open(d + '/store_test.go').read()  # the base's own BenchmarkStore_AddFlush gives way to bench_test.go's
a = s.find('func BenchmarkStore_AddFlush(')
if a >= 0:
    e = s.index('\n}\n', a) + 3
    s = s[:a] + s[e:]
open(d + '/store_test.go', 'w').write(s)
EOF
  (cd "$tmp" && go test -c -ldflags='-s -w' -o base.test ./results/)
  cp "$tmp/base.test" "$bin/base.test"
  echo "built $bin/base.test ($base) and $bin/final.test (HEAD's tree)"
  ;;
run)
  reps=${REPS:-5} rows=${ROWS:-50000} ingest=30x export=2x
  if [ "${DRY:-0}" = 1 ]; then reps=1 rows=2000 ingest=3x export=1x; fi
  out=$(mktemp)
  trap 'rm -f "$out"' EXIT
  for _ in $(seq 1 "$reps"); do
    for b in base final; do
      "$bin/$b.test" -test.run '^$' -test.bench 'BenchmarkStore_' -test.benchtime "$ingest" | grep '^Benchmark' | sed "s/^/$b /" | tee -a "$out"
      EXTRACTBENCH_BENCH_ROWS=$rows "$bin/$b.test" -test.run '^$' -test.bench 'BenchmarkExport' -test.benchtime "$export" | grep '^Benchmark' | sed "s/^/$b /" | tee -a "$out"
    done
  done
  echo "medians over $reps repetitions (export: $rows request rows):"
  python3 - "$out" <<'EOF'
import sys, statistics, collections
vals = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    f = line.split()
    build, bench = f[0], f[1].rsplit('-', 1)[0]
    for v, unit in zip(f[3::2], f[4::2]):
        vals[(build, bench)][unit].append(float(v))
for (build, bench), units in sorted(vals.items()):
    print(f"{build:5} {bench:34}", "  ".join(f"{statistics.median(v):>12.1f} {u}" for u, v in units.items() if u in ("rows/s", "cpu-ns/row", "peak-heap-MB")))
def med(b, n, u):
    v = vals.get((b, n), {}).get(u)
    return statistics.median(v) if v else None
for step, bench, ref in (("ingest", "BenchmarkStore_AddFlush", "BenchmarkStore_SQLiteReference"), ("export", "BenchmarkExport", "BenchmarkExport_ArrowReference")):
    r = med("final", ref, "rows/s")
    for b in ("base", "final"):
        x = med(b, bench, "rows/s")
        if x and r:
            print(f"{step} {b}: {x:.0f} rows/s = {x / r:.2f} x the reference ({r:.0f} rows/s, final build)")
EOF
  ;;
*)
  sed -n '2,18p' "$0" >&2
  exit 2
  ;;
esac
