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

// declaredRecord is a record scored on declared fields.
func declaredRecord(id string, fields ...extractbench.FieldScore) extractbench.Record {
	var rec extractbench.Record
	rec.DocID = id
	rec.Score.Fields = fields
	return rec
}

// TestF1Delta_Declared checks that a declared field's delta counts its
// FieldScore's TP, FP and FN (a list's items, not one per document), and
// that a name the records were not scored on is NaN, the default ones
// included. The old F1Delta knew date, amount and category only: NaN for
// "lines", a number for "date".
func TestF1Delta_Declared(t *testing.T) {
	lines := func(tp, fp, fn int) extractbench.FieldScore {
		return extractbench.FieldScore{Name: "lines", TP: tp, FP: fp, FN: fn}
	}
	total := extractbench.FieldScore{Name: "total", Result: extractbench.TP, TP: 1}
	a := []extractbench.Record{declaredRecord("1", lines(3, 0, 1), total), declaredRecord("2", lines(2, 0, 0), total)}
	b := []extractbench.Record{declaredRecord("2", lines(1, 1, 1), total), declaredRecord("1", lines(4, 0, 0), total)}
	// A: tp 5, fn 1 → F1 10/11. B: tp 5, fp 1, fn 1 → F1 10/12.
	delta, lo, hi := F1Delta(a, b, "lines", 200, 3)
	if want := 10.0/12 - 10.0/11; !near(delta, want) {
		t.Errorf("lines: got delta %v, want %v", delta, want)
	}
	if !(lo <= delta && delta <= hi) {
		t.Errorf("lines: interval [%v, %v] does not hold %v", lo, hi, delta)
	}
	if d, _, _ := F1Delta(a, b, "total", 200, 3); d != 0 {
		t.Errorf("total: got delta %v, want 0", d)
	}
	for _, name := range []string{"date", "currency"} {
		if d, _, _ := F1Delta(a, b, name, 100, 1); !math.IsNaN(d) {
			t.Errorf("%s, not a field of the records: got %v, want NaN", name, d)
		}
	}
}

// TestSumPassFields checks that two repetitions' field figures sum by name
// in the protocol's order, with F1 made of the sums.
func TestSumPassFields(t *testing.T) {
	r1 := []extractbench.PassField{{Name: "select", TP: 3, FN: 1}, {Name: "a|b", TP: 1, TN: 2}}
	r2 := []extractbench.PassField{{Name: "select", TP: 1, FP: 2, FN: 1, Unscored: 1}, {Name: "a|b", TN: 3}}
	got := SumPassFields(r1, r2)
	if len(got) != 2 || got[0].Name != "select" || got[1].Name != "a|b" || got[1].Position != 1 {
		t.Fatalf("got %+v, want select then a|b", got)
	}
	if s := got[0]; s.TP != 4 || s.FP != 2 || s.FN != 2 || s.Unscored != 1 || !near(s.F1, 8.0/12) {
		t.Errorf("select: got %+v, want tp 4 fp 2 fn 2, F1 8/12", s)
	}
	if s := got[1]; s.TN != 5 || s.F1 != 1 {
		t.Errorf("a|b: got %+v, want tn 5, F1 1", s)
	}
}
