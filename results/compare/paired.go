package compare

import (
	"context"
	"errors"
	"fmt"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
)

// Paired is one variant's paired verdict against the run's baseline
// variant: what `compare DIR:baseline DIR:variant` says, at the baseline
// level (1, or a rate sweep's sync), repetition 1, on the same documents. The report's headline and
// verdict table show it, and with acceptance.require_equivalent the run's
// exit code depends on it.
type Paired struct {
	Variant    string            `json:"variant"`
	Baseline   string            `json:"baseline_variant"`
	Mode       extractbench.Mode `json:"mode,omitempty"`
	Level      int               `json:"level"`
	LevelName  string            `json:"level_name,omitempty"` // eval.LevelName: "sync" for a rate sweep's baseline
	N          int               `json:"n"`
	Flips      int               `json:"flips"`      // documents on which the two disagree
	Lost       int               `json:"flips_lost"` // accepted by the baseline, failed by the variant
	Gained     int               `json:"flips_won"`  // the other way
	Delta      float64           `json:"delta"`      // variant − baseline, accepted share
	Lo         float64           `json:"lo"`         // the 90% interval of Delta
	Hi         float64           `json:"hi"`
	Margin     float64           `json:"margin"`
	Equivalent bool              `json:"equivalent"`
	// Inconclusive: not shown equivalent on too few documents to have
	// shown it at this margin (Result.Inconclusive); NeededN is how many
	// would do (0: more than eval.MaxNeededN). Still not Equivalent for
	// acceptance.require_equivalent.
	Inconclusive bool `json:"inconclusive,omitempty"`
	NeededN      int  `json:"needed_n,omitempty"`
	// NoVerdict says why no pairing was possible (the variant measured no
	// baseline pass, say); the other figures are then zero.
	NoVerdict string `json:"no_verdict,omitempty"`
}

// Word is EQUIVALENT, NOT EQUIVALENT, INCONCLUSIVE or NO VERDICT.
func (p Paired) Word() string {
	switch {
	case p.NoVerdict != "":
		return "NO VERDICT"
	case p.Equivalent:
		return "EQUIVALENT"
	case p.Inconclusive:
		return eval.VerdictInconclusive
	}
	return "NOT EQUIVALENT"
}

// Text is the verdict in one line, as compare prints it:
// "NOT EQUIVALENT to bf16: Δ −2.9 points, 90% interval [−4.7, −1.1], 11 flips (10 lost, 1 won) of 300, margin ±2 points".
func (p Paired) Text() string {
	if p.NoVerdict != "" {
		return fmt.Sprintf("NO VERDICT against %s: %s", p.Baseline, p.NoVerdict)
	}
	t := fmt.Sprintf("%s to %s: Δ %s points, 90%% interval [%s, %s], %d flips (%d lost, %d won) of %d at %s, margin ±%s points",
		p.Word(), p.Baseline, signedPts(p.Delta), signedPts(p.Lo), signedPts(p.Hi), p.Flips, p.Lost, p.Gained, p.N, eval.LevelLabel(p.Mode, p.Level), pts(p.Margin))
	switch {
	case p.Inconclusive && p.NeededN > 0:
		t += fmt.Sprintf(": too few documents to show it (%d would do)", p.NeededN)
	case p.Inconclusive:
		t += ": too few documents to show it"
	}
	return t
}

// BaselineVariant is the variant a run's others are paired with: the one
// its protocol names (acceptance.baseline_variant), else the first.
func BaselineVariant(m *extractbench.Manifest) string {
	if b := m.Acceptance.BaselineVariant; b != "" {
		return b
	}
	if names := m.VariantNames(); len(names) > 0 {
		return names[0]
	}
	return ""
}

// PairedVerdicts pairs every variant of the latest run in dir with its
// baseline variant through Run, at the baseline level (1, or a rate sweep's
// sync) and the margin the protocol wrote (acceptance.equivalence_margin,
// else DefaultMargin).
// It returns nothing for a run of one variant. A variant that cannot be
// paired (no documents at the level) gets a NoVerdict, never an error:
// errors are for a directory that cannot be read.
func PairedVerdicts(ctx context.Context, dir string, run *results.RunData) ([]Paired, error) {
	m := &run.Manifest
	names := m.VariantNames()
	base := BaselineVariant(m)
	if len(names) < 2 || base == "" {
		return nil, nil
	}
	margin := m.Acceptance.EquivalenceMargin
	if margin == 0 {
		margin = DefaultMargin
	}
	pr := NewPairer(ctx, dir, base)
	defer pr.Close()
	var out []Paired
	for _, v := range names {
		if v == base {
			continue
		}
		p := Paired{Variant: v, Baseline: base, Margin: margin}
		r, err := pr.Compare(ctx, v, Options{Margin: margin})
		var refused *results.RefusedError
		switch {
		case errors.As(err, &refused):
			p.NoVerdict = refused.Error()
		case err != nil:
			return nil, fmt.Errorf("pair %s with %s: %w", v, base, err)
		default:
			eq := r.Equivalence
			p.Mode, p.Level, p.LevelName, p.N, p.Lost, p.Gained = r.Mode, r.Level, r.LevelName, eq.N, eq.B, eq.C
			p.Flips, p.Delta, p.Lo, p.Hi, p.Equivalent = eq.B+eq.C, eq.Delta, eq.Lo, eq.Hi, r.Equivalent
			p.Inconclusive, p.NeededN = r.Inconclusive, eq.NeededN
		}
		out = append(out, p)
	}
	return out, nil
}

// Pairer compares the variants of one run with one of them, its side A,
// reading the run once (every row, for the expectations) and each
// variant's passes once: pairing every variant with one is linear in the
// rows, not variants times rows.
type Pairer struct {
	a   *loaded
	err error // why side A could not be read; every Compare returns it
}

// NewPairer reads variant of the latest run in dir as side A. An error is
// kept and returned by each Compare, as Run returns it.
func NewPairer(ctx context.Context, dir, variant string) *Pairer {
	a, err := load(ctx, Side{Dir: dir, Variant: variant})
	if err != nil {
		return &Pairer{err: fmt.Errorf("side A: %w", err)}
	}
	return &Pairer{a: a}
}

// Compare is Run with side A the pairer's and side B variant v of its run;
// opt's sides are not read.
func (pr *Pairer) Compare(ctx context.Context, v string, opt Options) (Result, error) {
	if pr.err != nil {
		return Result{}, pr.err
	}
	opt, err := opt.withDefaults()
	if err != nil {
		return Result{}, err
	}
	b, err := pr.a.as(v)
	if err != nil {
		return Result{}, fmt.Errorf("side B: %w", err)
	}
	defer b.close()
	opt.A, opt.B = pr.a.side, b.side
	return compareSides(ctx, opt, pr.a, b)
}

// Close closes side A's run.
func (pr *Pairer) Close() {
	if pr.a != nil {
		pr.a.close()
	}
}

// PairedOf returns variant's verdict in ps, or nil.
func PairedOf(ps []Paired, variant string) *Paired {
	for i := range ps {
		if ps[i].Variant == variant {
			return &ps[i]
		}
	}
	return nil
}
