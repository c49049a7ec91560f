package eval

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
)

// scored builds a record the way the pipeline does: Evaluate, then wrap.
func scored(id, output string, exp corpus.Expected, tr extractbench.Transport) extractbench.Record {
	return extractbench.Record{DocID: id, Score: Evaluate(output, exp, tr, Options{}), Response: extractbench.Response{Output: output, Transport: tr}}
}

func TestAggregate(t *testing.T) {
	const good = `{"date":"2025-03-14","amount":1234.56,"category":"software"}`
	recs := []extractbench.Record{
		scored("a", good, invoice, extractbench.Transport{}),
		scored("b", `{"date":"2025-03-14","amount":1234.56,"category":"travel"}`, invoice, extractbench.Transport{}),
		scored("c", `not json`, invoice, extractbench.Transport{}),
		scored("d", ``, creditNote, extractbench.Transport{HTTPStatus: 503, Kind: extractbench.TransportHTTPStatus, ErrorBody: "CUDA out of memory"}),
		scored("a", good, invoice, extractbench.Transport{}),
		scored("e", `{"date":"2024-02-29","amount":0.001,"category":null}`, zeroAmount, extractbench.Transport{}),
	}
	got := Aggregate(recs)

	if got.Docs != 6 || got.UniqueDocs != 5 || got.Accepted != 3 || got.Recovered != 2 {
		t.Errorf("got docs %d unique %d accepted %d recovered %d, want 6 5 3 2", got.Docs, got.UniqueDocs, got.Accepted, got.Recovered)
	}
	if got.AcceptedRate != 0.5 {
		t.Errorf("got accepted rate %v, want 0.5", got.AcceptedRate)
	}
	if !reflect.DeepEqual(got.DuplicateIDs, []string{"a"}) {
		t.Errorf("got duplicates %v, want [a]", got.DuplicateIDs)
	}
	wantFailures := map[extractbench.Failure]int{} // every class present, these three counted
	for _, f := range extractbench.Failures {
		wantFailures[f] = 0
	}
	wantFailures[extractbench.Memory], wantFailures[extractbench.Format], wantFailures[extractbench.Quality] = 1, 1, 1
	if !reflect.DeepEqual(got.Failures, wantFailures) {
		t.Errorf("got failures %v, want %v", got.Failures, wantFailures)
	}
	if got.StrictOK != 4 || got.LenientOK != 4 {
		t.Errorf("got strict/lenient ok %d/%d, want 4/4", got.StrictOK, got.LenientOK)
	}

	// Hand-counted: see the records above. Date of d expects null, so its
	// unscored date is not a miss.
	wantDate := FieldStats{TP: 4, Unscored: 2, Missed: 1, Precision: 1, Recall: 0.8, F1: 8.0 / 9}
	wantAmount := FieldStats{TP: 4, Unscored: 2, Missed: 2, Precision: 1, Recall: 4.0 / 6, F1: 0.8}
	wantCategory := FieldStats{TP: 2, FP: 1, FN: 1, TN: 1, Unscored: 2, Missed: 2, Precision: 2.0 / 3, Recall: 0.4, F1: 0.5}
	for _, c := range []struct {
		name      string
		got, want FieldStats
	}{{"date", got.Date, wantDate}, {"amount", got.Amount, wantAmount}, {"category", got.Category, wantCategory}} {
		if !statsEqual(c.got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, c.got, c.want)
		}
		if f, ok := got.Field(c.name); !ok || !statsEqual(f, c.want) {
			t.Errorf("Field(%q): got %+v %v", c.name, f, ok)
		}
	}

	wantConfusion := map[string]map[string]int{
		"software":    {"software": 2, "travel": 1, ConfusionInvalid: 1},
		"telecom":     {ConfusionInvalid: 1},
		ConfusionNull: {ConfusionNull: 1},
	}
	if !reflect.DeepEqual(got.Confusion, wantConfusion) {
		t.Errorf("got confusion %v, want %v", got.Confusion, wantConfusion)
	}
}

// TestPassTally_Fill checks that a pass row gets every figure of its tally,
// one count per class of Failures.
func TestPassTally_Fill(t *testing.T) {
	recs := []extractbench.Record{
		scored("a", `{"date":"2025-03-14","amount":1234.56,"category":"software"}`, invoice, extractbench.Transport{}),
		scored("b", `not json`, invoice, extractbench.Transport{}),
		scored("c", ``, invoice, extractbench.Transport{HTTPStatus: 503, Kind: extractbench.TransportHTTPStatus, ErrorBody: "CUDA out of memory"}),
	}
	tally := Aggregate(recs)
	p := extractbench.Pass{CategoryConfusion: "stale"}
	tally.Fill(&p)
	if p.Accepted != 1 || p.UniqueIDs != 1 || p.Failures.Total() != 2 {
		t.Errorf("accepted %d unique %d failures %d, want 1 1 2", p.Accepted, p.UniqueIDs, p.Failures.Total())
	}
	for _, f := range extractbench.Failures {
		if got, want := p.Failures.Of(f), int64(tally.Failures[f]); got != want {
			t.Errorf("failures_%s = %d, want %d", f, got, want)
		}
	}
	if p.DateF1 == nil || *p.DateF1 != tally.Date.F1 || p.CategoryF1 == nil || *p.CategoryF1 != tally.Category.F1 || p.AmountF1 == nil {
		t.Errorf("F1 %v %v %v, want the tally's", p.DateF1, p.AmountF1, p.CategoryF1)
	}
	var confusion map[string]map[string]int
	if err := json.Unmarshal([]byte(p.CategoryConfusion), &confusion); err != nil || !reflect.DeepEqual(confusion, tally.Confusion) {
		t.Errorf("confusion %s (%v), want %v", p.CategoryConfusion, err, tally.Confusion)
	}
}

func TestFieldStats_ZeroDenominators(t *testing.T) {
	tests := []struct {
		name     string
		s        FieldStats
		p, r, f1 float64
	}{
		{"empty", FieldStats{}, 1, 1, 1},
		{"only TN", FieldStats{TN: 5}, 1, 1, 1},
		{"only FP", FieldStats{FP: 2, TN: 1}, 0, 0, 0},
		{"only FN", FieldStats{FN: 2}, 0, 0, 0},
		{"only misses", FieldStats{Unscored: 3, Missed: 3}, 0, 0, 0},
		{"unscored nulls", FieldStats{Unscored: 3, TN: 2}, 1, 1, 1},
		{"mixed", FieldStats{TP: 3, FP: 1, FN: 2}, 0.75, 0.6, 6.0 / 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.s
			s.finish()
			if !near(s.Precision, tt.p) || !near(s.Recall, tt.r) || !near(s.F1, tt.f1) {
				t.Errorf("got P %v R %v F1 %v, want %v %v %v", s.Precision, s.Recall, s.F1, tt.p, tt.r, tt.f1)
			}
		})
	}
}

func TestAggregate_Empty(t *testing.T) {
	got := Aggregate(nil)
	if got.Docs != 0 || got.AcceptedRate != 0 || got.DuplicateIDs != nil || len(got.Failures) != len(extractbench.Failures) {
		t.Errorf("got %+v, want an empty summary with every failure class at zero", got)
	}
}

func statsEqual(a, b FieldStats) bool {
	return a.TP == b.TP && a.FP == b.FP && a.FN == b.FN && a.TN == b.TN &&
		a.Unscored == b.Unscored && a.Missed == b.Missed &&
		near(a.Precision, b.Precision) && near(a.Recall, b.Recall) && near(a.F1, b.F1)
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
