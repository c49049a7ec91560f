package results

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/extractbench/extractbench"
)

// The store's benchmarks, each beside its physical reference (scripts/bench.sh
// runs them interleaved and prints the ratios): BenchmarkStore_AddFlush
// against BenchmarkStore_SQLiteReference, plain prepared INSERTs of the same
// rows in one transaction; BenchmarkExport against
// BenchmarkExport_ArrowReference, arrow-go writing the same columns from
// memory. Each reports rows/s. EXTRACTBENCH_BENCH_ROWS sets the request
// rows of the export benchmarks (default 50,000).

// cpuMeter reports, beside rows/s, the process's CPU time per row: on a
// loaded machine wall time measures the neighbours, CPU time less so.
type cpuMeter struct {
	b     *testing.B
	start time.Duration
}

func meterCPU(b *testing.B) *cpuMeter { return &cpuMeter{b, processCPU()} }

// report reports rows/s and CPU ns/row for rows rows written since meterCPU.
func (m *cpuMeter) report(rows int) {
	m.b.ReportMetric(float64(rows)/m.b.Elapsed().Seconds(), "rows/s")
	if cpu := processCPU() - m.start; cpu > 0 {
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

// BenchmarkStore_SQLiteReference inserts BenchmarkStore_AddFlush's rows with
// one prepared INSERT per row in one transaction on the same schema: what
// SQLite itself does with them, no queue, no upsert, no redaction.
func BenchmarkStore_SQLiteReference(b *testing.B) {
	ctx := context.Background()
	s, _ := MustOpen(b)
	recs := benchRecords(1000)
	insert := requestColumns.insertSQL("requests", 1, "")
	b.ReportAllocs()
	m := meterCPU(b)
	n := 0
	for b.Loop() {
		n++
		tx, err := s.wdb.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		stmt, err := tx.PrepareContext(ctx, insert)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range recs {
			r.Repetition = n
			if _, err := stmt.ExecContext(ctx, requestValues(r)...); err != nil {
				b.Fatal(err)
			}
		}
		stmt.Close()
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

// BenchmarkExport_ArrowReference writes BenchmarkExport's request rows, the
// same columns with the run context, from Arrow arrays built once in memory
// through pqarrow with the export's writer properties: what arrow-go itself
// does with them, no SQLite.
func BenchmarkExport_ArrowReference(b *testing.B) {
	n := benchRows(b)
	t := exportTables()[0]
	recs := benchRecords(n)
	var batches []arrow.RecordBatch
	for start := 0; start < n; start += exportBatchRows {
		batches = append(batches, arrowBatch(b, t.schema, recs[start:min(n, start+exportBatchRows)]))
	}
	defer func() {
		for _, rb := range batches {
			rb.Release()
		}
	}()
	out := filepath.Join(b.TempDir(), RequestsParquet)
	b.ReportAllocs()
	m := meterCPU(b)
	for b.Loop() {
		f, err := os.Create(out)
		if err != nil {
			b.Fatal(err)
		}
		fw, err := pqarrow.NewFileWriter(t.schema, f, exportProps(t.dict), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			b.Fatal(err)
		}
		for _, rb := range batches {
			if err := fw.WriteBuffered(rb); err != nil {
				b.Fatal(err)
			}
		}
		if err := fw.Close(); err != nil {
			b.Fatal(err)
		}
	}
	m.report(b.N * n)
}

// arrowBatch builds recs as one record batch of schema (requests' columns
// then the run context), from requestValues.
func arrowBatch(b *testing.B, schema *arrow.Schema, recs []extractbench.Record) arrow.RecordBatch {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	ctxVals := []any{int64(1), "m-8b", "vllm", "0.9.1", "NVIDIA H100 80GB HBM3"}
	for _, r := range recs {
		vals := append(requestValues(r), ctxVals...)
		for i, v := range vals {
			switch fb := rb.Field(i).(type) {
			case *array.Int64Builder:
				switch x := v.(type) {
				case nil:
					fb.AppendNull()
				case int:
					fb.Append(int64(x))
				case int64:
					fb.Append(x)
				default:
					b.Fatalf("column %s: %T", schema.Field(i).Name, v)
				}
			case *array.BooleanBuilder:
				if x, ok := v.(bool); ok {
					fb.Append(x)
				} else {
					fb.AppendNull()
				}
			case *array.StringBuilder:
				switch x := v.(type) {
				case nil:
					fb.AppendNull()
				case string:
					fb.Append(x)
				case fmt.Stringer:
					fb.Append(x.String())
				default:
					fb.Append(fmt.Sprint(x))
				}
			default:
				b.Fatalf("column %s: builder %T", schema.Field(i).Name, fb)
			}
		}
	}
	return rb.NewRecordBatch()
}
