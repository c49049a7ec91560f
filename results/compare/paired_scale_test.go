//go:build unix

package compare

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/plan/plantest"
)

// writeVariants writes a run of n variants, each with two level-1
// repetitions of docs documents, the i-th variant failing its first i%7
// documents.
func writeVariants(tb testing.TB, n, docs int) string {
	tb.Helper()
	dir := tb.TempDir()
	m := plantest.Manifest(plantest.DefaultCorpusSHA, "meta-llama/Llama-3.1-8B-Instruct", "NVIDIA H100 80GB HBM3", 85_520_809_984, 0.95, 0)
	var vs []map[string]any
	run := plantest.Run{RunID: "many", Manifest: m}
	for i := range n {
		name := fmt.Sprintf("v%04d", i)
		vs = append(vs, map[string]any{"name": name, "engine": map[string]any{"model": "m"}})
		for rep := 1; rep <= 2; rep++ {
			run.Records = append(run.Records, plantest.Records(name, 1, rep, docs, func(d int) bool { return d >= i%7 })...)
			run.Passes = append(run.Passes, plantest.Pass(name, 1, rep, docs, docs-i%7, 600, 900))
		}
	}
	m["variants"] = vs
	plantest.Write(tb, dir, run)
	return dir
}

// BenchmarkPairedVerdicts pairs every variant of a run of
// EXTRACTBENCH_PAIRED_VARIANTS variants (default 100) with the first, as
// the report and the run's summary do, and reports the wall and CPU time
// (user and system) per pair.
//
//	go test ./results/compare -run '^$' -bench PairedVerdicts -benchtime 1x
func BenchmarkPairedVerdicts(b *testing.B) {
	n := 100
	if s := os.Getenv("EXTRACTBENCH_PAIRED_VARIANTS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	dir := writeVariants(b, n, 300)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		start, cpu := time.Now(), cpuTime()
		run, err := results.LoadRun(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		ps, err := PairedVerdicts(ctx, dir, run)
		if err != nil || len(ps) != n-1 {
			b.Fatalf("%d verdicts, %v; want %d", len(ps), err, n-1)
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(n-1), "ms/pair")
		b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(n-1), "cpu-ms/pair")
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestPairedVerdicts_ReadsTheRunOnce is issue 40 item 9: pairing every
// variant of a run with its baseline reads the run (every row, for the
// expectations) once, and each variant's pass once, so that it is linear
// in the rows. It read both sides in full for every pair: 500 variants
// spent 160 s on 66 of 499 pairs. Each verdict is still Run's for the pair.
func TestPairedVerdicts_ReadsTheRunOnce(t *testing.T) {
	const n = 6
	dir := writeVariants(t, n, 60)
	ctx := context.Background()
	run, err := results.LoadRun(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	before := runReads.Load()
	ps, err := PairedVerdicts(ctx, dir, run)
	if err != nil || len(ps) != n-1 {
		t.Fatalf("%d verdicts, %v; want %d", len(ps), err, n-1)
	}
	if got := runReads.Load() - before; got != 1 {
		t.Errorf("the run was read %d times for %d pairs, want once", got, n-1)
	}
	for _, p := range ps {
		r, err := Run(ctx, Options{A: Side{Dir: dir, Variant: p.Baseline}, B: Side{Dir: dir, Variant: p.Variant}, Margin: p.Margin})
		if err != nil {
			t.Fatal(err)
		}
		eq := r.Equivalence
		if got, want := [4]float64{float64(p.N), float64(p.Lost), float64(p.Gained), p.Delta}, [4]float64{float64(eq.N), float64(eq.B), float64(eq.C), eq.Delta}; got != want {
			t.Errorf("%s: paired (n, lost, gained, Δ) = %v, Run says %v", p.Variant, got, want)
		}
	}
}
