package compare

import (
	"strings"
	"testing"
)

// TestPaired_Word: a pairing that could not have shown equivalence (too few
// documents for the margin) says INCONCLUSIVE, with how many would do, in
// the run's summary and report as compare says it; it is still not
// Equivalent, so acceptance.require_equivalent still fails it.
func TestPaired_Word(t *testing.T) {
	base := Paired{Variant: "q4_0", Baseline: "bf16", Mode: "concurrency", Level: 1, N: 3, Lo: -0.474, Hi: 0.474, Margin: 0.02}
	tests := []struct {
		name string
		p    Paired
		word string
		tail string
	}{
		{"equivalent", Paired{Equivalent: true}, "EQUIVALENT", "margin ±2.0 points"},
		{"a difference shown", Paired{}, "NOT EQUIVALENT", "margin ±2.0 points"},
		{"too few documents", Paired{Inconclusive: true, NeededN: 133}, "INCONCLUSIVE", "too few documents to show it (133 would do)"},
		{"too few, more than the most counted", Paired{Inconclusive: true}, "INCONCLUSIVE", "too few documents to show it"},
		{"no pairing", Paired{NoVerdict: "no baseline pass"}, "NO VERDICT", "no baseline pass"},
	}
	for _, tt := range tests {
		p := base
		p.Equivalent, p.Inconclusive, p.NeededN, p.NoVerdict = tt.p.Equivalent, tt.p.Inconclusive, tt.p.NeededN, tt.p.NoVerdict
		if got := p.Word(); got != tt.word {
			t.Errorf("%s: Word = %q, want %q", tt.name, got, tt.word)
		}
		if got := p.Text(); !strings.HasPrefix(got, tt.word) || !strings.HasSuffix(got, tt.tail) {
			t.Errorf("%s: Text = %q, want %s … %s", tt.name, got, tt.word, tt.tail)
		}
	}
}
