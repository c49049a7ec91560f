package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/extractbench/extractbench"

	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
)

// settleLevel runs once a level's planned repetitions are measured, and
// records what eval's aggregator will make of them. Client-bound
// repetitions (the client, not the engine, set the pace: a loaded machine)
// are left out of the level's figures when most of its repetitions were
// not client-bound, so that one unlucky pass does not decide the level
// (eval's levelBuilder.leftOut): a client_bound_left_out decision names
// them. A level whose passes were not in steady state (eval/steady.go)
// gets a not_steady decision.
func (vr *variantRun) settleLevel(ctx context.Context, level int) error {
	rs, v := vr.rs, vr.v
	bg := context.WithoutCancel(ctx)
	passes, err := vr.levelPasses(bg, level)
	if err != nil {
		return err
	}
	decided, err := vr.levelDecisions(bg, level)
	if err != nil {
		return err
	}
	acc := rs.proto.Acceptance
	for _, s := range eval.AggregateLevels(passes, acc, eval.Planned{Repetitions: rs.proto.Sweep.Repetitions}) {
		l := s.Level(level)
		if l == nil {
			continue
		}
		name := eval.LevelName(s.Mode, level)
		if l.ClientBoundLeftOut > 0 && !decided[results.DecisionClientBoundLeftOut] {
			var reps []string
			for _, p := range passes {
				if p.Complete() && p.ClientBound != nil && *p.ClientBound {
					reps = append(reps, fmt.Sprintf("%d (client delay p99 %s)", p.Repetition, nsOr(p.ClientDelayP99NS)))
				}
			}
			// Recorded, not printed: whether a loaded machine made a pass
			// client-bound is no part of what a run says on stderr.
			reason := fmt.Sprintf("repetition %s at level %s client-bound, %d of %d not: left out of the level's figures, which rest on the %d others",
				strings.Join(reps, ", "), name, l.Repetitions, l.Repetitions+l.ClientBoundLeftOut, l.Repetitions)
			if err := rs.store.AddDecision(bg, results.Decision{RunID: rs.runID, Variant: v.Name, AtMS: time.Now().UnixMilli(),
				Kind: results.DecisionClientBoundLeftOut, FromLevel: level, Reason: reason}); err != nil {
				rs.logf("warning: record decision: %v", err)
			}
		}
		if l.NotSteady == "" || decided[results.DecisionNotSteady] {
			continue
		}
		what := "not recommended (acceptance.steady_state: judge)"
		if !acc.JudgesSteadyState() {
			what = "recorded, not judged (acceptance.steady_state: record)"
		}
		// rs.decision prints it on stderr: once, as every finding.
		rs.decision(bg, v.Name, results.DecisionNotSteady, level, 0, eval.NotSteadyFinding(l)+"; "+what)
	}
	return nil
}

// levelPasses are the variant's passes at level, in the sweep's mode.
func (vr *variantRun) levelPasses(ctx context.Context, level int) ([]extractbench.Pass, error) {
	rs, v := vr.rs, vr.v
	all, err := rs.store.Passes(ctx, rs.runID)
	if err != nil {
		return nil, fmt.Errorf("read the passes of level %d: %w", level, err)
	}
	var out []extractbench.Pass
	mode := rs.passKey(v, level, 1).Mode
	for _, p := range all {
		if p.Variant == v.Name && p.Mode == mode && p.Level == level && p.Phase != extractbench.PhaseProbe {
			out = append(out, p)
		}
	}
	return out, nil
}

// levelDecisions are the decisions already recorded for the variant's
// level by settleLevel (an earlier attempt, before a resume), by kind:
// they are not written twice.
func (vr *variantRun) levelDecisions(ctx context.Context, level int) (map[string]bool, error) {
	rs, v := vr.rs, vr.v
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
		case results.DecisionNotSteady, results.DecisionClientBoundLeftOut:
			out[d.Kind] = true
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
