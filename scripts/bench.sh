#!/usr/bin/env bash
# bench.sh: measure each step of a scaled-out run against its physical
# reference on this machine, in one invocation, interleaved: every
# repetition runs each step's benchmark, then its reference's, then the
# previous release's (BASE_REV, built in a git worktree under /tmp), the
# order alternating between repetitions, so that a machine that gets
# busier or quieter moves both sides of a ratio alike. It prints a Markdown
# table: each figure as median [min–max] over the repetitions, and each
# ratio computed within one repetition, then summarised the same way.
#
#   step             ours                       physical reference
#   merge row copy   BenchmarkMerge_Copy        BenchmarkMerge_SQLiteReference (SQLite's INSERT … SELECT)
#   ingest           BenchmarkStore_AddFlush    BenchmarkStore_SQLiteReference
#   export           BenchmarkExport            BenchmarkExport_ArrowReference
#   run's client     BenchmarkRun_NoopEngine    BenchmarkPlainClient_NoopEngine
#   whole merge      BenchmarkMerge             (none: the previous release only)
#   report           BenchmarkReport            (none: the previous release only; its memory: rss-scale.sh REPORT=1)
#
# A benchmark missing from a tree (not written yet, or not in BASE_REV) is
# reported "not found". Not part of `go test`: a full run takes many minutes.
#
# Usage: scripts/bench.sh
#   REPS=n        repetitions (default 3, at least 3 for a spread)
#   BASE_REV=rev  the previous release to compare with (default: the newest
#                 tag, else HEAD~1); BASE_REV=none skips it
#   BENCH_QUICK=1 a smoke run: small inputs, short benchtime
#   BENCHTIME=d   go test -benchtime (default 1s; 200ms with BENCH_QUICK)
set -euo pipefail
REPS=${REPS:-3}
QUICK=${BENCH_QUICK:-0}
cd "$(git rev-parse --show-toplevel)"
root=$PWD
if [[ -z "${BASE_REV:-}" ]]; then
	BASE_REV=$(git describe --tags --abbrev=0 2>/dev/null || echo HEAD~1)
fi
if [[ "$QUICK" == 1 ]]; then
	export EXTRACTBENCH_MERGE_ROWS=${EXTRACTBENCH_MERGE_ROWS:-20000} EXTRACTBENCH_COPY_ROWS=${EXTRACTBENCH_COPY_ROWS:-20000}
	export EXTRACTBENCH_REPORT_ROWS=${EXTRACTBENCH_REPORT_ROWS:-20000} EXTRACTBENCH_REPORT_DOCS=${EXTRACTBENCH_REPORT_DOCS:-5000}
	BENCHTIME=${BENCHTIME:-200ms}
