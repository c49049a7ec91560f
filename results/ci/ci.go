// Package ci writes a run's verdicts in the formats CI systems show
// natively: JUnit XML (GitLab, Jenkins and GitHub's test reporters read it)
// and a Markdown summary for $GITHUB_STEP_SUMMARY. It reads a results
// directory through results and compare, and never writes the store.
package ci

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/compare"
)

// DefaultMaxDocs is how many failing documents one level lists; the rest
// are counted, and results.db holds them all.
const DefaultMaxDocs = 50

// Options say what Load reads besides the run.
type Options struct {
	Margin  float64 // the paired verdict's δ; 0 = compare.DefaultMargin
	MaxDocs int     // failing documents listed per level; 0 = DefaultMaxDocs
}

// Run is a run as the CI formats show it: one Variant per variant of the
// protocol, in its order.
type Run struct {
	Dir         string
	RunID       string
	Protocol    string
	Fingerprint string
	Status      string // the runs row's: complete, interrupted, failed
	Simulated   bool
	Started     time.Time
	Variants    []Variant
	// Fields are the protocol's declared fields in its order, nil for the
	// default fields (date, amount, category), whose figures the CI
	// formats leave to the report as they always did.
	Fields []string
}

// Variant is one variant's verdict, its levels, and its paired verdict
// against the baseline variant (nil for the baseline variant itself).
type Variant struct {
	results.Outcome
	Levels []Level
	Paired *Paired
}

// Level is one level judged: its figures and verdict as eval made them,
// the time its passes took, and the documents that failed there.
type Level struct {
	eval.Level
	Name     string // "concurrency 1 (baseline)", "rate 4/s", "context long"
	Seconds  float64
	Failed   []Doc // at most Options.MaxDocs, sorted by document and repetition
	NFailed  int   // every failed request of the level's passes
	Baseline bool  // the level the variant's verdict judges
	// Fields are the declared fields' figures summed over the level's
	// complete passes (eval.SumPassFields); nil for the default fields.
	Fields []extractbench.PassField
}

// Doc is one failed document of a level.
type Doc struct {
	ID         string
	Repetition int
	Failure    extractbench.Failure
	Detail     string
	// Fields are the declared fields the answer got wrong, with why
	// (compare.WrongFields); nil for the default fields.
	Fields []compare.FieldMiss
}

// Paired is a variant's paired equivalence against the baseline variant
// (compare's logic: the same documents, TOST at Margin), or why none was
// computed (Skipped).
type Paired struct {
	Against    string
	Mode       extractbench.Mode
	Level      int
	Repetition int
	Result     *compare.Result
	Skipped    string
}

// BaselineVariant is the variant the others are paired against: the
// protocol's first, the reference (bf16 before its quantisations).
func (r *Run) BaselineVariant() string {
	if len(r.Variants) == 0 {
		return ""
	}
	return r.Variants[0].Variant
}

