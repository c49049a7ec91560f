package compare

import (
	"bytes"
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results/plan/plantest"
)

// hostileFields are declared field names that SQL, HTML and Markdown would
// read as their own: the store, the text and the CI formats keep them as
// names.
var hostileFields = []string{"select", "<b>", "a|b"}

// declaredScores is one answer's field scores on hostileFields: "select" a
// string, "<b>" a decimal, "a|b" a list of two items. wrong names the
// fields to get wrong ("*" fails the whole answer, unparsed).
func declaredScores(wrong ...string) []extractbench.FieldScore {
	bad := map[string]bool{}
	for _, w := range wrong {
		bad[w] = true
	}
	fs := []extractbench.FieldScore{
		{Name: "select", Expected: `"x"`, Got: `"x"`, Result: extractbench.TP, TP: 1},
		{Name: "<b>", Expected: `"1"`, Got: "1", Result: extractbench.TP, TP: 1},
		{Name: "a|b", Expected: `["p","q"]`, Got: `["p","q"]`, Result: extractbench.TP, TP: 2},
	}
	for i := range fs {
		f := &fs[i]
		switch {
		case bad["*"]:
			f.Got, f.Result, f.TP, f.FN, f.Reason = "", extractbench.Unscored, 0, f.TP, "the answer did not parse"
		case bad[f.Name] && f.Name == "a|b":
			f.Got, f.Result, f.TP, f.FN, f.Reason = `["p"]`, extractbench.FN, 1, 1, "1 of 2 items missed"
		case bad[f.Name]:
			f.Got, f.Result, f.TP, f.FP, f.FN, f.Reason = `"2"`, extractbench.FPFN, 0, 1, 1, "got 2, want 1"
		}
	}
	return fs
}

// declaredRun stores a run of two variants judged on hostileFields, one
// level and repetition, five documents: "base" fails d0005 on select;
// "alt" fails d0002 on <b>, d0003 as a whole (no parse) and d0004 on a|b.
func declaredRun(t *testing.T, dir string) {
	t.Helper()
	declaredRunNamed(t, dir, nil, nil)
}

// declaredRunNamed is declaredRun with hostileFields renamed by rename
// (wrong still names the hostile names) and the run's manifest (nil: the
// fixture's).
func declaredRunNamed(t *testing.T, dir string, rename map[string]string, manifest map[string]any) {
	t.Helper()
	wrong := map[string]map[int][]string{"base": {4: {"select"}}, "alt": {1: {"<b>"}, 2: {"*"}, 3: {"a|b"}}}
	run := plantest.Run{RunID: "declared", Manifest: manifest}
	for _, v := range []string{"base", "alt"} {
		recs := plantest.Records(v, 1, 1, 5, func(i int) bool { return wrong[v][i] == nil })
		for i := range recs {
			r := &recs[i]
			r.Date, r.Amount, r.Category, r.Prediction = "", "", "", extractbench.Prediction{}
			r.Score.Fields = declaredScores(wrong[v][i]...)
			for k := range r.Score.Fields {
				if to, ok := rename[r.Score.Fields[k].Name]; ok {
					r.Score.Fields[k].Name = to
				}
			}
			if w := wrong[v][i]; w != nil {
				r.Failure, r.FailureDetail = extractbench.Quality, "fields wrong"
				if w[0] == "*" {
					r.Failure, r.StrictParseOK, r.LenientParseOK, r.SchemaOK = extractbench.Format, false, false, false
				}
			}
		}
		p := plantest.Pass(v, 1, 1, 5, 5-len(wrong[v]), 1, 100)
		eval.Aggregate(recs).Fill(&p)
		run.Records, run.Passes = append(run.Records, recs...), append(run.Passes, p)
	}
	plantest.Write(t, dir, run)
}

