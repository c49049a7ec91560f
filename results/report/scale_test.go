package report

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// writeStreamed writes the fixture's run as write does (without telemetry,
// events or decisions), one pass at a time (resultstest.Run.Stream), so
// that a run of a million rows is written holding one pass.
func (f fixture) writeStreamed(tb testing.TB, dir string) {
	tb.Helper()
	docs, manifest := f.corpusAndManifest(tb, dir)
	const startedAt = 1767225600000
	resultstest.Write(tb, dir, resultstest.Run{RunID: fixtureRunID, Fingerprint: "f1ae5e", ProtocolName: "fixture", Manifest: manifest,
		StartedAt: startedAt, EndedAt: startedAt + 1800_000, Status: results.RunComplete, Simulated: true,
		Stream: func(put func([]extractbench.Record, extractbench.Pass)) {
			clock := int64(5e9)
			for vi, variant := range f.variants() {
				for _, lv := range f.Levels {
					for rep := 1; rep <= f.Reps; rep++ {
						recs := f.pass(fixtureRunID, variant, vi, docs, lv, rep, clock)
						p := f.passRow(fixtureRunID, variant, recs, lv, rep)
						put(recs, p)
						clock = *p.EndedNS + 1e9
					}
				}
			}
		}})
}

// heapOf runs fn and returns the heap it used above what was live before:
// the highest sampled (every half millisecond, so a peak between two
// samples is missed) and what fn's result keeps live after a collection.
func heapOf(fn func() any) (peak, retained uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	base := m.HeapAlloc
	var top uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var s runtime.MemStats
		for {
			runtime.ReadMemStats(&s)
			top = max(top, s.HeapAlloc)
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Microsecond):
			}
		}
	})
	kept := fn()
	close(stop)
	wg.Wait()
	runtime.GC()
	runtime.ReadMemStats(&m)
	runtime.KeepAlive(kept)
	sub := func(a uint64) uint64 { return max(a, base) - base }
	return sub(top), sub(m.HeapAlloc)
}

// TestBuild_HeapFlatInPasses builds the report of two runs of the same
// corpus, one of 4 passes and one of 16 (4 repetitions): the report holds
// what it shows and one pass's documents, never the run's rows, so the
// larger run costs about the same heap, at the peak of building the page
// and in the dataset loaded, where holding the rows took 4 times as much.
func TestBuild_HeapFlatInPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 24,000 rows")
	}
	measure := func(reps int) (peak, retained uint64) {
		f := fixture{Docs: 1500, Levels: []int{1, 2}, Reps: reps, OOMAt: 2, Version: "0.1.0", Bare: true}
		dir := t.TempDir()
		f.writeStreamed(t, dir)
		peak, _ = heapOf(func() any {
			p, err := build(context.Background(), dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			return p
		})
		_, retained = heapOf(func() any {
			d, err := load(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			return d
		})
		return peak, retained
	}
	small, smallKept := measure(1)
	large, largeKept := measure(4)
	t.Logf("4 passes: peak %d kB, loaded %d kB; 16 passes: peak %d kB, loaded %d kB", small>>10, smallKept>>10, large>>10, largeKept>>10)
	// Held rows make 4 times the passes 4 times the heap; a scan per pass
	// keeps it flat, and a peak sampled late or a collection run early
	// moves a figure by far less than the 2 allowed.
	if large > 2*small+1<<20 {
		t.Errorf("peak heap: %d kB for 16 passes, %d kB for 4: grows with the passes", large>>10, small>>10)
	}
	if largeKept > 2*smallKept+1<<20 {
		t.Errorf("heap kept by the loaded dataset: %d kB for 16 passes, %d kB for 4: grows with the passes", largeKept>>10, smallKept>>10)
	}
}

// BenchmarkReport writes the report of a run of EXTRACTBENCH_REPORT_ROWS
// request rows (default 250,000) made of passes of EXTRACTBENCH_REPORT_DOCS
// documents (default 62,500; levels 1, 2, 4, 8 and as many repetitions as
// the rows need), and reports the rows per second, the CPU per row
// (cpu-ns/row, user and system time) and the heap's sampled peak. EXTRACTBENCH_REPORT_KEEP=DIR writes the run there and keeps it, for
// scripts/rss-scale.sh to measure the command's peak RSS on:
//
//	go test ./results/report -run '^$' -bench BenchmarkReport -benchtime 1x
func BenchmarkReport(b *testing.B) {
	rows, docs := envInt("EXTRACTBENCH_REPORT_ROWS", 250_000), envInt("EXTRACTBENCH_REPORT_DOCS", 62_500)
	passes := max(1, rows/docs)
	f := fixture{Docs: docs, Levels: []int{1, 2, 4, 8}[:min(4, passes)], Reps: max(1, passes/4), OOMAt: 8, Version: "0.1.0", Bare: true}
	dir := os.Getenv("EXTRACTBENCH_REPORT_KEEP")
	if dir == "" {
		dir = b.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, results.DBName)); err != nil {
		start := time.Now()
		f.writeStreamed(b, dir)
		b.Logf("wrote %d rows (%d passes of %d documents) in %s", len(f.Levels)*f.Reps*docs, len(f.Levels)*f.Reps, docs, time.Since(start).Round(time.Millisecond))
	}
	var peak uint64
	runtime.GC() // the fixture's garbage is not the report's
	cpu0 := resultstest.ProcessCPU()
	b.ResetTimer()
	for b.Loop() {
		p, _ := heapOf(func() any {
			if err := Write(context.Background(), dir); err != nil {
				b.Fatal(err)
			}
			return nil
		})
		peak = max(peak, p)
	}
	n := len(f.Levels) * f.Reps * docs
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	if cpu := resultstest.ProcessCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(n*b.N), "cpu-ns/row")
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}
