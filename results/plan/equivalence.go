package plan

import (
	"context"
	"fmt"

	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/compare"
	"github.com/extractbench/extractbench/sizing"
)

// Equivalence is a variant's paired verdict against its run's baseline
// variant (compare.PairedVerdicts, the verdict run, compare and the report
// print), with whether the run's protocol makes it a criterion of the
// selection (acceptance.select_requires_equivalence, default true).
type Equivalence struct {
	compare.Paired
	Required bool `json:"required"`
}

// Fails reports whether the variant is not shown equivalent: NOT
// EQUIVALENT, INCONCLUSIVE or NO VERDICT.
func (e Equivalence) Fails() bool { return !e.Equivalent }

// Short is the verdict in a few words: "NOT EQUIVALENT to bf16".
func (e Equivalence) Short() string {
	to := " to "
	if e.NoVerdict != "" || e.Inconclusive {
		to = " against "
	}
	return e.Word() + to + e.Baseline
}

// Mark is the verdict in one line with what it means for selection.
func (e Equivalence) Mark() string {
	switch {
	case !e.Fails():
		return e.Text()
	case e.Required:
		return e.Text() + "; not a candidate: select ranks only variants shown equivalent to " + e.Baseline +
			" (acceptance.select_requires_equivalence: false ranks it)"
	}
	return e.Text() + "; still a candidate: the protocol does not require equivalence (acceptance.select_requires_equivalence: false)"
}

// Equivalences pairs every variant of run with its baseline variant, once:
// nil for a run of one variant, none for the baseline variant itself.
func Equivalences(ctx context.Context, run *results.RunData) (map[string]*Equivalence, error) {
	ps, err := compare.PairedVerdicts(ctx, run.Dir, run)
	if err != nil {
		return nil, fmt.Errorf("paired verdicts of %s: %w", run.Dir, err)
	}
	req := run.Manifest.Acceptance.SelectNeedsEquivalence()
	out := map[string]*Equivalence{}
	for _, p := range ps {
		out[p.Variant] = &Equivalence{Paired: p, Required: req}
	}
	return out, nil
}

// MarkPlans sets each plan's paired verdict (sizing.PlanResult.Paired), so
// that plan prints it above a plan of a variant that lost quality.
func MarkPlans(ctx context.Context, run *results.RunData, plans []sizing.PlanResult) error {
	eqs, err := Equivalences(ctx, run)
	if err != nil {
		return err
	}
	for i := range plans {
		if e := eqs[plans[i].Variant]; e != nil {
			plans[i].Paired = *e
		}
	}
	return nil
}
