#!/usr/bin/env bash
# extension-count.sh proves the extension paths that record.go,
# results/migrations.go and results/pass.go document: on a scratch clone of
# this checkout it adds a failure class (refusal), a request column
# (reported_total_tokens, the engine's usage.total_tokens) and a pass figure
# (empty_outputs), each by scripted edits, runs the golden files' -update
# that the addition needs, and counts the files each one touched (git diff
# against the one before): by hand (the scripted edits) and generated (the
# -update). The targets bind the files by hand: a class 2, a request column
# 5, a pass figure 5. Then it builds and vets the clone and runs the tests of
# the packages the additions touch. Exit 1 when a count is over its target
# or a test fails.
#
# Usage: scripts/extension-count.sh [-keep]   (-keep leaves the clone)
set -euo pipefail

keep=false
[[ ${1:-} == -keep ]] && keep=true

src=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
work=$(mktemp -d)
if ! $keep; then
	trap 'rm -rf "$work"' EXIT
fi
git clone -q "$src" "$work/repo"
cd "$work/repo"
git config user.name extension-count
git config user.email extension-count@localhost

fail=0
report=()

# edit FILE SED-EXPRESSION applies a GNU sed edit to the whole file (-z:
# patterns may span lines) and fails when it changed nothing.
edit() {
	local file=$1 expr=$2
	local before
	before=$(git hash-object "$file")
	sed -z -i -e "$expr" "$file"
	if [[ $(git hash-object "$file") == "$before" ]]; then
		echo "extension-count: the edit of $file matched nothing: $expr" >&2
		exit 1
	fi
}

# changed lists the files that differ from the last commit, new ones too.
changed() {
	{
		git diff --name-only
		git ls-files --others --exclude-standard
	} | sort -u
}

# count NAME TARGET GENERATOR... commits the scripted edits, runs the
# generators, commits their output, and records both counts.
count() {
	local name=$1 target=$2
	shift 2
	local hand gen verdict=PASS
	hand=$(changed)
	grep '\.go$' <<<"$hand" | xargs -r gofmt -w
	git add -A && git commit -qm "$name (by hand)"
	for g in "$@"; do
		echo "  $name: $g" >&2
		if ! (eval "nice $g" >/dev/null); then
			echo "extension-count: $g failed" >&2
			fail=1
		fi
	done
	gen=$(changed)
	git add -A && git commit -qm "$name (generated)" --allow-empty
	local nh ng
	nh=$(grep -c . <<<"$hand" || true)
	ng=$(grep -c . <<<"$gen" || true)
	if ((nh > target)); then
		verdict=FAIL
		fail=1
	fi
	report+=("$(printf '%-16s %2d files by hand (target <= %d) %s; %d generated' "$name" "$nh" "$target" "$verdict" "$ng")")
	local f
	while read -r f; do
		if [[ -n $f ]]; then report+=("    hand: $f"); fi
	done <<<"$hand"
	while read -r f; do
		if [[ -n $f ]]; then report+=("    generated: $f"); fi
	done <<<"$gen"
}

echo "extension-count: adding a failure class" >&2
edit record.go 's#\tError      Failure = "error"\n#&\tRefusal Failure = "refusal" // the engine declined the request (HTTP 451)\n#'
edit record.go 's#{Memory, Truncation, Format, Quality, Error}#{Memory, Truncation, Format, Quality, Error, Refusal}#'
edit eval/classify.go 's#\tif tr.HTTPStatus == 413 {#\tif tr.HTTPStatus == 451 {\n\t\treturn extractbench.Refusal, "the engine refused the request: HTTP 451"\n\t}\n&#'
count "failure class" 2 \
	"go test ./cmd/extractbench -run TestGolden -update" \
	"go test ./results/report -run TestWrite_MarkdownGolden -update" \
	"go test ./pipeline/merge -run TestMerge_GoldenPasses -update"

# next is the schema version a new migration brings a database to: one
# more than the migrations, each of which opens with a line of one backtick.
next=$(($(grep -c '^	`$' results/migrations.go) + 1))

