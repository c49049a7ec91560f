package results

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
)

// The store's benchmarks, each beside its physical reference (scripts/bench.sh
// runs them interleaved and prints the ratios of their CPU per row):
//
//   - BenchmarkStore_AddFlush against BenchmarkStore_SQLiteReference, the
//     same rows (requests and request_fields) bound from Go values built
//     beforehand into plain multi-row INSERTs prepared once, in one
//     transaction: the fastest way SQLite takes rows a Go program holds.
//     BenchmarkStore_SQLiteCopyFloor is below any ingest: SQLite's
//     INSERT … SELECT of the same rows from an attached database, rows
//     already in SQLite's record format, no binding at all.
//   - BenchmarkExport against BenchmarkExport_ArrowReference, the same
//     results.db read with database/sql, the same Parquet files written by
//     pqarrow from record batches with the export's writer properties.
//
// Each reports cpu-ns/row, the process's CPU (user + system) per row over
// the measured loop, and rows/s. EXTRACTBENCH_BENCH_ROWS sets the request
// rows of the export benchmarks (default 50,000).

// cpuMeter measures the process's CPU time over a benchmark's measured
// loop, paused where the benchmark stops its timer: on a loaded machine
// wall time measures the neighbours, CPU time far less.
type cpuMeter struct {
	b       *testing.B
	start   time.Duration // processCPU when last resumed
	spent   time.Duration // CPU of the measured stretches before start
	stopped bool
}

// meterCPU collects the garbage of the setup, then starts metering.
func meterCPU(b *testing.B) *cpuMeter {
	runtime.GC()
	return &cpuMeter{b: b, start: processCPU()}
}

// stop stops the benchmark's timer and the meter.
func (m *cpuMeter) stop() {
	m.b.StopTimer()
	m.spent += processCPU() - m.start
	m.stopped = true
}

// resume restarts them.
func (m *cpuMeter) resume() {
	m.stopped = false
	m.start = processCPU()
	m.b.StartTimer()
}

// report reports rows/s and CPU ns/row for rows rows written while metered.
func (m *cpuMeter) report(rows int) {
	m.b.ReportMetric(float64(rows)/m.b.Elapsed().Seconds(), "rows/s")
	cpu := m.spent
	if !m.stopped {
		cpu += processCPU() - m.start
	}
	if cpu > 0 {
		m.b.ReportMetric(float64(cpu.Nanoseconds())/float64(rows), "cpu-ns/row")
	}
}

// watchHeap samples the live heap (objects, not yet collected garbage
// included) every millisecond until the returned function is called, which
// returns the largest sample.
func watchHeap() (stop func() uint64) {
	done := make(chan struct{})
	var max atomic.Uint64
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > max.Load() {
				max.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		return max.Load()
	}
}

// benchRows is the number of request rows the export benchmarks write.
func benchRows(b *testing.B) int {
	n := 50_000
	if s := os.Getenv("EXTRACTBENCH_BENCH_ROWS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			b.Fatalf("EXTRACTBENCH_BENCH_ROWS=%q: want a positive row count", s)
		}
		n = v
	}
	return n
}

// benchRecords are n records of one pass per repetition of 1,000 records:
// testRecord's variety (values and NULLs in every column).
func benchRecords(n int) []extractbench.Record {
	recs := make([]extractbench.Record, n)
	for i := range recs {
		k := testKey
		k.Repetition = i/1000 + 1
		recs[i] = testRecord(k, i%1000)
	}
	return recs
}

