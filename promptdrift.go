package extractbench

import (
	"fmt"
	"math"
	"strings"
)

// PromptDriftSlack is the difference in prompt tokens, in absolute value,
// that is not drift. The expected count is exact (the model's own
// tokenizer.json over its chat template's rendering, or the same model's
// count on another engine), so the template's overhead has no uncertainty
// to allow for: any difference is drift. An engine that adds one BOS the
// template already writes shows as +1 token on every document, which is a
// difference in what the model sees.
const PromptDriftSlack = 0

// The references a pass's expected prompt counts come from
// (passes.prompt_drift_reference): the model's tokenizer, or the baseline
// variant of the same model, named after the prefix.
const (
	DriftAgainstTokenizer = "tokenizer"
	DriftAgainstVariant   = "variant:"
)

// PromptDrift is how a pass's engine-reported prompt_tokens compare with
// their expected counts. Compared counts the requests with both (usage
// reported and an expected count), Docs those that differ by more than
// PromptDriftSlack; Median and Max are of the drifted requests' relative
// difference, (prompt_tokens − expected) / expected: +0.32 is 32% more
// tokens than expected, Max the largest in magnitude with its sign. All
// nil when nothing was compared; Median and Max nil when nothing drifted.
type PromptDrift struct {
	Reference string   `json:"reference,omitempty"` // DriftAgainstTokenizer, DriftAgainstVariant + name, or "" (NULL)
	Compared  *int64   `json:"compared"`
	Docs      *int64   `json:"docs"`
	Median    *float64 `json:"median"`
	Max       *float64 `json:"max"`
}

// Drifted reports whether the engine tokenised at least one document
// otherwise than expected.
func (d *PromptDrift) Drifted() bool { return d != nil && d.Docs != nil && *d.Docs > 0 }

// Sentence says the drift for people, before any accuracy figure: "this
// engine tokenises 300 of 300 documents differently (+31.6% tokens, median;
// up to +89.0%) than the model's tokenizer"; "" when nothing drifted (or d
// is nil).
func (d *PromptDrift) Sentence() string {
	if !d.Drifted() {
		return ""
	}
	against := "the model's tokenizer (tokenizer.json and its chat template)"
	if name, ok := strings.CutPrefix(d.Reference, DriftAgainstVariant); ok {
		against = "variant " + name + " of the same model"
	}
	s := fmt.Sprintf("this engine tokenises %d of %d documents differently", *d.Docs, *d.Compared)
	if d.Median != nil && d.Max != nil {
		s += fmt.Sprintf(" (%s tokens, median; up to %s)", DriftPercent(*d.Median), DriftPercent(*d.Max))
	}
	return s + " than " + against
}

// DriftPercent writes a relative difference as a signed percentage, with
// the digits a small one needs: +31.6%, +0.02% (one token in 5,000).
func DriftPercent(v float64) string {
	if a := math.Abs(v * 100); a < 1 && a > 0 {
		return fmt.Sprintf("%+.2g%%", v*100)
	}
	return fmt.Sprintf("%+.1f%%", v*100)
}
