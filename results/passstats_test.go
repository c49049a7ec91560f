package results

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// randomRecord is the i-th record of a pass with instants drawn from a
// narrow range (ties are common), any instant missing at times (a request
// never sent, an error before the first token, no schedule), and now and
// then an interrupted row, which every figure leaves out.
func randomRecord(rng *rand.Rand, key extractbench.PassKey, i int) extractbench.Record {
	r := extractbench.Record{RunID: key.RunID, Variant: key.Variant, Mode: key.Mode, Level: key.Level, Repetition: key.Repetition,
		DocID: fmt.Sprintf("d%05d", i), LengthClass: "short"}
	at := func(lo int64, steps int) int64 { return lo + int64(rng.IntN(steps))*1_000 }
	start := at(1_000_000, 40) // sends and dones of different requests often coincide
	if rng.IntN(8) > 0 {
		r.SchedNS = start
	}
	if rng.IntN(10) > 0 {
		r.SendNS = at(start, 3)
		r.DoneNS = at(r.SendNS, 6)
	}
	if r.SendNS > 0 && rng.IntN(4) > 0 { // else an error before the first token
		r.FirstTokenNS = at(r.SendNS+1_000, 3)
		r.LastTokenNS = at(r.FirstTokenNS, 4)
		r.DoneNS = max(r.DoneNS, r.LastTokenNS)
		r.CompletionTokens = rng.IntN(5)
		// Now and then an engine that counts an end-of-generation token it
		// never streams (TPOT divides by the chunks then: extractbench.Record.TPOTSteps).
		r.ClientChunks = max(r.CompletionTokens-rng.IntN(2), 0)
		r.UsageReported = rng.IntN(4) > 0
		r.FinishReason = []string{"stop", "length", ""}[rng.IntN(3)]
	}
	r.Output = []string{"", `{"a":1}`, `{"a":2}`}[rng.IntN(3)]
	r.Accepted = rng.IntN(2) == 0
	if rng.IntN(15) == 0 {
		r.Transport.Kind = extractbench.TransportInterrupted
	}
	return r
}

// inMemoryOrderStats is what PassOrderStats must equal: the figures made
// from the records held in memory, as the passes row was made before it
// was streamed (eval.DescribeNS over each latency; in flight by sorting
// every send and done).
func inMemoryOrderStats(recs []extractbench.Record) PassOrderStats {
	var ttft, ttftSched, e2e, e2eSched, queue, tpot []int64
	type edge struct {
		t     int64
		delta int
	}
	var edges []edge
	for _, r := range recs {
		// extractbench's one definition of each latency: the SQL must agree
		// with it, a missing t_sched included (once read as 0).
		for _, l := range []struct {
			dst *[]int64
			of  func() (int64, bool)
		}{{&ttft, r.TTFT}, {&ttftSched, r.TTFTSched}, {&e2e, r.E2E}, {&e2eSched, r.E2ESched}, {&queue, r.ClientQueue}} {
			if ns, ok := l.of(); ok {
				*l.dst = append(*l.dst, ns)
			}
		}
		if ns, ok := r.TPOT(); ok {
			tpot = append(tpot, ns)
		}
		if r.SendNS > 0 && r.DoneNS >= r.SendNS {
			edges = append(edges, edge{r.SendNS, 1}, edge{r.DoneNS, -1})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.t != b.t {
			return int(a.t - b.t)
		}
		return a.delta - b.delta
	})
	var cur, peak int64
	for _, e := range edges {
		cur += int64(e.delta)
		peak = max(peak, cur)
	}
	agg := eval.Aggregate(recs)
	return PassOrderStats{
		TTFT: eval.DescribeNS(ttft), TTFTSched: eval.DescribeNS(ttftSched), E2E: eval.DescribeNS(e2e),
		E2ESched: eval.DescribeNS(e2eSched), Queue: eval.DescribeNS(queue), TPOT: eval.DescribeNS(tpot),
		MaxInFlight: peak, UniqueDocs: agg.UniqueDocs, Recovered: agg.Recovered,
	}
}