// BenchmarkStore_AddFlush adds 1,000 records of a new pass and flushes,
// through the writer goroutine as a run does.
func BenchmarkStore_AddFlush(b *testing.B) {
	ctx := context.Background()
	s, _ := MustOpen(b)
	recs := benchRecords(1000)
	b.ReportAllocs()
	m := meterCPU(b)
	n := 0
	for b.Loop() {
		n++
		for _, r := range recs {
			r.Repetition = n // a new pass each time: every row is inserted
			s.Add(r)
		}
		if err := s.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	m.report(n * len(recs))
}

// BenchmarkStore_SQLiteReference writes BenchmarkStore_AddFlush's rows,
// requests and request_fields, in SQLite's fastest path for rows a Go
// program holds: their values built beforehand (only the repetition set
// per pass), plain INSERTs of refInsertRows rows each prepared once, one
// transaction per 1,000 records, on a results.db of the same schema in WAL
// mode with SQLite's default checkpoints. No queue, no upsert, no
// redaction, no mapping of records to values.
func BenchmarkStore_SQLiteReference(b *testing.B) {
	ctx := context.Background()
	recs := benchRecords(1000)
	db := openBenchDB(b, newCopyDestination(b))
	reqs := bulkOf(db, "requests", requestColumns.names())
	fields := bulkOf(db, "request_fields", requestFieldColumns.names())
	var frows []requestField
	for i := range recs {
		reqs.vals = requestColumns.values(reqs.vals, &recs[i])
		frows = fieldRows(frows, &recs[i])
	}
	for i := range frows {
		fields.vals = requestFieldColumns.values(fields.vals, &frows[i])
	}
	m := meterCPU(b)
	n := 0
	for b.Loop() {
		n++
		rep := any(int64(n)) // a new pass each time: every row is inserted
		reqs.set(rep)
		fields.set(rep)
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, t := range []*bulkRows{fields, reqs} {
			if err := t.insert(ctx, tx); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	m.report(n * len(recs))
}

// refInsertRows is how many rows one INSERT of the ingest reference writes.
const refInsertRows = 64

// bulkRows are one table's rows as Go values, row after row, and its
// INSERTs of refInsertRows rows and of one row, prepared once.
type bulkRows struct {
	many, one *sql.Stmt
	cols, rep int // values per row; the repetition's position in a row
	vals      []any
}

func bulkOf(db *sql.DB, table string, names []string) *bulkRows {
	insert := func(rows int) *sql.Stmt {
		one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ") + ")"
		st, err := db.Prepare(`INSERT INTO ` + table + ` (` + strings.Join(names, ", ") + `) VALUES ` + strings.TrimSuffix(strings.Repeat(one+", ", rows), ", "))
		if err != nil {
			panic(err)
		}
		return st
	}
	return &bulkRows{many: insert(refInsertRows), one: insert(1), cols: len(names), rep: slices.Index(names, "repetition")}
}

// set sets every row's repetition to rep.
func (t *bulkRows) set(rep any) {
	for i := t.rep; i < len(t.vals); i += t.cols {
		t.vals[i] = rep
	}
}

// insert writes every row in tx.
func (t *bulkRows) insert(ctx context.Context, tx *sql.Tx) error {
	many, one := tx.StmtContext(ctx, t.many), tx.StmtContext(ctx, t.one)
	for vals := t.vals; len(vals) > 0; {
		stmt, k := one, t.cols
		if len(vals) >= refInsertRows*t.cols {
			stmt, k = many, refInsertRows*t.cols
		}
		if _, err := stmt.ExecContext(ctx, vals[:k]...); err != nil {
			return err
		}
		vals = vals[k:]
	}
	return nil
}

// openBenchDB opens dir's results.db (made by Open, so of the current
// schema) as a plain program would for bulk writes: one connection, WAL,
// synchronous NORMAL as the store, SQLite's default autocheckpoint.
func openBenchDB(b *testing.B, dir string) *sql.DB {
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, DBName)+"?_journal_mode=WAL&_synchronous=NORMAL")
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
	return db
}

