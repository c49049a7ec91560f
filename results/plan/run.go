package plan

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/sizing"
)

// PlanOptions say what to plan a run for.
type PlanOptions struct {
	CorpusDocs int   // N, the corpus to plan for
	Days       []int // rental lengths; nil = DefaultRentalDays
	// RetryShare, when set, assumes that share of the documents sent
	// again, each once (plan -retry-share); nil assumes none: the run
	// measured no retry of a document.
	RetryShare *float64
}

// PlanRun plans each variant of a run at its recommended level, assuming no
// retry (PlanRunWith).
func PlanRun(run *results.RunData, corpusDocs int, days []int) ([]sizing.PlanResult, error) {
	return PlanRunWith(run, PlanOptions{CorpusDocs: corpusDocs, Days: days})
}

// PlanRunWith plans each variant of a run at its recommended level, as
// eval's aggregator judged it: the level's complete passes give the rate,
// the events the engine load and warm-up, the time between a variant's
// passes the evaluation overhead (a share of pass time), and the rest of
// the run's wall time its fixed costs, paid once (RunOverhead). A variant
// with no usable level is returned with its Recommendation and no figures.
func PlanRunWith(run *results.RunData, o PlanOptions) ([]sizing.PlanResult, error) {
	corpusDocs, days := o.CorpusDocs, o.Days
	overhead, fixed := RunOverhead(run)
	var out []sizing.PlanResult
	for _, s := range run.Series() {
		rec := s.Recommendation
		if !rec.Usable() {
			out = append(out, sizing.PlanResult{PlanInputs: sizing.PlanInputs{Variant: rec.Variant, Mode: rec.Mode, CorpusDocs: corpusDocs},
				Recommendation: &rec, Simulated: run.Simulated()})
			continue
		}
		level := rec.Recommended
		if !rec.InteractiveAsked() && rec.Offline.Level > 0 {
			level = rec.Offline.Level // the protocol asked for the offline objective only
		}
		in := sizing.PlanInputs{Variant: rec.Variant, Mode: rec.Mode, Level: level, OverheadShare: overhead, FixedNS: fixed,
			CorpusDocs: corpusDocs, RentalDays: days}
		if o.RetryShare != nil {
			in.RetryShare, in.RetryAssumed = *o.RetryShare, true
		}
		// The level's passes as eval's aggregator kept them: client-bound
		// ones it left out are left out here too.
		leftOut := false
		if l := s.Level(level); l != nil {
			leftOut = l.ClientBoundLeftOut > 0
		}
		var passes []*extractbench.Pass
		for i, p := range run.Passes {
			if leftOut && p.ClientBound != nil && *p.ClientBound {
				continue
			}
			if p.Variant == rec.Variant && p.Mode == rec.Mode && p.Level == level && p.Complete() {
				in.Docs += int(p.Docs)
				in.Accepted += int(p.Accepted)
				in.DurationNS += p.DurationNS
				in.OutputTokens += p.OutputTokens
				passes = append(passes, &run.Passes[i])
			}
		}
		if lr := levelRatesOf(passes); lr.DocsPerHour > 0 {
			in.InPasses = &lr
		}
		in.LoadNS = run.LastEventNS(results.EventEngineLoad, rec.Variant)
		in.WarmupNS = run.LastEventNS(results.EventWarmup, rec.Variant)
		r, err := sizing.Plan(in)
		if err != nil {
			return nil, fmt.Errorf("plan run %s: %w", run.Run.RunID, err)
		}
		r.Recommendation, r.Simulated = &rec, run.Simulated()
		r.GPU = run.Manifest.Variant(rec.Variant).GPU.Name
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("plan run %s in %s: %w: the run has no complete pass", run.Run.RunID, run.Dir, sizing.ErrNoUsableLevel)
	}
	return out, nil
}

// RunOverhead splits the run's time outside its passes, engine loads and
// warm-ups in two. The time between one variant's consecutive passes
// (reading a pass back and writing its row, the next one's set-up) grows
// with the documents a pass holds: it is returned as share, per unit of
// pass time. The rest of the wall time (setting the run up, stopping an
// engine, going from one variant to the next, the run's end) is paid once
// whatever the corpus: fixedNS. Both are 0 when the run has not ended or
// was interrupted or resumed (its wall time then holds the pause, not work).
func RunOverhead(d *results.RunData) (share float64, fixedNS int64) {
	if d.Run.EndedAt <= d.Run.StartedAt || d.Run.StartedAt == 0 {
		return 0, 0
	}
	var prep int64
	for _, e := range d.Events {
		switch e.Kind {
		case results.EventInterrupted, results.EventResumed:
			return 0, 0
		case results.EventEngineLoad, results.EventWarmup:
			prep += e.ValueNS
		}
	}
	var passes, between int64
	spans := map[string][][2]int64{} // per variant, each pass's [start, end] on the run clock
	for _, p := range d.Passes {
		passes += p.DurationNS
		if p.StartedNS != nil && p.EndedNS != nil {
			spans[p.Variant] = append(spans[p.Variant], [2]int64{*p.StartedNS, *p.EndedNS})
		}
	}
	for _, s := range spans {
		slices.SortFunc(s, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
		for i := 1; i < len(s); i++ {
			if gap := s[i][0] - s[i-1][1]; gap > 0 {
				between += gap
			}
		}
	}
	if passes == 0 {
		return 0, 0
	}
	wall := (d.Run.EndedAt - d.Run.StartedAt) * int64(time.Millisecond)
	rest := wall - passes - prep
	if rest <= 0 {
		return 0, 0
	}
	between = min(between, rest)
	return float64(between) / float64(passes), rest - between
}

// levelRatesOf is a level's rates in passes by eval's level rule (each
// pass's figure, then the median over its complete repetitions), printed
// with the digits their ranges support, as stdout and the report print them.
func levelRatesOf(passes []*extractbench.Pass) sizing.LevelRates {
	docs := eval.MedianOverRepetitions(passes, eval.PassDocsPerHour)
	acc := eval.MedianOverRepetitions(passes, eval.PassAcceptedPerHour)
	tok := eval.MedianOverRepetitions(passes, func(p *extractbench.Pass) *float64 { return p.OutputTokensPerS })
	lr := sizing.LevelRates{DocsPerHour: docs.Median, AcceptedPerHour: acc.Median, OutputTokensPerS: tok.Median}
	for i, s := range []eval.Spread{docs, acc, tok} {
		if s.N > 0 {
			lr.Printed[i] = s.Rate()
		}
	}
	return lr
}
