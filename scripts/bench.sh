#!/usr/bin/env bash
# bench.sh: measure each step of a scaled-out run against its physical
# reference on this machine, in CPU time, in one invocation, interleaved:
# every repetition runs each benchmark once, a step's own beside its
# reference's, the order reversed between repetitions, so that a machine
# that gets busier or quieter moves both sides of a ratio alike. Every
# figure is the process's CPU (user + system, getrusage) per row or per
# request as the benchmark reports it (cpu-ns/row, cpu-µs/req-whole), not
# wall time: on a shared machine wall-clock ratios of identical runs
# spread 0.32-1.80, CPU far less. It prints a Markdown table: each side as
# median [min-max] over the repetitions, the ratio ours ÷ reference taken
# within each repetition and summarised the same way, the goal, and
# whether the median ratio meets it.
#
#   step                 ours                     fair reference (same rows, same work)
#   ingest               BenchmarkStore_AddFlush  BenchmarkStore_SQLiteReference: the same 1,000
#                        (1,000 records a pass,   records' rows (requests, request_fields) bound
#                        through the writer)      from Go values built beforehand into plain
#                                                 64-row INSERTs prepared once, one transaction,
#                                                 WAL: SQLite's fastest path for rows a program
#                                                 holds in memory, as ours are. Not INSERT ...
#                                                 SELECT: that copies rows already in SQLite's
#                                                 record format, binds and converts nothing, so
#                                                 no ingest from memory can reach it; it is
#                                                 printed as "ingest floor", without a goal.
#   export               BenchmarkExport          BenchmarkExport_ArrowReference: the same
#                                                 results.db read with database/sql, the same
#                                                 Parquet files and raw_table.csv written by
#                                                 pqarrow from record batches, same properties
#                                                 (zstd, row groups, dictionaries), synced.
#   merge row copy       BenchmarkMerge_Copy      BenchmarkMerge_SQLiteReference: SQLite's
#                                                 INSERT ... SELECT of the same shards' rows.
#   whole merge          BenchmarkMerge           BenchmarkMerge_SQLiteReference at the same
#                        (audit, copy, pass rows,   row count, 4 shards x 4 passes on both
#                        export)                    sides: SQLite's own copy of the rows.
#   whole merge + report BenchmarkMerge +         the same: the issue's goal (43: within 3x
#                        BenchmarkReport, per row   from 240k rows up, 10x below, where fixed
#                                                   costs weigh).
#   report               BenchmarkReport          none (what it computes has no plain twin).
#   run's client         BenchmarkRun_NoopEngine  BenchmarkPlainClient_NoopEngine: a plain
#                                                 net/http client, the same prompts, engine
#                                                 and levels (cpu-µs/req-whole: the larger
#                                                 run's CPU over its requests; the marginal
#                                                 figure, a difference of two runs' CPU,
#                                                 spreads 0.55-1.97x between pairs here).
#
# Goals: whole merge + report as issue 43 says; the run's client <= 1.5x
# (issue 43); ingest, export and the row copy <= 1.5x of their physical
# reference (this script's bar, the client's).
#
# Usage: scripts/bench.sh
#   REPS=n        repetitions (default 5)
#   ROWS=n        rows of the merge, copy and report benchmarks (default
#                 240000, where the 3x goal starts; 24000 with BENCH_QUICK)
#   BENCH_QUICK=1 a smoke run: 24,000 merge rows, 10,000 export rows, runs of
#                 200 and 400 documents, benchtime 200ms. A few minutes, not a
#                 test of go test's: EXTRACTBENCH_BENCH_SH=1 go test
#                 ./scripts/benchsh/ runs it with REPS=3.
#   BENCHTIME=d   go test -benchtime of the ingest and export benchmarks
#                 (default 1s); the others run one iteration (1x), which is
#                 a whole merge, report or pair of runs
#   BASE_REV=rev  also run ours in that commit (built in a git worktree
#                 under /tmp) and print ours ÷ it; default: none
set -euo pipefail
REPS=${REPS:-5}
QUICK=${BENCH_QUICK:-0}
BASE_REV=${BASE_REV:-none}
cd "$(git rev-parse --show-toplevel)"
root=$PWD
if [[ "$QUICK" == 1 ]]; then
	ROWS=${ROWS:-24000}
	export EXTRACTBENCH_BENCH_ROWS=${EXTRACTBENCH_BENCH_ROWS:-10000} EXTRACTBENCH_BENCH_DOCS=${EXTRACTBENCH_BENCH_DOCS:-200,400}
	BENCHTIME=${BENCHTIME:-200ms}