// BenchmarkStore_SQLiteCopyFloor is below any ingest of
// BenchmarkStore_AddFlush's rows: SQLite copying them, requests and
// request_fields, with INSERT … SELECT from an attached results.db that
// holds them, one transaction per 1,000 records, only the repetition set
// per pass. The rows are already in SQLite's record format there: nothing
// is bound or converted, so no program that holds its rows in Go memory
// can reach it; bench.sh prints it for scale, without a goal.
func BenchmarkStore_SQLiteCopyFloor(b *testing.B) {
	ctx := context.Background()
	recs := benchRecords(1000)
	src, srcDir := MustOpen(b)
	for _, r := range recs {
		src.Add(r)
	}
	if err := src.Close(); err != nil {
		b.Fatal(err)
	}
	db := openBenchDB(b, newCopyDestination(b))
	abs, _ := filepath.Abs(filepath.Join(srcDir, DBName))
	if _, err := db.ExecContext(ctx, `ATTACH DATABASE ? AS src`, "file:"+abs+"?mode=ro"); err != nil {
		b.Fatal(err)
	}
	copySQL := func(table string, names []string) string {
		sel := slices.Clone(names)
		sel[slices.Index(sel, "repetition")] = "?"
		return `INSERT INTO main.` + table + ` (` + strings.Join(names, ", ") + `) SELECT ` + strings.Join(sel, ", ") + ` FROM src.` + table
	}
	copies := []string{copySQL("request_fields", requestFieldColumns.names()), copySQL("requests", requestColumns.names())}
	m := meterCPU(b)
	n := 0
	for b.Loop() {
		n++
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range copies {
			if _, err := tx.ExecContext(ctx, q, n); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	m.report(n * len(recs))
}

// BenchmarkExport exports a results directory of benchRows request rows
// (two passes) with its passes, telemetry and raw_table.csv: the whole of
// Export, rows/s counted in request rows.
func BenchmarkExport(b *testing.B) {
	ctx := context.Background()
	n := benchRows(b)
	s, dir := MustOpen(b)
	fillStore(b, s, n)
	// Closed, its WAL checkpointed: the fill's checkpoints, which a run
	// spreads over its whole length, must not run beside the export measured.
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	runtime.GC()
	peak := watchHeap()
	m := meterCPU(b)
	for b.Loop() {
		if _, err := Export(ctx, dir); err != nil {
			b.Fatal(err)
		}
	}
	m.report(b.N * n)
	b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MB")
	if fi, err := os.Stat(filepath.Join(dir, RequestsParquet)); err == nil {
		b.ReportMetric(float64(fi.Size())/float64(n), "B/row")
	}
}

// BenchmarkExport_ArrowReference is "read SQLite, then encode" done
// plainly on BenchmarkExport's results.db: one read transaction through
// database/sql, each Parquet file Export writes read by the same query and
// written by pqarrow from record batches of exportBatchRows with the same
// writer properties (the same files: TestWriteParquet_SameFilesAsPQArrow),
// raw_table.csv by encoding/csv, each file synced; one file after another,
// no pipeline. rows/s and cpu-ns/row are counted in request rows, as
// BenchmarkExport's.
func BenchmarkExport_ArrowReference(b *testing.B) {
	ctx := context.Background()
	n := benchRows(b)
	s, dir := MustOpen(b)
	fillStore(b, s, n)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	out := b.TempDir()
	b.ReportAllocs()
	m := meterCPU(b)
	for b.Loop() {
		if err := exportReference(ctx, dir, out); err != nil {
			b.Fatal(err)
		}
	}
	m.report(b.N * n)
}

// exportReference writes into out the files Export writes of dir.
func exportReference(ctx context.Context, dir, out string) error {
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, DBName)+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, t := range exportTables() {
		if err := writeSynced(filepath.Join(out, t.file), func(w io.Writer) error { return writeParquetPQArrow(ctx, tx, w, t) }); err != nil {
			return fmt.Errorf("%s: %w", t.file, err)
		}
	}
	return writeSynced(filepath.Join(out, RawTableCSV), func(w io.Writer) error { return writeRawTable(ctx, tx, w) })
}

// writeSynced writes path through fill and syncs it.
func writeSynced(path string, fill func(w io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := fill(struct{ io.Writer }{f}); err != nil { // pqarrow would close an io.Closer before the sync
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}
