package passrow

import (
	"context"
	"math/rand/v2"
	"syscall"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// benchStore is a store holding one random pass of n requests.
func benchStore(b *testing.B, n int) (*results.Store, extractbench.PassKey) {
	ctx := context.Background()
	s, err := results.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	key := extractbench.PassKey{RunID: "run-b", Variant: "v", Mode: extractbench.ModeConcurrency, Level: 4, Repetition: 1}
	for _, r := range randomPass(rand.New(rand.NewPCG(1, 2)), key, n, nil) {
		r.Output = `{"date": "2025-01-02", "amount": "12.50", "category": "rent", "note": "an answer of a usual length"}`
		s.Add(r)
	}
	if err := s.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	return s, key
}

// cpuSeconds is the process's user and system CPU time: SQLite's work, the
// collector's and Go's, whatever else the machine runs.
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// benchTally tallies one stored pass of 50,000 requests with tally, as a
// run (its steady-state test included) and as a merge (none), and reports
// the CPU seconds it took, which a loaded machine changes less than the
// time.
func benchTally(b *testing.B, tally func(a *Account, key extractbench.PassKey) (*Tally, error)) {
	s, key := benchStore(b, 50_000)
	defer s.Close()
	for _, bc := range []struct {
		name   string
		merged *Shards
	}{{"run", nil}, {"merge", &Shards{Count: 1, Resumes: map[int][]int64{}}}} {
		b.Run(bc.name, func(b *testing.B) {
			a := &Account{Store: s, Merged: bc.merged}
			cpu := cpuSeconds(b)
			for b.Loop() {
				if _, err := tally(a, key); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuSeconds(b)-cpu)/float64(b.N), "cpu-s/op")
		})
	}
}

// BenchmarkTallyPass and BenchmarkReadPass tally one stored pass: SQLite's
// order statistics and window functions against one read of the rows and
// the figures in Go.
//
// Measured on 2 cores at load ~16 (issue 43, item 3), CPU seconds a tally of
// 50,000 requests: TallyPass 1.209 (run) / 0.769 (merge), ReadPass 0.312 /
// 0.303, the run's fed tally (BenchmarkFinish) 0.052. A whole one-pass run
// of 100,000 documents (scripts/rss-scale.sh's protocol, /usr/bin/time,
// old and new binaries run side by side, 3 times): user+sys 370.8, 378.5,
// 350.5 s before, 387.8, 364.1, 344.7 s after (median -1.8%, within the
// spread); peak RSS 213, 200, 205 MiB before, 204, 235, 193 after: the run's
// end-of-run peak comes from reading the run back and exporting it
// (runState.finish), not from the pass row. BenchmarkMerge at 120,000 rows
// (CPU profile): the merged pass rows 1.99 s before, 0.73 s after.
func BenchmarkTallyPass(b *testing.B) {
	benchTally(b, func(a *Account, key extractbench.PassKey) (*Tally, error) {
		return a.TallyPass(context.Background(), key, nil)
	})
}

func BenchmarkReadPass(b *testing.B) {
	benchTally(b, func(a *Account, key extractbench.PassKey) (*Tally, error) {
		return a.ReadPass(context.Background(), key, nil)
	})
}

// BenchmarkFinish is what the run spends instead: 50,000 records fed as
// they are stored (Add), then the figures (Finish), in CPU seconds.
func BenchmarkFinish(b *testing.B) {
	a := &Account{}
	key := extractbench.PassKey{RunID: "run-b", Variant: "v", Mode: extractbench.ModeConcurrency, Level: 4, Repetition: 1}
	recs := randomPass(rand.New(rand.NewPCG(1, 2)), key, 50_000, nil)
	ctx := context.Background()
	cpu := cpuSeconds(b)
	for b.Loop() {
		t := a.NewTally(nil, len(recs))
		for i := range recs {
			t.Add(&recs[i])
		}
		if err := a.Finish(ctx, key, t); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuSeconds(b)-cpu)/float64(b.N), "cpu-s/op")
}
