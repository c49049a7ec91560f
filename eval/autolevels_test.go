package eval

import "testing"

// TestRecommend_AutoProbeAndPlanByVariant: an auto rate sweep's saturation
// probe is shown but never a step of the walk (a lucky burst never becomes
// the recommendation), and a variant's chosen rates, not the protocol's
// levels, are what a PARTIAL sweep is judged against.
func TestRecommend_AutoProbeAndPlanByVariant(t *testing.T) {
	rate := func(level int, phase string) Pass {
		p := pass(level, 1, 291, 0, 1)
		p.Mode, p.Phase = ModeRate, phase
		return p
	}
	ps := []Pass{rate(SyncLevel, PhaseBaseline), rate(10, PhaseSweep), rate(20, PhaseSweep), rate(900, PhaseProbe)}
	plan := Plan{Levels: []int{SyncLevel}, Repetitions: 1, ByVariant: map[string][]int{"bf16": {SyncLevel, 10, 20}}}
	s := AggregateLevels(ps, Acceptance{MinAccepted: 0.9}, plan)[0]
	r := s.Recommendation
	if r.HighestUsable != 20 || r.Recommended != 10 || r.Partial {
		t.Errorf("recommendation %+v: want highest usable 20/s (the probe is not a step), 10/s recommended, complete", r)
	}
	if l := s.Level(900); l == nil || l.Phase != PhaseProbe {
		t.Errorf("the probe's level is not shown: %+v", l)
	}
	plan.ByVariant["bf16"] = []int{SyncLevel, 10, 20, 30}
	if r := AggregateLevels(ps, Acceptance{MinAccepted: 0.9}, plan)[0].Recommendation; !r.Partial || len(r.Missing) != 1 || r.Missing[0] != "level 30 (0 of 1 repetitions)" {
		t.Errorf("a chosen rate not measured: partial %v, missing %q", r.Partial, r.Missing)
	}
}
