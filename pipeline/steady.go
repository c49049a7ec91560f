package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
)

// settleLevel runs once a level's planned repetitions are measured. A
// client-bound repetition (the client, not the engine, set the pace: a
// loaded machine) is measured once more as a new repetition, so that one
// unlucky pass does not decide the level: eval's aggregator then leaves the
// client-bound one out of the level's figures when the new one is not
// client-bound (a remeasure_client_bound decision says which). Then the
// level's steady state (eval/steady.go) is recorded as a not_steady
// decision when its passes were not in steady state.
func (rs *runState) settleLevel(ctx context.Context, v *Variant, e *engine, level int, phase string) error {
	bg := context.WithoutCancel(ctx)
	planned := rs.proto.Sweep.Repetitions
	passes, err := rs.levelPasses(bg, v, level)
	if err != nil {
		return err
	}
	decided, err := rs.levelDecisions(bg, v, level)
	if err != nil {
		return err
	}
	extra := planned
	for _, p := range passes {
		if p.Repetition > planned || !p.Complete() || p.ClientBound == nil || !*p.ClientBound {
			continue
		}
		if ctx.Err() != nil {
			return nil // interrupted: -resume measures it
		}
		extra++
		again, err := rs.runPass(ctx, v, e, level, extra, phase, 0)
		if err != nil {
			return err
		}
		if again == nil || !again.Complete() {
			return nil // interrupted: -resume completes it, and decides then
		}
		reason := fmt.Sprintf("repetition %d at level %s was client-bound (client delay p99 %s): measured once more as repetition %d, ",
			p.Repetition, eval.LevelName(p.Mode, level), nsOr(p.ClientDelayP99NS), extra)
		if again.ClientBound != nil && *again.ClientBound {
			reason += "client-bound too: the level's figures keep the planned repetitions, one of them client-bound, and the level is not recommended"
		} else {
			reason += fmt.Sprintf("which was not: repetition %d is left out of the level's figures", p.Repetition)
		}
		if !decided[results.DecisionRemeasureClientBound+" "+reason] {
			// Recorded, not printed: whether a loaded machine made a pass
			// client-bound is no part of what a run says on stderr.
			if err := rs.store.AddDecision(bg, results.Decision{RunID: rs.runID, Variant: v.Name, AtMS: time.Now().UnixMilli(),
				Kind: results.DecisionRemeasureClientBound, FromLevel: level, ToLevel: level, Reason: reason}); err != nil {
				rs.logf("warning: record decision: %v", err)
			}
		}
	}
	if passes, err = rs.levelPasses(bg, v, level); err != nil {
		return err
	}
	acc := rs.proto.Acceptance
	for _, s := range eval.AggregateLevels(passes, acc, eval.Plan{Repetitions: planned}) {
		l := s.Level(level)
		if l == nil || l.NotSteady == "" || decided[results.DecisionNotSteady] {
			continue
		}
		what := "not recommended (acceptance.steady_state: judge)"
		if !acc.JudgesSteadyState() {
			what = "recorded, not judged (acceptance.steady_state: record)"
		}
		msg := fmt.Sprintf("NOT STEADY at level %s: %s; %s", eval.LevelName(s.Mode, level), l.NotSteady, what)
		rs.logf("%s: %s", v.Name, msg)
		rs.decision(bg, v.Name, results.DecisionNotSteady, level, 0, msg)
	}
	return nil
}

// levelPasses are the variant's passes at level, in the sweep's mode.
func (rs *runState) levelPasses(ctx context.Context, v *Variant, level int) ([]results.Pass, error) {
	all, err := rs.store.Passes(ctx, rs.runID)
	if err != nil {
		return nil, fmt.Errorf("read the passes of level %d: %w", level, err)
	}
	var out []results.Pass
	mode := rs.passKey(v, level, 1).Mode
	for _, p := range all {
		if p.Variant == v.Name && p.Mode == mode && p.Level == level && p.Phase != results.PhaseProbe {
			out = append(out, p)
		}
	}
	return out, nil
}

// levelDecisions are the decisions already recorded for the variant's
// level by settleLevel (an earlier attempt, before a resume), by kind and,
// for a re-measure, its reason: they are not written twice.
func (rs *runState) levelDecisions(ctx context.Context, v *Variant, level int) (map[string]bool, error) {
	ds, err := rs.store.Decisions(ctx, rs.runID)
	if err != nil {
		return nil, fmt.Errorf("read the decisions of level %d: %w", level, err)
	}
	out := map[string]bool{}
	for _, d := range ds {
		if d.Variant != v.Name || d.FromLevel != level {
			continue
		}
		switch d.Kind {
		case results.DecisionNotSteady:
			out[d.Kind] = true
		case results.DecisionRemeasureClientBound:
			out[d.Kind+" "+d.Reason] = true
		}
	}
	return out, nil
}

func nsOr(v *int64) string {
	if v == nil {
		return "n/a"
	}
	return strings.TrimSpace(eval.FormatDuration(*v))
}