// Load reads the latest run in dir: its outcomes, every level's failed
// documents, and each variant's paired verdict against the first.
func Load(ctx context.Context, dir string, opt Options) (*Run, error) {
	opt.MaxDocs = cmp.Or(opt.MaxDocs, DefaultMaxDocs)
	opt.Margin = cmp.Or(opt.Margin, compare.DefaultMargin)
	rd, err := results.OpenReadOnly(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	data, err := rd.Load(ctx)
	if err != nil {
		return nil, err
	}
	r := &Run{Dir: dir, RunID: data.Run.RunID, Protocol: data.Run.ProtocolName, Fingerprint: data.Run.Fingerprint,
		Status: data.Run.Status, Simulated: data.Simulated(), Started: time.UnixMilli(data.Run.StartedAt).UTC(),
		Fields: declaredFields(data.Passes)}
	for _, o := range data.Outcomes() {
		v := Variant{Outcome: o}
		for _, s := range o.Series {
			base := s.Baseline()
			for _, l := range s.Levels {
				lv := Level{Level: l, Name: levelName(l), Seconds: passSeconds(data.Passes, l), Baseline: base != nil && base.Level == l.Level && base.Phase == l.Phase}
				if r.Fields != nil {
					lv.Fields = levelFields(data.Passes, l)
				}
				if err := failedDocs(ctx, rd, r.RunID, &lv, opt.MaxDocs, r.Fields != nil); err != nil {
					return nil, err
				}
				v.Levels = append(v.Levels, lv)
			}
		}
		r.Variants = append(r.Variants, v)
	}
	if len(r.Variants) > 1 {
		pr := compare.NewPairer(ctx, dir, r.Variants[0].Variant)
		defer pr.Close()
		for i := 1; i < len(r.Variants); i++ {
			r.Variants[i].Paired = paired(ctx, pr, r.Variants[0], r.Variants[i], opt.Margin)
		}
	}
	return r, nil
}

// levelName is the level as the pages name it, with its mode and phase.
func levelName(l eval.Level) string {
	name := eval.LevelLabel(l.Mode, l.Level)
	if l.Phase != extractbench.PhaseSweep {
		name += " (" + l.Phase + ")"
	}
	return name
}

// passSeconds is the time the level's complete passes took, summed.
func passSeconds(passes []extractbench.Pass, l eval.Level) float64 {
	var ns int64
	for _, p := range passes {
		if p.Variant == l.Variant && p.Mode == l.Mode && p.Level == l.Level && p.Phase == l.Phase && p.Complete() {
			ns += p.DurationNS
		}
	}
	return float64(ns) / 1e9
}

// declaredFields is the fields of the run's complete passes in the
// protocol's order when they are declared ones: names other than the
// default fields', or the default names with the default columns left
// NULL (eval.PassTally.Fill); nil for the default fields.
func declaredFields(passes []extractbench.Pass) []string {
	for _, p := range passes {
		if !p.Complete() || len(p.Fields) == 0 {
			continue
		}
		names := make([]string, len(p.Fields))
		for i, f := range p.Fields {
			names[i] = f.Name
		}
		if slices.Equal(names, extractbench.DefaultFieldNames) && p.DateF1 != nil {
			return nil
		}
		return names
	}
	return nil
}

// levelFields sums the field figures of the level's complete passes.
func levelFields(passes []extractbench.Pass, l eval.Level) []extractbench.PassField {
	var fields [][]extractbench.PassField
	for _, p := range passes {
		if p.Variant == l.Variant && p.Mode == l.Mode && p.Level == l.Level && p.Phase == l.Phase && p.Complete() {
			fields = append(fields, p.Fields)
		}
	}
	return eval.SumPassFields(fields...)
}

// failedDocs reads the level's failed requests: interrupted requests and
// the client's own faults are no document's failure (MEASUREMENT.md
// section 2) and are left out. declared: each keeps its wrong fields.
func failedDocs(ctx context.Context, rd *results.Reader, runID string, l *Level, limit int, declared bool) error {
	recs, err := rd.Requests(ctx, runID, results.RequestFilter{Variant: l.Variant, Mode: l.Mode, Level: l.Level.Level})
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if rec.Accepted || !rec.Kind.Measured() {
			continue
		}
		l.NFailed++
		d := Doc{ID: rec.DocID, Repetition: rec.Repetition, Failure: rec.Failure, Detail: rec.FailureDetail}
		if declared {
			d.Fields = compare.WrongFields(rec.Score.Fields)
		}
		l.Failed = append(l.Failed, d)
	}
	slices.SortFunc(l.Failed, func(a, b Doc) int {
		return cmp.Or(strings.Compare(a.ID, b.ID), a.Repetition-b.Repetition)
	})
	if len(l.Failed) > limit {
		l.Failed = l.Failed[:limit]
	}
	return nil
}

// paired compares v with the baseline variant on the documents of the
// baseline variant's baseline level, repetition 1, as `extractbench compare
// DIR:base DIR:v -level N` does.
func paired(ctx context.Context, pr *compare.Pairer, base, v Variant, margin float64) *Paired {
	p := &Paired{Against: base.Variant, Repetition: 1}
	if len(base.Series) == 0 || base.Series[0].Baseline() == nil {
		p.Skipped = fmt.Sprintf("the baseline variant %s has no complete pass", base.Variant)
		return p
	}
	bl := base.Series[0].Baseline()
	p.Mode, p.Level = bl.Mode, bl.Level
	res, err := pr.Compare(ctx, v.Variant, compare.Options{Mode: bl.Mode, Level: eval.LevelName(bl.Mode, bl.Level), Repetition: 1, Margin: margin})
	if err != nil {
		p.Skipped = err.Error()
		return p
	}
	p.Result = &res
	return p
}

// Verdict is the paired verdict's word: EQUIVALENT or NOT EQUIVALENT.
func (p *Paired) Verdict() string {
	switch {
	case p.Result == nil:
		return "not compared"
	case p.Result.Equivalent:
		return "EQUIVALENT"
	}
	return "NOT EQUIVALENT"
}

// Sentence is the paired verdict in one line: the verdict, the margin, the
// interval of Δ and the flips.
func (p *Paired) Sentence() string {
	if p.Result == nil {
		return "not compared: " + p.Skipped
	}
	eq := p.Result.Equivalence
	return fmt.Sprintf("%s to %s within ±%.1f points: Δ %+.1f points, %.0f%% interval [%+.1f, %+.1f], %d of %d documents flipped",
		p.Verdict(), p.Against, 100*p.Result.Margin, 100*eq.Delta, 100*eq.Level, 100*eq.Lo, 100*eq.Hi, len(eq.Flips), eq.N)
}

// Name is the paired case's name: against which variant, where.
func (p *Paired) Name() string {
	if p.Mode == "" {
		return "paired vs " + p.Against
	}
	return fmt.Sprintf("paired vs %s (%s, repetition %d)", p.Against, eval.LevelLabel(p.Mode, p.Level), p.Repetition)
}
