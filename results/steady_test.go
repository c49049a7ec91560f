package results

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// TestPassSteadyBlocks_Exact: the steady-state blocks and head read from SQLite
// (window functions, sorted on disk) equal eval.SteadyBlocksOf's, the
// definition, on random passes with ties, two length classes, missing
// instants and interrupted rows.
func TestPassSteadyBlocks_Exact(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	rng := rand.New(rand.NewPCG(3, 9))
	tested, heads := false, false
	for lv, n := range []int{0, 1, 7, 50, 301} {
		key := extractbench.PassKey{RunID: "run-steady", Variant: "v", Mode: "concurrency", Level: lv + 1, Repetition: 1}
		for i := range n {
			r := randomRecord(rng, key, i)
			if i%3 == 0 {
				r.LengthClass = "long"
			}
			s.Add(r)
		}
		recs, err := s.PassRecords(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		var reqs []eval.SteadyRequest
		for _, r := range recs { // stored order: ties by rowid
			if r.Transport.Kind != extractbench.TransportInterrupted && r.Transport.Kind != extractbench.TransportClient && r.SendNS > 0 && r.DoneNS >= r.SendNS {
				reqs = append(reqs, eval.SteadyRequest{Class: string(r.LengthClass), SendNS: r.SendNS, E2ENS: r.DoneNS - r.SendNS})
			}
		}
		for _, trim := range []int64{0, 1, 4} {
			got, err := s.PassSteadyBlocks(ctx, key, trim)
			if err != nil {
				t.Fatal(err)
			}
			want := eval.SteadyBlocksOf(reqs, trim)
			if len(got.Blocks) != len(want.Blocks) {
				t.Fatalf("%d records, trim %d: %d blocks, want %d: %+v %+v", n, trim, len(got.Blocks), len(want.Blocks), got, want)
			}
			if math.Abs(got.Head-want.Head) > 1e-9*max(1, want.Head) {
				t.Errorf("%d records, trim %d: head %v, want %v", n, trim, got.Head, want.Head)
			}
			heads = heads || want.Head > 0
			if len(want.Blocks) == 0 {
				continue
			}
			tested = true
			if math.Abs(got.MedianE2ENS-want.MedianE2ENS) > 1e-6 {
				t.Errorf("%d records, trim %d: median E2E %v, want %v", n, trim, got.MedianE2ENS, want.MedianE2ENS)
			}
			for i := range got.Blocks {
				g, w := got.Blocks[i], want.Blocks[i]
				if g.N != w.N || math.Abs(g.Ratio-w.Ratio) > 1e-12*max(1, w.Ratio) {
					t.Errorf("%d records, trim %d, block %d: got %+v, want %+v", n, trim, i, g, w)
				}
			}
		}
	}
	if !tested || !heads {
		t.Errorf("blocks compared %v, heads compared %v: a random pass too small for the test compares nothing", tested, heads)
	}
}
