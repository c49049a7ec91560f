package eval

import (
	"math"
	"testing"

	"github.com/extractbench/extractbench"
)

// dateRecord is a record whose date scored r against the expectation exp.
func dateRecord(id string, r extractbench.FieldResult, exp *string) extractbench.Record {
	var rec extractbench.Record
	rec.DocID = id
	rec.Score.Date = r
	rec.Score.Expected.Date = exp
	return rec
}

func TestF1Delta(t *testing.T) {
	day := ptr("2025-03-14")
	a := []extractbench.Record{
		dateRecord("1", extractbench.TP, day),
		dateRecord("2", extractbench.TP, day),
		dateRecord("3", extractbench.FPFN, day),
		dateRecord("4", extractbench.TN, nil),
		dateRecord("5", extractbench.Unscored, day), // a miss: counts as FN
		dateRecord("only-a", extractbench.FP, nil),  // unpaired: left out
	}
	b := []extractbench.Record{
		dateRecord("5", extractbench.TP, day),
		dateRecord("4", extractbench.TN, nil),
		dateRecord("3", extractbench.TP, day),
		dateRecord("2", extractbench.TP, day),
		dateRecord("1", extractbench.TP, day),
		dateRecord("1", extractbench.FN, day), // a repeated DocID: the first record pairs
	}
	// A: tp 2, fp 1, fn 2 → F1 = 4/7. B: tp 4 → F1 = 1. Delta = 3/7.
	delta, lo, hi := F1Delta(a, b, "date", 500, 7)
	if !near(delta, 3.0/7) {
		t.Errorf("got delta %v, want 3/7", delta)
	}
	if !(lo <= delta && delta <= hi) || lo < -1 || hi > 1 {
		t.Errorf("got interval [%v, %v] around %v, want it to hold the estimate", lo, hi, delta)
	}
	d2, lo2, hi2 := F1Delta(a, b, "date", 500, 7)
	if d2 != delta || lo2 != lo || hi2 != hi {
		t.Errorf("same seed: got %v [%v, %v], want %v [%v, %v]", d2, lo2, hi2, delta, lo, hi)
	}
	if d, _, _ := F1Delta(a, a, "date", 100, 1); d != 0 {
		t.Errorf("A against itself: got delta %v, want 0", d)
	}
	for _, c := range []struct {
		name  string
		a, b  []extractbench.Record
		field string
	}{{"unknown field", a, b, "currency"}, {"no common document", a[:1], b[:1], "date"}} {
		if d, lo, hi := F1Delta(c.a, c.b, c.field, 100, 1); !math.IsNaN(d) || !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("%s: got %v [%v, %v], want NaN", c.name, d, lo, hi)
		}
	}
}
