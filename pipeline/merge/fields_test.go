package merge

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
	"github.com/extractbench/extractbench/results"
)

// variedScore is document i's score, cycling through each way a default
// field scores (TP, FP+FN, FN, FP, TN, unscored with a value or null
// expected), with its field scores as the scorer makes them.
func variedScore(i int) extractbench.Score {
	str := func(s string) *string { return &s }
	exp := corpus.Expected{Date: str("2025-01-02"), Amount: str("1234.50"), Category: str("rent")}
	s := extractbench.Score{StrictParseOK: true, LenientParseOK: true, SchemaOK: true,
		Date: extractbench.TP, Amount: extractbench.TP, Category: extractbench.TP, Accepted: true}
	switch i % 6 {
	case 1:
		s.Date, s.Accepted, s.Failure = extractbench.FPFN, false, extractbench.Quality
	case 2:
		s.Amount, s.Accepted, s.Failure = extractbench.FN, false, extractbench.Quality
	case 3:
		exp.Category = nil
		s.Category, s.Accepted, s.Failure = extractbench.FP, false, extractbench.Quality
	case 4:
		exp.Category = nil
		s.Category = extractbench.TN
	case 5:
		exp.Category = nil
		s = extractbench.Score{Failure: extractbench.Format, FailureDetail: "no JSON object"}
	}
	s.Expected = exp
	for _, f := range []struct {
		name string
		res  extractbench.FieldResult
		exp  *string
	}{{"date", s.Date, exp.Date}, {"amount", s.Amount, exp.Amount}, {"category", s.Category, exp.Category}} {
		fs := extractbench.FieldScore{Name: f.name, Expected: "null", Result: f.res}
		if f.exp != nil {
			fs.Expected = fmt.Sprintf("%q", *f.exp)
		}
		switch f.res {
		case extractbench.TP:
			fs.TP, fs.Got = 1, fs.Expected
		case extractbench.FPFN:
			fs.FP, fs.FN, fs.Got, fs.Reason = 1, 1, `"1999-01-01"`, "another day"
		case extractbench.FN:
			fs.FN, fs.Got, fs.Reason = 1, "null", "no value"
		case extractbench.FP:
			fs.FP, fs.Got, fs.Reason = 1, `"travel"`, "a value where none was expected"
		case extractbench.TN:
			fs.Got = "null"
		case extractbench.Unscored:
			fs.Reason = "not scored"
			if f.exp != nil {
				fs.FN = 1
			}
		}
		s.Fields = append(s.Fields, fs)
	}
	return s
}

// TestMerge_PassFields: a merge copies each request's field rows with it
// and computes each merged pass's per-field figures with the run's tally:
// they equal the figures of the documents' scores tallied at once (what
// one run of every document computes), and for the default fields the
// passes row's date_f1, amount_f1 and category_f1. Before, a merge had no
// field rows to copy and no per-field figures.
func TestMerge_PassFields(t *testing.T) {
	const docs = 60
	root := t.TempDir()
	dirs := synthShards{docs: docs, count: 2, levels: []int{1, 2}, score: variedScore}.write(t, root)
	out := filepath.Join(root, "merged")
	sum, err := Merge(pipelinetest.Context(t), Options{OutDir: out, Dirs: dirs})
	if err != nil {
		t.Fatal(err)
	}
	var recs []extractbench.Record
	for i := range docs {
		recs = append(recs, extractbench.Record{DocID: fmt.Sprintf("doc-%07d", i), Score: variedScore(i)})
	}
	want := eval.Aggregate(recs).PerField
	if len(want) != 3 || want[0].FP == 0 || want[1].FN == 0 || want[2].TN == 0 {
		t.Fatalf("the documents' figures %+v do not vary", want)
	}

	rd, err := results.OpenReadOnly(pipelinetest.Context(t), out)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	passes, err := rd.Passes(pipelinetest.Context(t), sum.RunID)
	if err != nil || len(passes) != 2 {
		t.Fatalf("merged passes: %d, %v; want 2", len(passes), err)
	}
	for _, p := range passes {
		if !reflect.DeepEqual(p.Fields, want) {
			t.Errorf("merged pass level %d: fields\n%+v\nwant\n%+v", p.Level, p.Fields, want)
			continue
		}
		for i, f1 := range []*float64{p.DateF1, p.AmountF1, p.CategoryF1} {
			if f1 == nil || *f1 != p.Fields[i].F1 {
				t.Errorf("merged pass level %d: %s F1 %v in passes, %v in pass_fields", p.Level, p.Fields[i].Name, f1, p.Fields[i].F1)
			}
		}
		rows, err := rd.Requests(pipelinetest.Context(t), sum.RunID, results.RequestFilter{Variant: p.Variant, Mode: p.Mode, Level: p.Level, Repetition: p.Repetition})
		if err != nil || len(rows) != docs {
			t.Fatalf("merged pass level %d: %d rows, %v", p.Level, len(rows), err)
		}
		for _, r := range rows {
			var i int
			fmt.Sscanf(r.DocID, "doc-%d", &i)
			if w := variedScore(i).Fields; !reflect.DeepEqual(r.Score.Fields, w) {
				t.Errorf("merged %s level %d: fields %+v, want the shard's %+v", r.DocID, p.Level, r.Score.Fields, w)
			}
		}
	}
}
