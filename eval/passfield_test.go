package eval

import (
	"reflect"
	"testing"

	"github.com/extractbench/extractbench"
)

// withDefaultFields fills a record's Score.Fields for the default fields
// from its results, as the scorer does, where the scorer left it empty.
func withDefaultFields(r extractbench.Record) extractbench.Record {
	if r.Score.Fields != nil {
		return r
	}
	for _, name := range extractbench.DefaultFieldNames {
		res, exp, _ := fieldOf(&r, name)
		tp, fp, fn := fieldCounts(res, exp)
		r.Score.Fields = append(r.Score.Fields, extractbench.FieldScore{Name: name, Result: res, TP: tp, FP: fp, FN: fn})
	}
	return r
}

// TestPassTally_PerFieldDefault checks that the per-field figures of the
// default fields, summed from the records' field scores, equal the F1 the
// passes row has always had (date_f1, amount_f1, category_f1), misses and
// unscored nulls included, and that Fill hands them to the pass.
func TestPassTally_PerFieldDefault(t *testing.T) {
	const good = `{"date":"2025-03-14","amount":1234.56,"category":"software"}`
	recs := []extractbench.Record{
		scored("a", good, invoice, extractbench.Transport{}),
		scored("b", `{"date":"2025-03-14","amount":1234.56,"category":"travel"}`, invoice, extractbench.Transport{}),
		scored("c", `not json`, invoice, extractbench.Transport{}),
		scored("d", ``, creditNote, extractbench.Transport{HTTPStatus: 503, Kind: extractbench.TransportHTTPStatus, ErrorBody: "CUDA out of memory"}),
		scored("e", `{"date":"2024-02-29","amount":0.001,"category":null}`, zeroAmount, extractbench.Transport{}),
	}
	for i := range recs {
		recs[i] = withDefaultFields(recs[i])
	}
	tally := Aggregate(recs)
	if len(tally.PerField) != 3 {
		t.Fatalf("%d per-field figures, want the 3 default fields: %+v", len(tally.PerField), tally.PerField)
	}
	for i, pf := range tally.PerField {
		want, ok := tally.Field(extractbench.DefaultFieldNames[i])
		if !ok || pf.Name != extractbench.DefaultFieldNames[i] || pf.Position != i {
			t.Fatalf("field %d is %s at %d, want %s", i, pf.Name, pf.Position, extractbench.DefaultFieldNames[i])
		}
		if pf.TP != int64(want.TP) || pf.FP != int64(want.FP) || pf.FN != int64(want.FN+want.Missed) || pf.TN != int64(want.TN) || pf.Unscored != int64(want.Unscored) {
			t.Errorf("%s: counts %+v, want TP %d FP %d FN %d+%d TN %d unscored %d", pf.Name, pf, want.TP, want.FP, want.FN, want.Missed, want.TN, want.Unscored)
		}
		if pf.F1 != want.F1 || pf.Precision != want.Precision || pf.Recall != want.Recall {
			t.Errorf("%s: P %v R %v F1 %v, want %v %v %v", pf.Name, pf.Precision, pf.Recall, pf.F1, want.Precision, want.Recall, want.F1)
		}
	}
	var p extractbench.Pass
	tally.Fill(&p)
	if !reflect.DeepEqual(p.Fields, tally.PerField) {
		t.Errorf("Fill set fields %+v, want %+v", p.Fields, tally.PerField)
	}
	for i, f1 := range []*float64{p.DateF1, p.AmountF1, p.CategoryF1} {
		if f1 == nil || *f1 != p.Fields[i].F1 {
			t.Errorf("%s: passes F1 %v, per-field F1 %v", p.Fields[i].Name, f1, p.Fields[i].F1)
		}
	}
}