// TestPassOrderStats_Exact checks the figures SQLite computes for a passes
// row against the same figures made in memory, for exact equality (every
// percentile, min, max, mean and count, bit for bit): on random passes full
// of ties and missing instants, an empty pass, one record, and passes whose
// requests all failed before a first token or were never sent.
func TestPassOrderStats_Exact(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	rng := rand.New(rand.NewPCG(17, 8))
	type pass struct {
		name string
		n    int
		edit func(*extractbench.Record)
	}
	passes := []pass{
		{"empty", 0, nil}, {"one record", 1, nil}, {"two records", 2, nil}, {"random 7", 7, nil},
		{"random 100", 100, nil}, {"random 1000", 1000, nil},
		{"errors only", 50, func(r *extractbench.Record) {
			r.FirstTokenNS, r.LastTokenNS, r.CompletionTokens, r.Output, r.Accepted = 0, 0, 0, "", false
			r.Transport.Kind = extractbench.TransportRefused
		}},
		{"never sent", 20, func(r *extractbench.Record) {
			r.SendNS, r.FirstTokenNS, r.LastTokenNS, r.DoneNS = 0, 0, 0, 0
		}},
		{"all interrupted", 10, func(r *extractbench.Record) { r.Transport.Kind = extractbench.TransportInterrupted }},
		{"one value", 30, func(r *extractbench.Record) {
			r.SchedNS, r.SendNS, r.FirstTokenNS, r.LastTokenNS, r.DoneNS, r.CompletionTokens = 1e6, 1e6+10, 1e6+20, 1e6+50, 1e6+60, 3
			r.Transport.Kind = extractbench.TransportOK
		}},
	}
	for lv, p := range passes {
		key := extractbench.PassKey{RunID: "run-stats", Variant: "v", Mode: "concurrency", Level: lv + 1, Repetition: 1}
		for i := range p.n {
			r := randomRecord(rng, key, i)
			if p.edit != nil {
				p.edit(&r)
			}
			s.Add(r)
		}
		recs, err := s.PassRecords(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.PassOrderStats(ctx, key)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if want := inMemoryOrderStats(recs); !reflect.DeepEqual(got, want) {
			t.Errorf("%s (%d measured records):\n got %+v\nwant %+v", p.name, len(recs), got, want)
		}
		if p.name == "random 1000" && (got.E2E.N < 500 || got.TPOT.N == 0 || got.MaxInFlight < 2) {
			t.Errorf("%s: the random pass exercises too little: %+v", p.name, got)
		}
	}
}

// TestPassInvariance_Exact checks the SQL join against eval.Invariance on
// the records held in memory: outputs drawn from three (ties of equal
// answers), documents missing from the base pass, interrupted rows on
// either side, and another repetition that must not be compared.
func TestPassInvariance_Exact(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	rng := rand.New(rand.NewPCG(3, 4))
	base := extractbench.PassKey{RunID: "run-inv", Variant: "v", Mode: "concurrency", Level: 1, Repetition: 1}
	key, other := base, base
	key.Level, other.Repetition = 8, 2
	for i := range 400 {
		if i%7 != 0 { // every seventh document has no base row
			s.Add(randomRecord(rng, base, i))
		}
		s.Add(randomRecord(rng, key, i))
		s.Add(randomRecord(rng, other, i))
	}
	baseRecs, err := s.PassRecords(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := s.PassRecords(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	wantChanged, wantVerdicts, _ := eval.Invariance(baseRecs, recs)
	changed, verdicts, err := s.PassInvariance(ctx, key, base.Level)
	if err != nil {
		t.Fatal(err)
	}
	if changed != wantChanged || verdicts != wantVerdicts {
		t.Errorf("PassInvariance = %d changed, %d verdicts; eval.Invariance says %d, %d", changed, verdicts, wantChanged, wantVerdicts)
	}
	if wantChanged == 0 || wantVerdicts == 0 || wantVerdicts == wantChanged {
		t.Errorf("the random passes exercise too little: %d changed, %d verdicts", wantChanged, wantVerdicts)
	}
	if c, v, err := s.PassInvariance(ctx, base, base.Level); err != nil || c != 0 || v != 0 {
		t.Errorf("a pass against itself: %d changed, %d verdicts, %v; want 0, 0", c, v, err)
	}
}

// TestEachPassRecord_Streams checks that the rows stream in the order they
// were stored, as PassRecords returns them, interrupted rows left out.
func TestEachPassRecord_Streams(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 50 {
		s.Add(randomRecord(rng, testKey, i))
	}
	want, err := s.PassRecords(ctx, testKey)
	if err != nil {
		t.Fatal(err)
	}
	var got []extractbench.Record
	if err := s.EachPassRecord(ctx, testKey, func(r *extractbench.Record) { got = append(got, *r) }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || len(got) == 50 {
		t.Errorf("EachPassRecord gave %d records, PassRecords %d (of 50 stored, some interrupted); equal: %v", len(got), len(want), reflect.DeepEqual(got, want))
	}
}
