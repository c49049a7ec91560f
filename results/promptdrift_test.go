package results

import (
	"context"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// TestStore_PassPromptDrift: the pass's drift figures, computed in SQLite,
// are eval.DriftOf's over the same rows (odd and even counts of drifted
// rows for the median, a negative drift the largest in magnitude), and the
// baseline variant's counts fill the rows of a variant without a
// tokenizer, a document it has no usage for left NULL.
func TestStore_PassPromptDrift(t *testing.T) {
	ctx := context.Background()
	for name, prompts := range map[string][]int{
		"odd":      {100, 110, 95, 100, 150},  // expected 100: three drift, one of them -5%
		"even":     {100, 132, 189, 120, 101}, // four drift
		"negative": {100, 101, 40, 100, 100},  // -60% is the largest in magnitude
		"none":     {100, 100, 100, 100, 100},
	} {
		t.Run(name, func(t *testing.T) {
			s, _ := MustOpen(t)
			key := testKey
			var recs []extractbench.Record
			for i, n := range prompts {
				r := testRecord(key, i)
				want := 100
				r.PromptTokens, r.UsageReported, r.ExpectedPromptTokens = n, true, &want
				recs = append(recs, r)
			}
			unexpected := testRecord(key, len(prompts)) // no expected count: not compared
			unexpected.UsageReported = true
			recs = append(recs, unexpected)
			for _, r := range recs {
				s.Add(r)
			}
			got, err := s.PassPromptDrift(ctx, key, extractbench.DriftAgainstTokenizer)
			if err != nil {
				t.Fatal(err)
			}
			want := eval.DriftOf(recs, extractbench.DriftAgainstTokenizer)
			if got.Reference != want.Reference || *got.Compared != *want.Compared || *got.Docs != *want.Docs ||
				(got.Median == nil) != (want.Median == nil) || got.Median != nil && (*got.Median != *want.Median || *got.Max != *want.Max) {
				t.Errorf("SQL %+v, eval %+v", show(got), show(want))
			}
			if *got.Compared != int64(len(prompts)) {
				t.Errorf("%d compared, want %d", *got.Compared, len(prompts))
			}
		})
	}

	s, _ := MustOpen(t)
	base, other := testKey, testKey
	base.Variant, other.Variant = "exact", "old"
	for i := range 3 {
		b := testRecord(base, i)
		b.PromptTokens, b.UsageReported = 200+i, i != 2 // the third document: no usage from the baseline
		s.Add(b)
		o := testRecord(other, i)
		o.PromptTokens, o.UsageReported = 260+i, true
		s.Add(o)
	}
	if err := s.FillExpectedPromptTokens(ctx, other, "exact"); err != nil {
		t.Fatal(err)
	}
	recs, err := s.PassRecords(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		switch {
		case i == 2 && r.ExpectedPromptTokens != nil:
			t.Errorf("%s: expected %d, want NULL (the baseline reported no usage)", r.DocID, *r.ExpectedPromptTokens)
		case i < 2 && (r.ExpectedPromptTokens == nil || *r.ExpectedPromptTokens != 200+i):
			t.Errorf("%s: expected %v, want the baseline's %d", r.DocID, r.ExpectedPromptTokens, 200+i)
		}
	}
	d, err := s.PassPromptDrift(ctx, other, extractbench.DriftAgainstVariant+"exact")
	if err != nil {
		t.Fatal(err)
	}
	if *d.Compared != 2 || *d.Docs != 2 || d.Reference != "variant:exact" {
		t.Errorf("drift %+v, want 2 of 2 against variant:exact", show(d))
	}
}

func show(d extractbench.PromptDrift) map[string]any {
	m := map[string]any{"reference": d.Reference}
	for k, p := range map[string]*int64{"compared": d.Compared, "docs": d.Docs} {
		if p != nil {
			m[k] = *p
		}
	}
	for k, p := range map[string]*float64{"median": d.Median, "max": d.Max} {
		if p != nil {
			m[k] = *p
		}
	}
	return m
}
