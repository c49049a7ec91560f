package results

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/extractbench/extractbench"
)

// fillStore writes two runs: run-1 with two passes of nRecords/2 requests,
// run-2 with one pass of a few; telemetry for one pass.
func fillStore(t testing.TB, s *Store, nRecords int) {
	t.Helper()
	ctx := context.Background()
	for _, r := range []Run{
		{RunID: "run-1", Fingerprint: "fp", ProtocolName: "default", StartedAt: 1, Status: RunComplete, Simulated: true,
			Manifest: json.RawMessage(`{"variants": [{"name": "ref", "engine": {"model": "m-8b", "kind": "vllm", "version": "0.9.1"}, "gpu": {"name": "NVIDIA H100 80GB HBM3"}}]}`)},
		{RunID: "run-2", Fingerprint: "fp", ProtocolName: "default", Manifest: json.RawMessage(`{}`), StartedAt: 2, Status: RunInterrupted},
	} {
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	keys := []extractbench.PassKey{
		{RunID: "run-1", Variant: "ref", Mode: "concurrency", Level: 1, Repetition: 1},
		{RunID: "run-1", Variant: "ref", Mode: "concurrency", Level: 2, Repetition: 1},
	}
	for _, k := range keys {
		for i := range nRecords / 2 {
			s.Add(testRecord(k, i))
		}
		if err := s.PutPass(ctx, extractbench.Pass{RunID: k.RunID, Variant: k.Variant, Mode: k.Mode, Level: k.Level, Repetition: k.Repetition,
			Phase: extractbench.PhaseSweep, Attempt: 1, SentConcurrency: int64(k.Level), Status: extractbench.PassComplete, DurationNS: 5e9,
			Docs: int64(nRecords / 2), Accepted: int64(nRecords / 8), E2EN: 3, E2EP50NS: i64p(123), OutputTokensPerS: f64p(math.Nextafter(0.3, 1)),
			Endpoints: i64p(2), EndpointRequestsMin: i64p(int64(nRecords / 6)), EndpointRequestsMax: i64p(int64(nRecords / 6)),
			CachedPromptTokens: i64p(int64(nRecords * 100)), CachedPromptShare: f64p(0.25),
			Verdict: "not_usable", VerdictReason: "acceptance 25%, below 95%", Fields: testPassFields()}); err != nil {
			t.Fatal(err)
		}
	}
	k2 := extractbench.PassKey{RunID: "run-2", Variant: "q4", Mode: "batch", Level: 4, Repetition: 1}
	for i := range 5 {
		s.Add(testRecord(k2, i))
	}
	if err := s.PutPass(ctx, extractbench.Pass{RunID: k2.RunID, Variant: k2.Variant, Mode: k2.Mode, Level: 4, Repetition: 1,
		Phase: extractbench.PhaseBaseline, Attempt: 2, RetryOf: i64p(8), RequestedBatch: i64p(4), SentConcurrency: 4,
		BatchTransport: extractbench.TransportCompletionsList, Status: extractbench.PassInterrupted, Docs: 5, Fields: testPassFields()}); err != nil {
		t.Fatal(err)
	}
	var samples []TelemetrySample
	for i := range 50 {
		samples = append(samples, TelemetrySample{TNS: int64(i) * 1e8, Metric: "vllm:kv_cache_usage_perc", Value: float64(i) / 50,
			Endpoint: []string{"", "http://10.0.0.1:8000"}[i%2]})
	}
	if err := s.AddTelemetry(ctx, keys[0], samples); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// testPassFields are per-field figures of a pass, the default fields'.
func testPassFields() []extractbench.PassField {
	return []extractbench.PassField{
		{Name: "date", TP: 16, FP: 16, FN: 32, Unscored: 32, Precision: 0.5, Recall: 1.0 / 3, F1: 0.4},
		{Name: "amount", Position: 1, TP: 16, FN: 48, Unscored: 32, Precision: 1, Recall: 0.25, F1: 0.4},
		{Name: "category", Position: 2, FP: 16, TN: 16, Unscored: 32, F1: 0},
	}
}

func TestExport(t *testing.T) {
	ctx := context.Background()
	s, dir := MustOpen(t)
	const n = exportRowGroupRows + 2*exportBatchRows + 200 // more than one row group, and batches, in requests.parquet
	fillStore(t, s, n)

	// Export while the store is still open, as the runner does.
	paths, err := Export(ctx, dir)
	if err != nil {
		t.Fatalf("Export: %v", err)
	}
	want := []string{RequestsParquet, PassesParquet, TelemetryParquet, RequestFieldsParquet, PassFieldsParquet, RawTableCSV}
	for i := range want {
		want[i] = filepath.Join(dir, want[i])
	}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("Export returned %v, want %v", paths, want)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}

	rowCounts := map[string]int{RequestsParquet: n + 5, PassesParquet: 3, TelemetryParquet: 50,
		RequestFieldsParquet: 3 * (2*testFieldDocs + 5), PassFieldsParquet: 3 * 3}
	for _, et := range exportTables() {
		tc := struct {
			file   string
			schema *arrow.Schema
			query  string
			rows   int
		}{et.file, et.schema, et.query, rowCounts[et.file]}
		t.Run(tc.file, func(t *testing.T) {
			if fi, err := os.Stat(filepath.Join(dir, tc.file)); err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("%s: mode %v (%v), want 0644: results are for every reader of the directory", tc.file, fi.Mode(), err)
			}
			gotSchema, got := readParquet(t, filepath.Join(dir, tc.file))
			if len(gotSchema.Fields()) != len(tc.schema.Fields()) {
				t.Fatalf("schema has %d fields, want %d", len(gotSchema.Fields()), len(tc.schema.Fields()))
			}
			for i, f := range tc.schema.Fields() {
				g := gotSchema.Field(i)
				if g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) || g.Nullable != f.Nullable {
					t.Errorf("field %d = %s %s nullable=%v, want %s %s nullable=%v", i, g.Name, g.Type, g.Nullable, f.Name, f.Type, f.Nullable)
				}
			}
			wantRows := sqliteRows(t, s.rdb, tc.query, tc.schema)
			if len(got) != tc.rows || len(wantRows) != tc.rows {
				t.Fatalf("parquet has %d rows, SQLite %d, want %d", len(got), len(wantRows), tc.rows)
			}
			for i := range wantRows {
				if !reflect.DeepEqual(got[i], wantRows[i]) {
					t.Fatalf("row %d:\nparquet %v\n sqlite %v", i, got[i], wantRows[i])
				}
			}
			// The run context closes every row: run-1's variant from its
			// manifest, run-2's (no variants in its manifest) NULL.
			ctxAt := tc.schema.NumFields() - len(runContextFields)
			first, last := got[0][ctxAt:], got[len(got)-1][ctxAt:]
			if want := []any{int64(1), int64(1000), "m-8b", "vllm", "0.9.1", "NVIDIA H100 80GB HBM3"}; tc.file != TelemetryParquet && !reflect.DeepEqual(first, want) {
				t.Errorf("first row's run context = %v, want %v", first, want)
			}
			if tc.file != TelemetryParquet && !reflect.DeepEqual(last, []any{nil, nil, nil, nil, nil, nil}) {
				t.Errorf("last row's run context = %v, want NULLs (run-2's manifest names no variant)", last)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, RawTableCSV)); err != nil {
		t.Fatal(err)
	} else if fi, _ := os.Stat(filepath.Join(dir, RawTableCSV)); fi.Mode().Perm() != 0o644 {
		t.Errorf("%s: mode %v, want 0644", RawTableCSV, fi.Mode())
	}

	t.Run(RawTableCSV, func(t *testing.T) {
		f, err := os.Open(filepath.Join(dir, RawTableCSV))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := len(recs), 1+3; got != want {
			t.Fatalf("raw_table.csv has %d lines, want a header and one per pass: %d", got, want)
		}
		header := recs[0]
		wantHeader := append([]string{"run_id", "protocol_name", "fingerprint", "simulated"}, passColumns.names()[1:]...)
		for i, h := range wantHeader {
			if h == "accepted" {
				wantHeader[i] = "accepted_docs" // a count; requests.accepted is a flag
			}
		}
		if !reflect.DeepEqual(header, wantHeader) {
			t.Errorf("header = %v\nwant %v", header, wantHeader)
		}
		col := func(row int, name string) string {
			for i, h := range header {
				if h == name {
					return recs[row][i]
				}
			}
			t.Fatalf("no column %s", name)
			return ""
		}
		for _, c := range []struct {
			row        int
			name, want string
		}{
			{1, "run_id", "run-1"}, {1, "simulated", "1"}, {1, "level", "1"}, {2, "level", "2"},
			{1, "output_tokens_per_s", "0.30000000000000004"}, {1, "peak_gpu_mem_bytes", ""}, {1, "e2e_p50_ns", "123"},
			{1, "verdict_reason", "acceptance 25%, below 95%"},
			{3, "run_id", "run-2"}, {3, "simulated", "0"}, {3, "retry_of", "8"}, {3, "batch_transport", "completions_list"}, {3, "verdict", ""},
		} {
			if got := col(c.row, c.name); got != c.want {
				t.Errorf("row %d %s = %q, want %q", c.row, c.name, got, c.want)
			}
		}
	})
}

func TestExport_NoDatabase(t *testing.T) {
	dir := t.TempDir()
	if _, err := Export(context.Background(), dir); err == nil {
		t.Error("Export of a directory without results.db succeeded, want an error")
	}
	if _, err := os.Stat(filepath.Join(dir, DBName)); !os.IsNotExist(err) {
		t.Errorf("Export created %s", DBName)
	}
}

// TestColumnTables_MatchTables checks each table's one column list against
// the table the migrations make and against its Parquet file: the same
// columns, the SQL type and NULL rule of the column's kind, an Arrow type
// that holds the column's values and nullable exactly where the column may
// be NULL. A column added to a migration and not to the list (or to the
// list and not to a migration) fails here, as does one the export would
// leave out. Columns are matched by name: every statement names its
// columns, and a failures_<class> column added at open sits last in
// SQLite whatever the list's order (addFailureColumns).
func TestColumnTables_MatchTables(t *testing.T) {
	s, _ := MustOpen(t)
	lists := columnLists()
	for _, table := range tableNames(t, s.rdb) {
		if _, ok := lists[table]; !ok {
			t.Errorf("table %s has no column list", table)
		}
	}
	for table, cols := range lists {
		matchByName(t, table, tableInfo(t, s.rdb, table), cols)
	}
	for table, schema := range map[string]*arrow.Schema{"requests": requestsSchema, "passes": passesSchema, "telemetry": telemetrySchema,
		"request_fields": requestFieldsSchema, "pass_fields": passFieldsSchema} {
		cols := tableInfo(t, s.rdb, table)
		if len(cols) != schema.NumFields() {
			t.Errorf("%s: table has %d columns, schema %d fields", table, len(cols), schema.NumFields())
			continue
		}
		for _, c := range cols {
			i := schema.FieldIndices(c.name)
			if len(i) != 1 {
				t.Errorf("%s: column %s is %d fields of the schema, want 1", table, c.name, len(i))
				continue
			}
			f := schema.Field(i[0])
			wantType := map[arrow.Type]string{arrow.INT64: "INTEGER", arrow.BOOL: "INTEGER", arrow.FLOAT64: "REAL", arrow.STRING: "TEXT"}[f.Type.ID()]
			if wantType != c.typ || f.Nullable == c.notNull {
				t.Errorf("%s.%s: table %s notnull=%v; schema %s nullable=%v", table, c.name, c.typ, c.notNull, f.Type, f.Nullable)
			}
			if strings.HasSuffix(c.name, "_ns") && f.Type.ID() != arrow.INT64 {
				t.Errorf("%s.%s is %s, want int64 nanoseconds", table, c.name, f.Type)
			}
		}
	}
	// Every table column reaches its file, under its export name.
	for _, et := range exportTables() {
		table := strings.TrimSuffix(et.file, ".parquet")
		for _, c := range tableInfo(t, s.rdb, table) {
			name := c.name
			if to, ok := exportRenames[table][name]; ok {
				name = to
			}
			if !et.schema.HasField(name) {
				t.Errorf("%s: column %s.%s is not exported", et.file, table, c.name)
			}
		}
	}
}

// TestExport_Encodings checks requests.parquet's layout: row groups of
// exportRowGroupRows, the repeated labels dictionary-encoded and the
// per-row values (document ids, outputs, instants) plain, so that no
// dictionary is built for a column that overflows it.
func TestExport_Encodings(t *testing.T) {
	ctx := context.Background()
	s, dir := MustOpen(t)
	fillStore(t, s, exportRowGroupRows+exportBatchRows)
	if _, err := Export(ctx, dir); err != nil {
		t.Fatal(err)
	}
	r, err := file.OpenParquetFile(filepath.Join(dir, RequestsParquet), false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	md := r.MetaData()
	wantRows := []int64{exportRowGroupRows, exportBatchRows + 5}
	if md.NumRowGroups() != len(wantRows) {
		t.Fatalf("%d row groups, want %d", md.NumRowGroups(), len(wantRows))
	}
	for g, want := range wantRows {
		rg := md.RowGroup(g)
		if rg.NumRows() != want {
			t.Errorf("row group %d: %d rows, want %d", g, rg.NumRows(), want)
		}
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			name := md.Schema.Column(c).Name()
			wantDict := requestColumns.dictionary()[name] || slices.ContainsFunc(runContextFields, func(f arrow.Field) bool { return f.Name == name })
			if got := cc.HasDictionaryPage(); got != wantDict {
				t.Errorf("row group %d column %s: dictionary page %v, want %v", g, name, got, wantDict)
			}
		}
	}
	for _, c := range []string{"run_id", "variant", "failure", "model"} {
		if !requestColumns.dictionary()[c] && c != "model" {
			t.Errorf("%s is not dictionary-encoded", c)
		}
	}
	for _, c := range []string{"doc_id", "output", "send_ns"} {
		if requestColumns.dictionary()[c] {
			t.Errorf("%s is dictionary-encoded: one value per row", c)
		}
	}
}

// listedColumn is a column as its column list declares it.
type listedColumn struct {
	name, typ string
	nullable  bool
}

// matchByName checks that a table's columns and its column list name the
// same columns, each with the list's type and NULL rule.
func matchByName(t *testing.T, table string, info []columnInfo, cols []listedColumn) {
	t.Helper()
	got := map[string]columnInfo{}
	for _, c := range info {
		got[c.name] = c
	}
	for _, l := range cols {
		c, ok := got[l.name]
		switch {
		case !ok:
			t.Errorf("%s: listed column %s is not in the table", table, l.name)
		case c.typ != l.typ || c.notNull == l.nullable:
			t.Errorf("%s.%s: table %s notnull=%v; list %s nullable=%v", table, l.name, c.typ, c.notNull, l.typ, l.nullable)
		}
		delete(got, l.name)
	}
	for name := range got {
		t.Errorf("%s: table column %s is not in its column list", table, name)
	}
}

// columnLists is every table's column list, by table.
func columnLists() map[string][]listedColumn {
	return map[string][]listedColumn{
		"runs":           listed(runColumns),
		"passes":         listed(passColumns),
		"requests":       listed(requestColumns),
		"telemetry":      listed(telemetryColumns),
		"decisions":      listed(decisionColumns),
		"events":         listed(eventColumns),
		"digests":        listed(digestColumns),
		"request_fields": listed(requestFieldColumns),
		"pass_fields":    listed(passFieldColumns),
	}
}

func listed[T any](cs columns[T]) []listedColumn {
	out := make([]listedColumn, len(cs))
	for i, c := range cs {
		out[i] = listedColumn{c.name, c.kind.sqlType(), c.nullable}
	}
	return out
}

// tableNames lists the tables the migrations create.
func tableNames(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return tables
}

type columnInfo struct {
	name, typ string
	notNull   bool
}

func tableInfo(t *testing.T, db *sql.DB, table string) []columnInfo {
	t.Helper()
	rows, err := db.Query(`SELECT name, type, "notnull" FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var cols []columnInfo
	for rows.Next() {
		var c columnInfo
		if err := rows.Scan(&c.name, &c.typ, &c.notNull); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return cols
}

// readParquet reads a whole file back through pqarrow; each row is a slice
// of int64, float64, bool, string or nil.
func readParquet(t *testing.T, path string) (*arrow.Schema, [][]any) {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1000}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	tr := array.NewTableReader(tbl, 1000)
	defer tr.Release()
	var rows [][]any
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := range int(rec.NumRows()) {
			row := make([]any, rec.NumCols())
			for j, col := range rec.Columns() {
				if col.IsNull(i) {
					continue
				}
				switch a := col.(type) {
				case *array.Int64:
					row[j] = a.Value(i)
				case *array.Timestamp:
					row[j] = int64(a.Value(i)) // as SQLite holds it: microseconds since the epoch
				case *array.Float64:
					row[j] = a.Value(i)
				case *array.Boolean:
					row[j] = a.Value(i)
				case *array.String:
					row[j] = a.Value(i)
				default:
					t.Fatalf("column %d: unexpected array %T", j, col)
				}
			}
			rows = append(rows, row)
		}
	}
	return tbl.Schema(), rows
}

// sqliteRows reads query's rows, typed by schema, in readParquet's form.
func sqliteRows(t *testing.T, db *sql.DB, query string, schema *arrow.Schema) [][]any {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		dest := make([]any, schema.NumFields())
		for i, f := range schema.Fields() {
			switch f.Type.ID() {
			case arrow.INT64, arrow.TIMESTAMP:
				dest[i] = new(sql.NullInt64)
			case arrow.FLOAT64:
				dest[i] = new(sql.NullFloat64)
			case arrow.BOOL:
				dest[i] = new(sql.NullBool)
			case arrow.STRING:
				dest[i] = new(sql.NullString)
			}
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		row := make([]any, len(dest))
		for i, d := range dest {
			v, err := d.(driver.Valuer).Value()
			if err != nil {
				t.Fatal(err)
			}
			row[i] = v
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestExport_Empty(t *testing.T) {
	s, dir := MustOpen(t)
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := Export(context.Background(), dir); err != nil {
		t.Fatalf("Export of an empty db: %v", err)
	}
	sch, rows := readParquet(t, filepath.Join(dir, RequestsParquet))
	if want := requestsSchema.NumFields() + len(runContextFields); len(rows) != 0 || sch.NumFields() != want {
		t.Errorf("empty requests.parquet: %d rows, %d fields; want 0 and %d", len(rows), sch.NumFields(), want)
	}
	b, err := os.ReadFile(filepath.Join(dir, RawTableCSV))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(b), "\n"); lines != 1 {
		t.Errorf("empty raw_table.csv has %d lines, want the header only", lines)
	}
}

// TestExport_RemovesStaleTemps is issue 17's fifth reproduction: the
// temporary file of an export that was killed before its rename is removed
// by the next export; other files are left alone.
func TestExport_RemovesStaleTemps(t *testing.T) {
	s, dir := MustOpen(t)
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, ".requests.parquet.tmp-123456")
	keep := filepath.Join(dir, "notes.tmp-1")
	for _, p := range []string{stale, keep} {
		if err := os.WriteFile(p, []byte("half a file"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Export(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s still there after the next export (%v)", stale, err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a file that is not an export's was removed: %v", err)
	}
}

// TestLockDir: one holder at a time, even within one process; the holder
// is named; a released lock is taken again without a stale holder.
func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	l, err := LockDir(dir, "run")
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockDir(dir, "export")
	var le *LockedError
	if !errors.As(err, &le) || le.Holder.PID != os.Getpid() || le.Holder.Command != "run" {
		t.Fatalf("second LockDir: err = %v, want a LockedError naming pid %d (run)", err, os.Getpid())
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := LockDir(dir, "export")
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Unlock()
	if l2.Stale != nil {
		t.Errorf("a cleanly released lock reads as stale: %+v", l2.Stale)
	}
}
