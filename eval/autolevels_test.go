package eval

import (
	"testing"

	"github.com/extractbench/extractbench"
)

// TestRecommend_AutoProbeAndPlanByVariant: an auto rate sweep's saturation
// probe is shown but never a step of the walk (a lucky burst never becomes
// the recommendation), and a variant's chosen rates, not the protocol's
// levels, are what a PARTIAL sweep is judged against.
func TestRecommend_AutoProbeAndPlanByVariant(t *testing.T) {
	rate := func(level int, phase string) extractbench.Pass {
		p := pass(level, 1, 291, 0, 1)
		p.Mode, p.Phase = extractbench.ModeRate, phase
		return p
	}
	ps := []extractbench.Pass{rate(extractbench.SyncLevel, extractbench.PhaseBaseline), rate(10, extractbench.PhaseSweep), rate(20, extractbench.PhaseSweep), rate(900, extractbench.PhaseProbe)}
	plan := Planned{Levels: []int{extractbench.SyncLevel}, Repetitions: 1, ByVariant: map[string][]int{"bf16": {extractbench.SyncLevel, 10, 20}}}
	s := AggregateLevels(ps, extractbench.Acceptance{MinAccepted: 0.9}, plan)[0]
	r := s.Recommendation
	if r.HighestUsable != 20 || r.Recommended != 10 || r.Partial {
		t.Errorf("recommendation %+v: want highest usable 20/s (the probe is not a step), 10/s recommended, complete", r)
	}
	if l := s.Level(900); l == nil || l.Phase != extractbench.PhaseProbe {
		t.Errorf("the probe's level is not shown: %+v", l)
	}
	plan.ByVariant["bf16"] = []int{extractbench.SyncLevel, 10, 20, 30}
	if r := AggregateLevels(ps, extractbench.Acceptance{MinAccepted: 0.9}, plan)[0].Recommendation; !r.Partial || len(r.Missing) != 1 || r.Missing[0] != "level 30/s (0 of 1 repetitions)" {
		t.Errorf("a chosen rate not measured: partial %v, missing %q", r.Partial, r.Missing)
	}
}