// TestCompare_DeclaredFields compares two variants of a run judged on
// declared fields, read back from the store: the per-field deltas are the
// declared fields in the protocol's order, counted from their per-request
// rows (a list by its items), and each flip names the fields behind it.
// The old compare listed date, amount and category, with NaN F1.
func TestCompare_DeclaredFields(t *testing.T) {
	dir := t.TempDir()
	declaredRun(t, dir)
	r, err := Run(context.Background(), Options{A: Side{Dir: dir, Variant: "base"}, B: Side{Dir: dir, Variant: "alt"}})
	if err != nil {
		t.Fatal(err)
	}
	// base: select TP 4 FP 1 FN 1 (8/10), the others perfect. alt:
	// select TP 4 FN 1 (8/9); <b> TP 3 FP 1 FN 2 (6/9); a|b TP 7 FN 3 (14/17).
	want := []struct {
		name   string
		af, bf float64
	}{{"select", 0.8, 8.0 / 9}, {"<b>", 1, 6.0 / 9}, {"a|b", 1, 14.0 / 17}}
	if len(r.Fields) != len(want) {
		t.Fatalf("got fields %+v, want %v", r.Fields, hostileFields)
	}
	for i, w := range want {
		f := r.Fields[i]
		if f.Field != w.name || math.Abs(f.AF1-w.af) > 1e-9 || math.Abs(f.BF1-w.bf) > 1e-9 || math.Abs(f.Delta-(w.bf-w.af)) > 1e-9 {
			t.Errorf("field %d: got %s A %v B %v Δ %v, want %s A %v B %v", i, f.Field, f.AF1, f.BF1, f.Delta, w.name, w.af, w.bf)
		}
		if !(f.Lo <= f.Delta && f.Delta <= f.Hi) {
			t.Errorf("%s: interval [%v, %v] does not hold Δ %v", f.Field, f.Lo, f.Hi, f.Delta)
		}
	}
	wantFlips := []FlipFields{
		{DocID: "d0002", Failed: "B", Failure: extractbench.Quality, Fields: []FieldMiss{{"<b>", "got 2, want 1"}}},
		{DocID: "d0003", Failed: "B", Failure: extractbench.Format, Unparsed: true, Reason: "the answer did not parse"},
		{DocID: "d0004", Failed: "B", Failure: extractbench.Quality, Fields: []FieldMiss{{"a|b", "1 of 2 items missed"}}},
		{DocID: "d0005", Failed: "A", Failure: extractbench.Quality, Fields: []FieldMiss{{"select", "got 2, want 1"}}},
	}
	if !reflect.DeepEqual(r.FlipFields, wantFlips) {
		t.Errorf("flip fields:\ngot  %+v\nwant %+v", r.FlipFields, wantFlips)
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"field   A      B      Δ       interval",
		"<b>     1.000  0.667  -0.333",
		"    fields B got wrong: a|b (1 of 2 items missed)",
		"    no field of B scored: the answer did not parse",
		"    fields A got wrong: select (got 2, want 1)",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("text lacks %q:\n%s", line, b.String())
		}
	}
}

// TestCompare_DeclaredDefaultNames: a protocol may declare fields named
// date, amount and category (its own rules for the default names); read
// back from the store they are still the declared fields, known from the
// run's stored protocol. The old compare took them for the default fields
// and read the default columns, unscored in a declared run: F1 1.000 on
// both sides of a run whose B got date and amount wrong.
func TestCompare_DeclaredDefaultNames(t *testing.T) {
	dir := t.TempDir()
	manifest := plantest.Manifest(plantest.DefaultCorpusSHA, "m", "NVIDIA H100 80GB HBM3", 85_520_809_984, 0.95, 0)
	manifest["protocol"] = map[string]any{"fields": []any{
		map[string]any{"name": "date", "type": "string"},
		map[string]any{"name": "amount", "type": "decimal"},
		map[string]any{"name": "category", "type": "list"},
	}}
	declaredRunNamed(t, dir, map[string]string{"select": "date", "<b>": "amount", "a|b": "category"}, manifest)
	r, err := Run(context.Background(), Options{A: Side{Dir: dir, Variant: "base"}, B: Side{Dir: dir, Variant: "alt"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name   string
		af, bf float64
	}{{"date", 0.8, 8.0 / 9}, {"amount", 1, 6.0 / 9}, {"category", 1, 14.0 / 17}}
	if len(r.Fields) != len(want) {
		t.Fatalf("got fields %+v, want date, amount, category", r.Fields)
	}
	for i, w := range want {
		f := r.Fields[i]
		if f.Field != w.name || math.Abs(f.AF1-w.af) > 1e-9 || math.Abs(f.BF1-w.bf) > 1e-9 {
			t.Errorf("field %d: got %s A %v B %v, want %s A %v B %v", i, f.Field, f.AF1, f.BF1, w.name, w.af, w.bf)
		}
	}
	if len(r.FlipFields) != 4 {
		t.Errorf("flip fields: got %+v, want the four flips' fields", r.FlipFields)
	}
}

// TestFieldsBehind checks when a failed answer's fields are named and
// when the answer failed as a whole: a skipped expectation is no error,
// and one field left is named even when it alone did not parse.
func TestFieldsBehind(t *testing.T) {
	skipped := extractbench.FieldScore{Name: "note", Reason: eval.ReasonNotReviewed}
	tests := []struct {
		name     string
		in       []extractbench.FieldScore
		names    []string
		unparsed bool
	}{
		{"one wrong", declaredScores("<b>"), []string{"<b>"}, false},
		{"two wrong", declaredScores("select", "a|b"), []string{"select", "a|b"}, false},
		{"no parse", declaredScores("*"), nil, true},
		{"no parse, one skipped", append(declaredScores("*"), skipped), nil, true},
		{"one field, no parse", declaredScores("*")[:1], []string{"select"}, false},
		{"all right, one skipped", append(declaredScores(), skipped), nil, false},
	}
	for _, tt := range tests {
		misses, unparsed, _ := fieldsBehind(tt.in)
		var names []string
		for _, m := range misses {
			names = append(names, m.Field)
		}
		if !reflect.DeepEqual(names, tt.names) || unparsed != tt.unparsed {
			t.Errorf("%s: got %v unparsed %t, want %v %t", tt.name, names, unparsed, tt.names, tt.unparsed)
		}
	}
}