fi
ROWS=${ROWS:-240000}
BENCHTIME=${BENCHTIME:-1s}
export EXTRACTBENCH_MERGE_ROWS=$ROWS EXTRACTBENCH_COPY_ROWS=$ROWS EXTRACTBENCH_REPORT_ROWS=$ROWS EXTRACTBENCH_REPORT_DOCS=$((ROWS / 4))
work=$(mktemp -d /tmp/extractbench-bench.XXXXXX)
base=""
cleanup() {
	if [[ -n "$base" ]]; then git worktree remove --force "$base" >/dev/null 2>&1 || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

# The whole merge's goal: 3x from 240k rows up, 10x below (issue 43).
merge_goal=10
((ROWS >= 240000)) && merge_goal=3

# step|ours (benchmarks joined by +, their figures added)|reference|goal (max ratio, "" none)
steps=(
	"ingest|BenchmarkStore_AddFlush|BenchmarkStore_SQLiteReference|1.5"
	"ingest floor (INSERT … SELECT)|BenchmarkStore_AddFlush|BenchmarkStore_SQLiteCopyFloor|"
	"export|BenchmarkExport|BenchmarkExport_ArrowReference|1.5"
	"merge row copy|BenchmarkMerge_Copy|BenchmarkMerge_SQLiteReference|1.5"
	"whole merge (incl. export)|BenchmarkMerge|BenchmarkMerge_SQLiteReference|"
	"whole merge + report|BenchmarkMerge+BenchmarkReport|BenchmarkMerge_SQLiteReference|$merge_goal"
	"report|BenchmarkReport||"
	"run's client|BenchmarkRun_NoopEngine|BenchmarkPlainClient_NoopEngine|1.5"
)
# Each benchmark once a repetition, ours beside its reference; the unit it
# is read in; its benchtime.
benches=(
	"BenchmarkStore_AddFlush|cpu-ns/row|$BENCHTIME"
	"BenchmarkStore_SQLiteReference|cpu-ns/row|$BENCHTIME"
	"BenchmarkStore_SQLiteCopyFloor|cpu-ns/row|$BENCHTIME"
	"BenchmarkExport|cpu-ns/row|$BENCHTIME"
	"BenchmarkExport_ArrowReference|cpu-ns/row|$BENCHTIME"
	"BenchmarkMerge_Copy|cpu-ns/row|1x"
	"BenchmarkMerge_SQLiteReference|cpu-ns/row|1x"
	"BenchmarkMerge|cpu-ns/row|1x"
	"BenchmarkReport|cpu-ns/row|1x"
	"BenchmarkRun_NoopEngine|cpu-µs/req-whole|1x"
	"BenchmarkPlainClient_NoopEngine|cpu-µs/req-whole|1x"
)
# ours: the benchmarks a previous release is measured on too.
ours=" $(for s in "${steps[@]}"; do IFS='|' read -r _ o _ <<<"$s"; echo -n "${o//+/ } "; done)"

if [[ "$BASE_REV" != none ]]; then
	if rev=$(git rev-parse --verify --quiet "$BASE_REV^{commit}"); then
		base=$work/base
		git worktree add --quiet --detach "$base" "$rev"
		base_name="$BASE_REV ($(git rev-parse --short "$rev"))"
	else
		echo "bench.sh: BASE_REV $BASE_REV is not a commit here" >&2
		exit 2
	fi
fi

# pkg_of TREE NAME: the package directory (relative to TREE) whose tests
# define benchmark NAME, or nothing.
pkg_of() {
	local f
	f=$(grep -rlE --include='*_test.go' "^func $2\(b \*testing\.B\)" "$1" 2>/dev/null | grep -v '/\.' | head -n 1 || true)
	[[ -n "$f" ]] && dirname "${f#"$1"/}"
	return 0
}

# bin_of TREE TAG PKG: the test binary of PKG in TREE, built once.
bin_of() {
	local bin=$work/bin/$2-${3//\//_}.test
	if [[ ! -x "$bin" ]]; then
		mkdir -p "$work/bin"
		(cd "$1" && go test -c -o "$bin" "./$3") >&2
	fi
	echo "$bin"
}

# run_bench TREE TAG NAME UNIT BENCHTIME: "VALUE UNIT" of benchmark NAME, or
# "not found" (no such benchmark in TREE), "no UNIT" (it does not report
# UNIT) or "failed".
run_bench() {
	local pkg bin out
	pkg=$(pkg_of "$1" "$3")
	if [[ -z "$pkg" ]]; then
		echo "not found"
		return
	fi
	bin=$(bin_of "$1" "$2" "$pkg")
	out=$(cd "$1/$pkg" && "$bin" -test.run '^$' -test.bench "^$3\$" -test.benchtime "$5" -test.count 1 2>&1) || {
		echo "bench.sh: $2 $3 failed:" >&2
		echo "$out" | tail -n 20 >&2
		echo "failed"
		return
	}
	out=$(echo "$out" | awk -v name="$3" -v want="$4" '
		$1 ~ "^" name "(-[0-9]+)?$" {
			for (i = 3; i < NF; i += 2) if ($(i + 1) == want) { print $i " " want; exit }
			print "no " want; exit
		}')
	echo "${out:-no result}"
}

res=$work/results
: >"$res"
for rep in $(seq 1 "$REPS"); do
	order=("${benches[@]}")
	if ((rep % 2 == 0)); then
		order=()
		for ((i = ${#benches[@]} - 1; i >= 0; i--)); do order+=("${benches[i]}"); done
	fi
	for b in "${order[@]}"; do
		IFS='|' read -r name unit bt <<<"$b"
		trees=(cur)
		[[ -n "$base" && "$ours" == *" $name "* ]] && trees+=(base)
		if ((rep % 2 == 0 && ${#trees[@]} == 2)); then trees=(base cur); fi
		for tree in "${trees[@]}"; do
			dir=$root
			[[ $tree == base ]] && dir=$base
			v=$(run_bench "$dir" "$tree" "$name" "$unit" "$bt")
			echo "$tree|$name|$rep|$v" >>"$res"
			echo "bench.sh: rep $rep $tree $name: $v" >&2
		done
	done
done

# side TREE EXPR: "rep|value unit" of each repetition: the benchmarks of
# EXPR (joined by +) added, or the first failure's text.
side() {
	awk -F'|' -v tree="$1" -v expr="$2" '
		BEGIN { n = split(expr, want, "+"); for (i = 1; i <= n; i++) need[want[i]] = 1 }
		$1 == tree && ($2 in need) {
			split($4, x, " ")
			if ($4 !~ /^[-0-9.e+]+ /) { bad[$3] = bad[$3] ? bad[$3] : $2 ": " $4; next }
			sum[$3] += x[1]; unit[$3] = x[2]; got[$3]++
		}
		END {
			for (r in bad) print r "|" bad[r]
			for (r in got) if (!(r in bad) && got[r] == n) print r "|" sum[r] " " unit[r]
		}' "$res" | sort -t'|' -k1,1n
}

# stat: "median [min-max]" of the numbers on stdin.
stat() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "–"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%s [%s–%s]\n", fmt(m), fmt(v[1]), fmt(v[NR]) }
		function fmt(x) { return (x >= 1000) ? sprintf("%.0f", x) : (x >= 10 ? sprintf("%.1f", x) : sprintf("%.3g", x)) }'
}

# cell: the figure of "rep|value unit" lines on stdin over the repetitions.
cell() {
	local vals
	vals=$(cut -d'|' -f2)
	if [[ -z "$vals" ]]; then echo "–"; return; fi
	if grep -qv '^[-0-9.e+]* ' <<<"$vals"; then grep -v '^[-0-9.e+]* ' <<<"$vals" | head -n 1; return; fi
	echo "$(cut -d' ' -f1 <<<"$vals" | stat) $(head -n 1 <<<"$vals" | cut -d' ' -f2)"
}

# ratios A B: A ÷ B of each repetition both files have, numbers of one unit.
ratios() {
	join -t'|' <(sort -t'|' -k1,1 "$1") <(sort -t'|' -k1,1 "$2") | awk -F'|' '{
		split($2, a, " "); split($3, b, " ")
		if (a[1] ~ /^[-0-9.e+]+$/ && b[1] ~ /^[-0-9.e+]+$/ && a[2] == b[2] && b[1] + 0 != 0) print a[1] / b[1] }'
}

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || uname -m)
echo
echo "Machine: ${cpu:-unknown}, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?) at the end; $(go version | cut -d' ' -f3); $(git rev-parse --short HEAD); $(date -u +%Y-%m-%dT%H:%MZ); $REPS repetitions, interleaved; $ROWS merge/copy/report rows; benchtime $BENCHTIME$([[ "$QUICK" == 1 ]] && echo ", BENCH_QUICK (small inputs)")."
echo "Figures are the process's CPU (user + system) per row or request: median [min–max]. Ratios are ours ÷ the other side within one repetition (below 1: ours is cheaper); a goal is met when the median ratio is at most the goal."
echo
head="| step | ours | fair reference | ours ÷ reference | goal | met |"
sep="|---|---|---|---|---|---|"
if [[ -n "$base" ]]; then
	head+=" previous release $base_name | ours ÷ previous |"
	sep+="---|---|"
fi
echo "$head"
echo "$sep"
for s in "${steps[@]}"; do
	IFS='|' read -r step o r goal <<<"$s"
	side cur "$o" >"$work/ours"
	: >"$work/ref"
	[[ -n "$r" ]] && side cur "$r" >"$work/ref"
	rc="none"
	[[ -n "$r" ]] && rc=$(cell <"$work/ref")
	rt=$(ratios "$work/ours" "$work/ref" | stat)
	[[ "$rt" != "–" ]] && rt="${rt}×"
	met="–"
	if [[ -n "$goal" && "$rt" != "–" ]]; then
		met=$(ratios "$work/ours" "$work/ref" | stat | awk -v g="$goal" '{ print ($1 + 0 <= g + 0) ? "met" : "not met" }')
	fi
	line="| $step | $(cell <"$work/ours") | $rc | $rt | $([[ -n "$goal" ]] && echo "≤ ${goal}×" || echo "–") | $met |"
	if [[ -n "$base" ]]; then
		side base "$o" >"$work/prev"
		bt=$(ratios "$work/ours" "$work/prev" | stat)
		[[ "$bt" != "–" ]] && bt="${bt}×"
		line+=" $(cell <"$work/prev") | $bt |"
	fi
	echo "$line"
done