// TestPassTally_PerFieldDeclared checks the sums of declared fields: a
// list's items count one each, a TN and an unscored field are counted
// apart, and fields keep the records' order.
func TestPassTally_PerFieldDeclared(t *testing.T) {
	rec := func(fields ...extractbench.FieldScore) extractbench.Record {
		return extractbench.Record{Score: extractbench.Score{Fields: fields}} // as read back from the store: no Expected.Object
	}
	fs := func(name string, r extractbench.FieldResult, tp, fp, fn int) extractbench.FieldScore {
		return extractbench.FieldScore{Name: name, Result: r, TP: tp, FP: fp, FN: fn}
	}
	var a PassAccumulator
	for _, r := range []extractbench.Record{
		rec(fs("order_no", extractbench.TP, 1, 0, 0), fs("items", extractbench.Unscored, 3, 1, 0), fs("signed", extractbench.TN, 0, 0, 0)),
		rec(fs("order_no", extractbench.FPFN, 0, 1, 1), fs("items", extractbench.Unscored, 2, 0, 2), fs("signed", extractbench.FP, 0, 1, 0)),
		rec(fs("order_no", extractbench.Unscored, 0, 0, 1), fs("items", extractbench.Unscored, 0, 0, 0), fs("signed", extractbench.Unscored, 0, 0, 0)),
		rec(fs("order_no", extractbench.TP, 1, 0, 0), fs("items", extractbench.TP, 2, 0, 0), fs("signed", extractbench.TN, 0, 0, 0), fs("date", extractbench.TP, 1, 0, 0)),
	} {
		a.Add(&r)
	}
	tally := a.Tally(4, 0, nil)
	if fs, ok := tally.Field("items"); !ok || fs.TP != 7 || fs.FN != 2 || !near(fs.F1, 14.0/17) {
		t.Errorf("Field(items) = %+v, %v; want the declared field's stats", fs, ok)
	}
	// A declared field named as a default one is the declared one.
	if fs, ok := tally.Field("date"); !ok || fs.TP != 1 || fs.Unscored != 0 || fs.F1 != 1 {
		t.Errorf("Field(date) = %+v, %v; want the declared date's stats", fs, ok)
	}
	if _, ok := tally.Field("nothing"); ok {
		t.Error("Field(nothing) found a field the pass does not have")
	}
	p := extractbench.Pass{CategoryConfusion: "stale"}
	tally.Fill(&p)
	if p.DateF1 != nil || p.AmountF1 != nil || p.CategoryF1 != nil || p.CategoryConfusion != "" || len(p.Fields) != 4 {
		t.Errorf("a declared pass's row: F1 %v %v %v, confusion %q, %d fields; want the default columns NULL and the 4 fields",
			p.DateF1, p.AmountF1, p.CategoryF1, p.CategoryConfusion, len(p.Fields))
	}
	got := tally.PerField
	want := []extractbench.PassField{
		{Name: "order_no", Position: 0, TP: 2, FP: 1, FN: 2, Unscored: 1, Precision: 2.0 / 3, Recall: 0.5, F1: 4.0 / 7},
		{Name: "items", Position: 1, TP: 7, FP: 1, FN: 2, Unscored: 3, Precision: 7.0 / 8, Recall: 7.0 / 9, F1: 14.0 / 17},
		{Name: "signed", Position: 2, FP: 1, TN: 2, Unscored: 1, Precision: 0, Recall: 0, F1: 0},
		{Name: "date", Position: 3, TP: 1, Precision: 1, Recall: 1, F1: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Name != w.Name || g.Position != w.Position || g.TP != w.TP || g.FP != w.FP || g.FN != w.FN || g.TN != w.TN || g.Unscored != w.Unscored ||
			!near(g.Precision, w.Precision) || !near(g.Recall, w.Recall) || !near(g.F1, w.F1) {
			t.Errorf("field %d: got %+v, want %+v", i, g, w)
		}
	}
}

// TestPassTally_DeclaredDefaultNames: a declared protocol whose fields
// are named date, amount and category, in memory (its expectation a
// declared object), is a pass of declared fields: Field answers from the
// field scores, and the default columns stay NULL.
func TestPassTally_DeclaredDefaultNames(t *testing.T) {
	r := withDefaultFields(extractbench.Record{Score: extractbench.Score{Date: extractbench.TP, Amount: extractbench.TP, Category: extractbench.TP}})
	r.Score.Fields[0] = extractbench.FieldScore{Name: "date", Result: extractbench.FPFN, FP: 1, FN: 1}
	plain := Aggregate([]extractbench.Record{r})
	r.Score.Expected.Object = `{"date":"2025-01-01","amount":"1","category":"x"}`
	declared := Aggregate([]extractbench.Record{r})
	if plain.Declared || !declared.Declared {
		t.Fatalf("declared: %v without the object, %v with it; want false, true", plain.Declared, declared.Declared)
	}
	if fs, _ := declared.Field("date"); fs.F1 != 0 || fs.FP != 1 {
		t.Errorf("declared date: %+v, want the field score's FP+FN", fs)
	}
	var p extractbench.Pass
	declared.Fill(&p)
	if p.DateF1 != nil || len(p.Fields) != 3 {
		t.Errorf("declared pass: date_f1 %v, %d fields; want NULL and 3", p.DateF1, len(p.Fields))
	}
}

// TestPassTally_FieldNames checks that a page listing a pass's fields lists
// the protocol's: the default three for a default pass, the declared ones
// in their order for a declared pass (the report listed date, amount and
// category for every pass before).
func TestPassTally_FieldNames(t *testing.T) {
	def := Aggregate([]extractbench.Record{withDefaultFields(scored("a", `{"date":"2025-03-14","amount":1234.56,"category":"software"}`, invoice, extractbench.Transport{}))})
	if got := def.FieldNames(); !reflect.DeepEqual(got, Fields) {
		t.Errorf("default pass: FieldNames %v, want %v", got, Fields)
	}
	var r extractbench.Record
	r.DocID = "po-1"
	r.Score.Fields = []extractbench.FieldScore{
		{Name: "order_number", Result: extractbench.TP, TP: 1},
		{Name: "total", Result: extractbench.FPFN, FP: 1, FN: 1},
		{Name: "signed", Result: extractbench.TN},
	}
	dec := Aggregate([]extractbench.Record{r})
	want := []string{"order_number", "total", "signed"}
	if got := dec.FieldNames(); !reflect.DeepEqual(got, want) {
		t.Errorf("declared pass: FieldNames %v, want %v", got, want)
	}
	if f, ok := dec.Field("total"); !ok || f.F1 != 0 {
		t.Errorf("declared pass: Field(total) = %+v, %t; want F1 0", f, ok)
	}
}