fi
BENCHTIME=${BENCHTIME:-1s}
work=$(mktemp -d /tmp/extractbench-bench.XXXXXX)
base=""
cleanup() {
	if [[ -n "$base" ]]; then git worktree remove --force "$base" >/dev/null 2>&1 || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

steps=(
	"merge row copy|BenchmarkMerge_Copy|BenchmarkMerge_SQLiteReference"
	"ingest|BenchmarkStore_AddFlush|BenchmarkStore_SQLiteReference"
	"export|BenchmarkExport|BenchmarkExport_ArrowReference"
	"run's client|BenchmarkRun_NoopEngine|BenchmarkPlainClient_NoopEngine|cpu-µs/req-whole"
	"whole merge (incl. export)|BenchmarkMerge|"
	"report|BenchmarkReport|"
)

if [[ "$BASE_REV" != none ]]; then
	if rev=$(git rev-parse --verify --quiet "$BASE_REV^{commit}"); then
		base=$work/base
		git worktree add --quiet --detach "$base" "$rev"
		base_name="$BASE_REV ($(git rev-parse --short "$rev"))"
	else
		echo "bench.sh: BASE_REV $BASE_REV is not a commit here; no previous release" >&2
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

# run_bench TREE TAG NAME [UNIT]: "VALUE UNIT" of benchmark NAME (UNIT when
# given and reported; else its throughput unit, x/s, if it reports one, else
# another unit of its own, else ns/op), or "not found". The run's client
# step asks for cpu-µs/req-whole (the whole run's CPU over its requests):
# the marginal cpu-µs/req, a difference of two runs' CPU, spread 0.55-1.97x
# between pairs on this machine, the whole figure 0.82-1.27x.
run_bench() {
	local pkg bin out
	pkg=$(pkg_of "$1" "$3")
	if [[ -z "$pkg" ]]; then
		echo "not found"
		return
	fi
	bin=$(bin_of "$1" "$2" "$pkg")
	out=$(cd "$1/$pkg" && "$bin" -test.run '^$' -test.bench "^$3\$" -test.benchtime "$BENCHTIME" -test.count 1 2>&1) || {
		echo "bench.sh: $2 $3 failed:" >&2
		echo "$out" | tail -n 20 >&2
		echo "failed"
		return
	}
	echo "$out" | awk -v name="$3" -v want="${4:-}" '
		$1 ~ "^" name "(-[0-9]+)?$" {
			best = ""; other = ""
			for (i = 3; i < NF; i += 2) {
				u = $(i + 1)
				if (want != "" && u == want) { print $i " " u; exit }
				if (u ~ /\/s$/ && best == "") best = $i " " u
				else if (u != "ns/op" && u != "B/op" && u != "allocs/op" && u != "MB/s" && other == "") other = $i " " u
				if (u == "ns/op") ns = $i " " u
			}
			if (best == "") best = other
			if (best == "") best = ns
			print best
			exit
		}'
}

# stat: "median [min–max]" of the numbers on stdin.
stat() {
	sort -g | awk '{ v[NR] = $1 } END {
		if (NR == 0) { print "–"; exit }
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%s [%s–%s]\n", fmt(m), fmt(v[1]), fmt(v[NR]) }
		function fmt(x) { return (x >= 1000) ? sprintf("%.0f", x) : (x >= 10 ? sprintf("%.1f", x) : sprintf("%.3g", x)) }'
}

res=$work/results
: >"$res"
for rep in $(seq 1 "$REPS"); do
	for s in "${steps[@]}"; do
		IFS='|' read -r step ours ref unit <<<"$s"
		sides=(ours ref base)
		((rep % 2 == 0)) && sides=(base ref ours)
		for side in "${sides[@]}"; do
			case $side in
			ours) v=$(run_bench "$root" cur "$ours" "$unit") ;;
			ref) [[ -n "$ref" ]] && v=$(run_bench "$root" cur "$ref" "$unit") || v="" ;;
			base) [[ -n "$base" ]] && v=$(run_bench "$base" base "$ours" "$unit") || v="" ;;
			esac
			echo "$step|$side|$rep|$v" >>"$res"
			echo "bench.sh: rep $rep $step $side: ${v:-–}" >&2
		done
	done
done

# cell STEP SIDE: the figure of one side over the repetitions.
cell() {
	local vals unit
	vals=$(awk -F'|' -v s="$1" -v d="$2" '$1 == s && $2 == d { print $4 }' "$res")
	if [[ -z "$vals" ]]; then echo "–"; return; fi
	if grep -qv '^[-0-9.e+]* ' <<<"$vals"; then head -n 1 <<<"$(grep -v '^[-0-9.e+]* ' <<<"$vals")"; return; fi
	unit=$(head -n 1 <<<"$vals" | cut -d' ' -f2)
	echo "$(cut -d' ' -f1 <<<"$vals" | stat) $unit"
}

# ratio STEP A B: A ÷ B within each repetition, summarised; "–" when either
# side is missing or their units differ.
ratio() {
	awk -F'|' -v s="$1" -v a="$2" -v b="$3" '
		$1 == s && $2 == a { split($4, x, " "); av[$3] = x[1]; au[$3] = x[2] }
		$1 == s && $2 == b { split($4, x, " "); bv[$3] = x[1]; bu[$3] = x[2] }
		END { for (r in av) if ((r in bv) && au[r] == bu[r] && au[r] != "" && bv[r] + 0 != 0 && av[r] ~ /^[-0-9.e+]+$/ && bv[r] ~ /^[-0-9.e+]+$/) print av[r] / bv[r] }' "$res" | {
		out=$(stat)
		[[ "$out" == "–" ]] && echo "–" || echo "${out}×"
	}
}

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || uname -m)
echo
echo "Machine: ${cpu:-unknown}, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?) at the end; $(go version | cut -d' ' -f3); $(date -u +%Y-%m-%dT%H:%MZ); $REPS repetitions, interleaved; benchtime $BENCHTIME$([[ "$QUICK" == 1 ]] && echo ", BENCH_QUICK (small inputs)")."
echo "Ratios are ours ÷ the other side within one repetition (a rate: above 1 is faster; a cost such as CPU per request: below 1 is cheaper)."
echo
echo "| step | ours | physical reference | ours ÷ reference | previous release ${base_name:-(none)} | ours ÷ previous |"
echo "|---|---|---|---|---|---|"
for s in "${steps[@]}"; do
	IFS='|' read -r step ours ref _ <<<"$s"
	echo "| $step | $(cell "$step" ours) | $([[ -n "$ref" ]] && cell "$step" ref || echo "none") | $(ratio "$step" ours ref) | $(cell "$step" base) | $(ratio "$step" ours base) |"
done
