package results

import (
	"context"
	"fmt"
	"github.com/extractbench/extractbench"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/extractbench/extractbench/eval"
)

// inMemoryTrend is what PassTrend must equal: the groups made from the
// records held in memory (measured, sent and done), in send order with
// ties in storage order, trim left out at each end, each class cut in
// thirds as SQL's NTILE(3) cuts (the first n mod 3 tiles one larger).
func inMemoryTrend(recs []extractbench.Record, trim int) []eval.TrendGroup {
	var rows []extractbench.Record
	for _, r := range recs {
		if r.Transport.Kind != extractbench.TransportInterrupted && r.Transport.Kind != extractbench.TransportClient && r.SendNS > 0 && r.DoneNS >= r.SendNS {
			rows = append(rows, r)
		}
	}
	slices.SortStableFunc(rows, func(a, b extractbench.Record) int { return int(a.SendNS - b.SendNS) })
	if len(rows) <= 2*trim {
		return nil
	}
	rows = rows[trim : len(rows)-trim]
	var classes []string
	byClass := map[string][]float64{}
	for _, r := range rows {
		c := string(r.LengthClass)
		if _, ok := byClass[c]; !ok {
			classes = append(classes, c)
		}
		byClass[c] = append(byClass[c], float64(r.DoneNS-r.SendNS))
	}
	slices.Sort(classes)
	var out []eval.TrendGroup
	for _, c := range classes {
		e := byClass[c]
		n := len(e)
		size := func(tile int) int { // NTILE(3): tile 0, 1, 2
			s := n / 3
			if tile < n%3 {
				s++
			}
			return s
		}
		early := e[:size(0)]
		late := e[size(0)+size(1):]
		g := eval.TrendGroup{Class: c, NEarly: len(early), NLate: len(late)}
		both := append(append([]float64{}, early...), late...)
		for _, v := range early {
			below, equal := 0, 0
			for _, w := range both {
				if w < v {
					below++
				} else if w == v {
					equal++
				}
			}
			g.RankSumEarly += float64(below) + float64(equal+1)/2
		}
		if len(early) > 0 {
			g.MedianEarly = eval.Describe(early).P50
		}
		if len(late) > 0 {
			g.MedianLate = eval.Describe(late).P50
		}
		out = append(out, g)
	}
	return out
}

// TestPassTrend_Exact: the trend test's groups read from SQLite (window
// functions, sorted on disk) equal those made in memory, on random passes
// with ties, two length classes, missing instants and interrupted rows.
func TestPassTrend_Exact(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	rng := rand.New(rand.NewPCG(3, 9))
	for lv, n := range []int{0, 1, 7, 50, 301} {
		key := extractbench.PassKey{RunID: "run-trend", Variant: "v", Mode: "concurrency", Level: lv + 1, Repetition: 1}
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
		for _, trim := range []int{0, 1, 4} {
			got, err := s.PassTrend(ctx, key, int64(trim))
			if err != nil {
				t.Fatal(err)
			}
			want := inMemoryTrend(recs, trim)
			if len(got) != len(want) {
				t.Fatalf("%d records, trim %d: %d groups, want %d: %+v %+v", n, trim, len(got), len(want), got, want)
			}
			for i := range got {
				g, w := got[i], want[i]
				if g.Class != w.Class || g.NEarly != w.NEarly || g.NLate != w.NLate || math.Abs(g.RankSumEarly-w.RankSumEarly) > 1e-9 ||
					g.MedianEarly != w.MedianEarly || g.MedianLate != w.MedianLate {
					t.Errorf("%d records, trim %d, class %s:\n got %+v\nwant %+v", n, trim, g.Class, g, w)
				}
			}
			if n == 301 && trim == 1 && (len(got) != 2 || got[0].NEarly < 20) {
				t.Errorf("the random pass exercises too little: %s", fmt.Sprint(got))
			}
		}
	}
}
