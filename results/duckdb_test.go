package results

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// duckDBQuery runs each SQL statement with DuckDB's Node API, as
// scripts/duckdb-dataset.sh does (installed into ${DUCKDB_NODE_DIR:-/tmp/duckdb-node}),
// and returns each result's column types and rows as JSON values (a
// BIGINT as a JSON number). It skips the test, saying why, where node or
// the package is absent.
func duckDBQuery(t *testing.T, dir string, sql ...string) []duckDBResult {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("DuckDB check skipped: no node on PATH (scripts/duckdb-dataset.sh says how to install @duckdb/node-api)")
	}
	mod := os.Getenv("DUCKDB_NODE_DIR")
	if mod == "" {
		mod = "/tmp/duckdb-node"
	}
	mod = filepath.Join(mod, "node_modules", "@duckdb", "node-api")
	if _, err := os.Stat(mod); err != nil {
		t.Skipf("DuckDB check skipped: no %s (npm install @duckdb/node-api into $DUCKDB_NODE_DIR, as scripts/duckdb-dataset.sh does)", mod)
	}
	script := filepath.Join(t.TempDir(), "query.cjs")
	if err := os.WriteFile(script, []byte(`const { DuckDBInstance } = require(process.argv[2]);
(async () => {
  const c = await (await DuckDBInstance.create(':memory:')).connect();
  for (const sql of process.argv.slice(3)) {
    const r = await c.runAndReadAll(sql);
    const types = r.columnTypes().map(String);
    const rows = r.getRows().map(row => row.map(v => typeof v === 'bigint' ? Number(v) : (v === null || typeof v !== 'object' ? v : String(v))));
    console.log(JSON.stringify({ columns: r.columnNames(), types, rows }));
  }
})().catch(e => { console.error(e); process.exit(1); });
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, append([]string{script, mod}, sql...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("duckdb: %v\n%s", err, stderr)
	}
	var res []duckDBResult
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r duckDBResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("duckdb output %q: %v", line, err)
		}
		res = append(res, r)
	}
	if len(res) != len(sql) {
		t.Fatalf("duckdb answered %d results for %d statements", len(res), len(sql))
	}
	return res
}

type duckDBResult struct {
	Columns []string
	Types   []string
	Rows    [][]any
}

// typeOf is the DuckDB type of column name.
func (r duckDBResult) typeOf(name string) string {
	for i, c := range r.Columns {
		if c == name {
			return r.Types[i]
		}
	}
	return ""
}

// FieldF1Query is the per-field F1 of every pass from
// request_fields.parquet alone (the README's query): 2·Σtp / (2·Σtp +
// Σfp + Σfn), 1 where nothing was to be found and nothing wrongly found.
const fieldF1Query = `SELECT run_id, variant, mode, level, repetition, field,
       coalesce(2 * sum(tp) / nullif(2 * sum(tp) + sum(fp) + sum(fn), 0), 1) AS f1
FROM 'request_fields.parquet'
GROUP BY ALL
ORDER BY run_id, variant, mode, level, repetition, min(position)`

// TestExport_DuckDBFieldF1 checks that DuckDB reads request_fields.parquet
// and pass_fields.parquet typed (BIGINT counts, BOOLEAN correct, VARCHAR
// JSON values, DOUBLE ratios) and that the README's query gives, from the
// request rows alone, every pass's per-field F1: pass_fields' f1, and for
// the default fields passes' date_f1, amount_f1 and category_f1 (what the
// report shows). A declared field set named like SQL keywords goes
// through as well. Before, neither file existed.
func TestExport_DuckDBFieldF1(t *testing.T) {
	ctx := context.Background()
	s, dir := MustOpen(t)
	if err := s.CreateRun(ctx, Run{RunID: "run-1", Fingerprint: "fp", ProtocolName: "p", Manifest: json.RawMessage(`{}`), StartedAt: 1, Status: RunComplete}); err != nil {
		t.Fatal(err)
	}
	put := func(key extractbench.PassKey, recs []extractbench.Record) {
		for _, r := range recs {
			s.Add(r)
		}
		p := extractbench.Pass{RunID: key.RunID, Variant: key.Variant, Mode: key.Mode, Level: key.Level, Repetition: key.Repetition,
			Phase: extractbench.PhaseSweep, Attempt: 1, Status: extractbench.PassComplete, Docs: int64(len(recs))}
		eval.Aggregate(recs).Fill(&p)
		if err := s.PutPass(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	defaults := extractbench.PassKey{RunID: "run-1", Variant: "ref", Mode: extractbench.ModeConcurrency, Level: 1, Repetition: 1}
	var recs []extractbench.Record
	for i := range testFieldDocs {
		r := testRecord(defaults, i)
		if r.Score.Date == extractbench.Unscored { // an unscored date whose value was expected: a miss, as the scorer counts it
			exp := "2025-01-01"
			r.Score.Expected.Date = &exp
		}
		if r.Score.Amount == extractbench.Unscored {
			exp := "12.5"
			r.Score.Expected.Amount = &exp
		}
		recs = append(recs, r)
	}
	put(defaults, recs)

	declared := defaults
	declared.Variant = "po"
	recs = nil
	for i := range 10 {
		r := testRecord(declared, i)
		r.Score.Fields = []extractbench.FieldScore{
			{Name: "select", Expected: `"PO-1"`, Got: `"PO-1"`, Result: extractbench.TP, TP: 1},
			{Name: "order", Expected: `["a","b"]`, Got: `["a","c","d"]`, Result: extractbench.FPFN, TP: 1, FP: 2, FN: 1, Reason: "items differ"},
			{Name: "group", Expected: `null`, Got: `null`, Result: extractbench.TN},
		}
		if i%3 == 0 {
			r.Score.Fields[0] = extractbench.FieldScore{Name: "select", Expected: `"PO-1"`, Result: extractbench.Unscored, FN: 1, Reason: "not scored"}
		}
		recs = append(recs, r)
	}
	put(declared, recs)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := Export(ctx, dir); err != nil {
		t.Fatal(err)
	}

	res := duckDBQuery(t, dir,
		`DESCRIBE SELECT * FROM 'request_fields.parquet'`,
		`SELECT * FROM 'request_fields.parquet' LIMIT 1`,
		`SELECT * FROM 'pass_fields.parquet' LIMIT 1`,
		fieldF1Query,
		`SELECT run_id, variant, mode, level, repetition, field, f1 FROM 'pass_fields.parquet' ORDER BY run_id, variant, mode, level, repetition, position`,
		`SELECT variant, date_f1, amount_f1, category_f1 FROM 'passes.parquet' ORDER BY variant`)
	for _, c := range []struct {
		result    int
		col, want string
	}{
		{1, "tp", "BIGINT"}, {1, "position", "BIGINT"}, {1, "correct", "BOOLEAN"}, {1, "expected", "VARCHAR"}, {1, "got", "VARCHAR"},
		{1, "result", "VARCHAR"}, {1, "level", "BIGINT"},
		{2, "f1", "DOUBLE"}, {2, "precision", "DOUBLE"}, {2, "tn", "BIGINT"}, {2, "unscored", "BIGINT"},
	} {
		if got := res[c.result].typeOf(c.col); got != c.want {
			t.Errorf("DuckDB reads %s as %q, want %s", c.col, got, c.want)
		}
	}
	fromRequests, fromPasses := res[3].Rows, res[4].Rows
	if len(fromRequests) != 6 || len(fromPasses) != 6 {
		t.Fatalf("per-field F1: %d rows from request_fields, %d from pass_fields; want 2 passes × 3 fields\n%v\n%v", len(fromRequests), len(fromPasses), fromRequests, fromPasses)
	}
	for i := range fromRequests {
		if !jsonEqual(fromRequests[i], fromPasses[i]) {
			t.Errorf("row %d: request_fields gives %v, pass_fields %v", i, fromRequests[i], fromPasses[i])
		}
	}
	// po before ref: the declared fields, then the default ones.
	if fromRequests[0][5] != "select" || fromRequests[1][5] != "order" || fromRequests[3][5] != "date" || fromRequests[5][5] != "category" {
		t.Errorf("fields out of the protocol's order: %v", fromRequests)
	}
	for _, row := range res[5].Rows {
		if row[0] != "ref" {
			continue
		}
		for i, f1 := range row[1:] {
			if f1 != fromRequests[3+i][6] {
				t.Errorf("%s: passes.parquet F1 %v, request_fields gives %v", fromRequests[3+i][5], f1, fromRequests[3+i][6])
			}
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
