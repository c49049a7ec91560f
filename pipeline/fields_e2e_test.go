package pipeline_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results/resultstest"
)

// TestRun_FieldRows runs the default protocol on the built-in engine with
// its faults and checks the per-field storage end to end: every measured
// request has one row per default field, agreeing with its default result
// columns, and every pass's per-field F1 equals its date_f1, amount_f1 and
// category_f1. It skips, saying so, while the scorer leaves
// Score.Fields empty (the storage is tested on hand-made scores in
// results and pipeline/merge).
func TestRun_FieldRows(t *testing.T) {
	dir := t.TempDir()
	proto := writeProtocol(t, dir, writeSmallCorpus(t, dir, 30), "{mode: concurrency, levels: [1, 4], repetitions: 1, warmup: 0, on_memory_failure: record}",
		"{time_scale: 0, faults: {truncate: 0.1, garbage: 0.1, wrong_value: 0.2}}")
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	reqs := resultstest.Requests(t, out)
	if resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Score.Fields != nil }) == 0 {
		t.Skip("the scorer does not fill Score.Fields yet: no request_fields rows to check")
	}
	for _, r := range reqs {
		results := []extractbench.FieldResult{r.Score.Date, r.Score.Amount, r.Score.Category}
		if len(r.Score.Fields) != len(extractbench.DefaultFieldNames) {
			t.Errorf("%s level %d: %d field rows, want one per default field", r.DocID, r.Level, len(r.Score.Fields))
			continue
		}
		for i, f := range r.Score.Fields {
			if f.Name != extractbench.DefaultFieldNames[i] || f.Result != results[i] {
				t.Errorf("%s level %d: field row %d is %s %q, the requests row says %s %q", r.DocID, r.Level, i, f.Name, f.Result, extractbench.DefaultFieldNames[i], results[i])
			}
		}
	}
	for _, p := range resultstest.Passes(t, out) {
		if len(p.Fields) != 3 {
			t.Errorf("pass level %d: %d per-field figures, want 3", p.Level, len(p.Fields))
			continue
		}
		for i, f1 := range []*float64{p.DateF1, p.AmountF1, p.CategoryF1} {
			if f1 == nil || *f1 != p.Fields[i].F1 {
				t.Errorf("pass level %d: %s F1 %v in passes, %v in pass_fields", p.Level, p.Fields[i].Name, f1, p.Fields[i].F1)
			}
		}
	}
}
