package compare

import (
	"fmt"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// Tokenization is how the two sides tokenised the paired documents' prompts,
// said before any accuracy figure: a B that was sent other tokens than A
// (llama.cpp without the model's normalizer: +32%) is not compared on the
// same prompts, whatever its accuracy. A and B are each side's own drift
// against its expected counts (passes.prompt_drift_*: the model's
// tokenizer, or its run's baseline variant); BvsA is B's prompt_tokens
// against A's, document by document. Each is nil when nothing could be
// compared (no usage, no expected count).
type Tokenization struct {
	A    *extractbench.PromptDrift `json:"a,omitempty"`
	B    *extractbench.PromptDrift `json:"b,omitempty"`
	BvsA *extractbench.PromptDrift `json:"b_vs_a,omitempty"`
}

// tokenization compares the paired passes' prompt counts (records sorted by
// document id, as pair reads them).
func tokenization(a, b *loaded, ra, rb []extractbench.Record, mode extractbench.Mode, level, rep int) Tokenization {
	var t Tokenization
	t.A = sideDrift(a, ra, mode, level, rep)
	t.B = sideDrift(b, rb, mode, level, rep)
	byDoc := make(map[string]*extractbench.Record, len(ra))
	for i := range ra {
		if ra[i].UsageReported && eval.PlausibleTokens(ra[i].PromptTokens) {
			byDoc[ra[i].DocID] = &ra[i]
		}
	}
	against := make([]extractbench.Record, 0, len(rb))
	for _, r := range rb {
		ar, ok := byDoc[r.DocID]
		if !ok {
			continue
		}
		n := ar.PromptTokens
		r.ExpectedPromptTokens = &n
		against = append(against, r)
	}
	if d := eval.DriftOf(against, extractbench.DriftAgainstVariant+a.variant); d.Compared != nil {
		t.BvsA = &d
	}
	return t
}

// sideDrift is a side's drift over its compared records, against what its
// pass row says the expected counts are.
func sideDrift(l *loaded, recs []extractbench.Record, mode extractbench.Mode, level, rep int) *extractbench.PromptDrift {
	reference := ""
	for _, p := range l.run.Passes {
		if p.Variant == l.variant && p.Mode == mode && p.Level == level && p.Repetition == rep {
			reference = p.PromptDrift.Reference
		}
	}
	d := eval.DriftOf(recs, reference)
	if d.Compared == nil {
		return nil
	}
	return &d
}

// lines are the text form's sentences, one for each comparison that drifted.
func (t Tokenization) lines(a, b SideInfo) []string {
	var out []string
	if t.BvsA.Drifted() {
		d := t.BvsA
		out = append(out, fmt.Sprintf("B tokenises %d of %d paired documents differently from A (%s tokens, median; up to %s): the two engines were not sent the same prompts",
			*d.Docs, *d.Compared, extractbench.DriftPercent(*d.Median), extractbench.DriftPercent(*d.Max)))
	}
	for _, s := range []struct {
		name string
		info SideInfo
		d    *extractbench.PromptDrift
	}{{"A", a, t.A}, {"B", b, t.B}} {
		if line := s.d.Sentence(); line != "" {
			out = append(out, fmt.Sprintf("%s (%s): %s", s.name, s.info.Variant, line))
		}
	}
	return out
}