echo "extension-count: adding a request column" >&2
# shellcheck disable=SC2016 # the backquotes are Go's
edit pipeline/client/sse_chunk.go 's#\tCompletionTokens tokenCount `json:"completion_tokens"`\n#&\tTotalTokens tokenCount `json:"total_tokens"`\n#'
edit pipeline/client/sse_chunk.go 's#prompt, completion int\n#prompt, completion, total int\n#'
edit pipeline/client/sse_chunk.go 's#completion: u.CompletionTokens.n, #&total: u.TotalTokens.n, #'
edit pipeline/client/sse_chunk.go 's#\(\t*\)r.CachedPromptTokens = u.cached\n#&\1r.ReportedTotalTokens = u.total\n#'
edit record.go 's#\tClientChunks     int  // [^\n]*\n#&\tReportedTotalTokens int // usage.total_tokens as the engine sent it; 0 when it sent none\n#'
edit results/requests.go 's#\n}\n\n// requestKeyColumns#\n\t{name: "reported_total_tokens", kind: integer, nullable: true, value: func(r *extractbench.Record) any { return nullInt(r.ReportedTotalTokens) }, load: func(r *extractbench.Record, c *cell) { r.ReportedTotalTokens = c.int() }},&#'
edit results/migrations.go "s#\`,\n}\n\n// migrate brings#\`,\n\t// $next: the engine's own total of a request's tokens.\n\t\`\nALTER TABLE requests ADD COLUMN reported_total_tokens INTEGER;\n&#"
edit results/SCHEMA.md "s#\n| \`expected_prompt_tokens\` [^\n]*#&\n| \`reported_total_tokens\` | INTEGER | yes | the engine's \`usage.total_tokens\`; NULL = it sent none, or rows written before schema version $next |#"
count "request column" 5 \
	"go test ./results -run TestFreshSchema_IsTheMigrations -update"

next=$((next + 1))
echo "extension-count: adding a pass figure" >&2
edit pass.go 's#\tUniqueIDs int64         // [^\n]*\n#&\tEmptyOutputs int64 // documents whose answer was empty\n#'
edit eval/aggregate.go 's#\tLenientOK    int [^\n]*\n#&\tEmptyOutputs int // records with no output at all\n#'
edit eval/aggregate.go 's#\tif r.StrictParseOK {#\tif r.Output == "" {\n\t\ts.EmptyOutputs++\n\t}\n&#'
edit eval/aggregate.go 's#\tp.Accepted, p.UniqueIDs = int64(s.Accepted), int64(s.Recovered)\n#&\tp.EmptyOutputs = int64(s.EmptyOutputs)\n#'
edit results/pass.go 's#\n})\n\n// passKeyColumns#\n\tintField("empty_outputs", func(p *extractbench.Pass) *int64 { return \&p.EmptyOutputs }),&#'
edit results/migrations.go "s#\`,\n}\n\n// migrate brings#\`,\n\t// $next: the documents each pass got no answer for.\n\t\`\nALTER TABLE passes ADD COLUMN empty_outputs INTEGER NOT NULL DEFAULT 0;\n&#"
edit results/SCHEMA.md "s#\n| \`steady_head\` [^\n]*#&\n| \`empty_outputs\` | INTEGER | no | documents whose answer was empty (0 in rows written before schema version $next) |#"
count "pass figure" 5 \
	"go test ./results -run TestFreshSchema_IsTheMigrations -update" \
	"go test ./pipeline/merge -run TestMerge_GoldenPasses -update"

echo "extension-count: building and testing the clone" >&2
tests=(
	"go build ./..."
	"go vet . ./eval ./results ./pipeline/client ./pipeline/passrow ./engines/builtin"
	"go test . ./eval ./results ./pipeline/client ./pipeline/passrow ./engines/builtin ./pipeline/merge"
	"go test ./pipeline -run TestRun_FailureClasses"
	"go test ./results/report -run TestWrite_MarkdownGolden"
	"go test ./cmd/extractbench -run TestGolden"
)
for t in "${tests[@]}"; do
	echo "  $t" >&2
	if ! out=$(eval "nice $t" 2>&1); then
		echo "$out" | tail -40 >&2
		echo "extension-count: FAIL: $t" >&2
		fail=1
	fi
done

printf '%s\n' "${report[@]}"
if $keep; then
	echo "clone kept in $work/repo"
fi
if ((fail)); then
	echo "extension-count: FAIL"
	exit 1
fi
echo "extension-count: PASS"
