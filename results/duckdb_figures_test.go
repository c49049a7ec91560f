package results_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/plan/plantest"
)

// FiguresQuery is the DuckDB query that gives, from passes.parquet, the
// figures every page shows (the docs' "Reading the Parquet" quotes it):
// each pass's percentile, the median over the level's complete
// repetitions that eval did not leave out (left_out: a client-bound
// repetition among a level's mostly not client-bound ones), the accepted
// share pooled over the same repetitions. %s is the file.
const FiguresQuery = `SELECT variant, level, count(*) AS repetitions,
       median(ttft_p50_ns) / 1e6 AS ttft_ms_p50, median(e2e_p95_ns) / 1e6 AS e2e_ms_p95,
       sum(accepted_docs) / sum(docs) AS accepted_share
FROM '%s'
WHERE status = 'complete' AND NOT left_out
GROUP BY ALL ORDER BY variant, level`

// duckDB runs sql with DuckDB's Node API (npm @duckdb/node-api, installed
// into $DUCKDB_NODE_DIR, default /tmp/duckdb-node, as
// scripts/duckdb-dataset.sh installs it) and returns the rows as strings;
// the test is skipped where node or the package is missing.
func duckDB(t *testing.T, sql string) [][]string {
	t.Helper()
	dir := os.Getenv("DUCKDB_NODE_DIR")
	if dir == "" {
		dir = "/tmp/duckdb-node"
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed: DuckDB's Node API cannot run")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api")); err != nil {
		t.Skipf("no @duckdb/node-api under %s (npm install @duckdb/node-api there, or set DUCKDB_NODE_DIR)", dir)
	}
	script := filepath.Join(t.TempDir(), "q.mjs")
	js := `import { DuckDBInstance } from '` + filepath.Join(dir, "node_modules", "@duckdb", "node-api", "lib", "index.js") + `';
const c = await (await DuckDBInstance.create(':memory:')).connect();
const r = await c.runAndReadAll(process.argv[2]);
console.log(JSON.stringify(r.getRows().map(row => row.map(String))));
`
	if err := os.WriteFile(script, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("node", script, sql).CombinedOutput()
	if err != nil {
		t.Fatalf("duckdb: %v\n%s", err, out)
	}
	var rows [][]string
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("duckdb output %q: %v", out, err)
	}
	return rows
}

// TestDuckDB_FiguresEveryPageShows: the documented query over
// passes.parquet gives eval's level figures (the report's, stdout's) at
// every level, including one whose client-bound repetition eval leaves
// out: without left_out the query counted it and disagreed.
func TestDuckDB_FiguresEveryPageShows(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := plantest.Manifest(plantest.DefaultCorpusSHA, "m", "NVIDIA H100 80GB HBM3", 85_520_809_984, 0.5, 0)
	m["sweep"] = map[string]any{"mode": "concurrency", "levels": []int{1, 2, 4}, "repetitions": 3}
	m["variants"] = []any{map[string]any{"name": "v", "engine": m["engine"], "gpu": m["gpu"]}}
	var passes []extractbench.Pass
	for _, l := range []int{1, 2, 4} {
		for rep := 1; rep <= 3; rep++ {
			p := plantest.Pass("v", l, rep, 100, 90+rep, 60+float64(rep), int64(100*l+10*rep))
			bound := l >= 2 && rep == 3 // level 2: one of three left out; level 4 also
			if l == 4 && rep == 2 {
				bound = true // level 4: two of three client-bound, none left out
			}
			p.ClientBound = &bound
			if bound {
				e2e := int64(9e9)
				p.E2EP95NS, p.Accepted = &e2e, 10
			}
			passes = append(passes, p)
		}
	}
	plantest.Write(t, dir, plantest.Run{RunID: "duck", Manifest: m, Passes: passes})
	if _, err := results.Export(ctx, dir); err != nil {
		t.Fatal(err)
	}
	run, err := results.LoadRun(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	rows := duckDB(t, fmt.Sprintf(FiguresQuery, filepath.Join(dir, results.PassesParquet)))
	var levels []eval.Level
	for _, s := range run.Series() {
		levels = append(levels, s.Levels...)
	}
	if len(rows) != len(levels) {
		t.Fatalf("DuckDB gives %d levels, eval %d: %q", len(rows), len(levels), rows)
	}
	leftOut := 0
	for i, l := range levels {
		r := rows[i]
		num := func(j int) float64 {
			v, err := strconv.ParseFloat(r[j], 64)
			if err != nil {
				t.Fatalf("row %q column %d: %v", r, j, err)
			}
			return v
		}
		leftOut += l.ClientBoundLeftOut
		got := fmt.Sprintf("%s level %s: %d repetitions, ttft p50 %.3fms, e2e p95 %.3fms, accepted %.4f", r[0], r[1], int(num(2)), num(3), num(4), num(5))
		want := fmt.Sprintf("%s level %d: %d repetitions, ttft p50 %.3fms, e2e p95 %.3fms, accepted %.4f", l.Variant, l.Level, l.Repetitions,
			l.TTFTP50NS.Median/1e6, l.E2EP95NS.Median/1e6, float64(l.Accepted)/float64(l.Docs))
		if got != want {
			t.Errorf("DuckDB: %s\n  eval: %s", got, want)
		}
		if math.IsNaN(num(4)) {
			t.Errorf("NaN in %q", r)
		}
	}
	if leftOut != 1 {
		t.Errorf("eval left out %d repetitions, want 1 (level 2's client-bound one): the fixture no longer tests left_out", leftOut)
	}
	reason := duckDB(t, fmt.Sprintf(`SELECT level, repetition, left_out_reason FROM '%s' WHERE left_out`, filepath.Join(dir, results.PassesParquet)))
	if len(reason) != 1 || reason[0][0] != "2" || reason[0][1] != "3" || !strings.HasPrefix(reason[0][2], "client_bound: ") {
		t.Errorf("left out: %q, want level 2 repetition 3 with its reason", reason)
	}
	started := duckDB(t, fmt.Sprintf(`SELECT DISTINCT typeof(run_started_time), epoch_ms(run_started_time) = run_started_at FROM '%s'`, filepath.Join(dir, results.PassesParquet)))
	if len(started) != 1 || started[0][0] != "TIMESTAMP WITH TIME ZONE" || started[0][1] != "true" {
		t.Errorf("run_started_time: %q, want a TIMESTAMP WITH TIME ZONE equal to run_started_at", started)
	}
}
