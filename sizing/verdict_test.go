package sizing

import (
	"reflect"
	"strings"
	"testing"
)

// pass builds a complete pass of 300 documents at a level.
func pass(level, rep, accepted, memFail int, p95ms int64) PassFigures {
	phase := "sweep"
	if level == 1 {
		phase = "baseline"
	}
	return PassFigures{Variant: "bf16", Mode: "concurrency", Level: level, Repetition: rep, Phase: phase,
		Status: "complete", Docs: 300, Accepted: accepted, FailuresMemory: memFail, E2EP95NS: p95ms * 1e6}
}

func TestJudgePass(t *testing.T) {
	acc := Acceptance{MinAccepted: 0.95, LatencyP95MS: 30000}
	tests := []struct {
		name     string
		p        PassFigures
		baseline float64
		want     []Cause
		reason   string
	}{
		{"usable", pass(4, 1, 290, 0, 1000), 290.0 / 300, nil, ""},
		// 0.99 × 290 = 287.1 documents: 287 is below 99% of the baseline, 288 is not.
		{"baseline floor just kept", pass(4, 1, 288, 0, 1000), 290.0 / 300, nil, ""},
		{"baseline floor broken", pass(4, 1, 287, 0, 1000), 290.0 / 300, []Cause{CauseBaseline}, "95.7% < 99% of the baseline's 96.7%"},
		{"threshold", pass(4, 1, 284, 0, 1000), -1, []Cause{CauseAcceptance}, "accepted 94.7% < threshold 95.0%"},
		{"memory", pass(4, 1, 299, 1, 1000), 1, []Cause{CauseMemory}, "1 memory failure(s)"},
		{"latency", pass(4, 1, 299, 0, 41234), 1, []Cause{CauseLatency}, "p95 E2E 41.2s > objective 30s"},
		{"latency exactly at objective", pass(4, 1, 299, 0, 30000), 1, nil, ""},
		{"unknown latency is not judged", pass(4, 1, 299, 0, 0), 1, nil, ""},
		{"all", pass(4, 1, 200, 5, 60000), 1, []Cause{CauseMemory, CauseAcceptance, CauseBaseline, CauseLatency}, "5 memory"},
		{"no documents", PassFigures{Level: 1}, -1, []Cause{CauseAcceptance}, "accepted 0.0%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := JudgePass(tt.p, tt.baseline, acc)
			if !reflect.DeepEqual(got.Causes, tt.want) {
				t.Fatalf("causes: got %v, want %v (%s)", got.Causes, tt.want, got.Reason)
			}
			if got.Usable != (len(tt.want) == 0) {
				t.Errorf("usable: got %v with causes %v", got.Usable, got.Causes)
			}
			if !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("reason: got %q, want it to contain %q", got.Reason, tt.reason)
			}
		})
	}
}

func TestRecommend(t *testing.T) {
	acc := Acceptance{MinAccepted: 0.95, LatencyP95MS: 30000}
	tests := []struct {
		name                         string
		passes                       []PassFigures
		highest, recommended, broken int
		brokeBy                      []Cause
		why                          string
	}{
		{
			name: "memory breaks at 16",
			passes: []PassFigures{pass(1, 1, 291, 0, 900), pass(2, 1, 291, 0, 1000), pass(4, 1, 290, 0, 1500),
				pass(8, 1, 290, 0, 3000), pass(16, 1, 250, 40, 9000), pass(32, 1, 100, 190, 9000)},
			highest: 8, recommended: 4, broken: 16, brokeBy: []Cause{CauseMemory, CauseAcceptance, CauseBaseline},
			why: "concurrency 4, one step below 8, the highest usable; concurrency 16 broke (40 memory failure(s)",
		},
		{
			name: "a lucky level above the break does not count",
			passes: []PassFigures{pass(1, 1, 291, 0, 900), pass(2, 1, 291, 0, 1000), pass(4, 1, 291, 0, 50000),
				pass(8, 1, 291, 0, 20000)},
			highest: 2, recommended: 1, broken: 4, brokeBy: []Cause{CauseLatency},
		},
		{
			name: "every repetition must be usable",
			passes: []PassFigures{pass(1, 1, 291, 0, 900), pass(1, 2, 291, 0, 900), pass(2, 1, 291, 0, 900),
				pass(2, 2, 291, 0, 900), pass(4, 1, 291, 0, 900), pass(4, 2, 291, 2, 900)},
			highest: 2, recommended: 1, broken: 4, brokeBy: []Cause{CauseMemory},
			why: "(repetition 2: 2 memory failure(s))",
		},
		{
			name:    "nothing broke",
			passes:  []PassFigures{pass(4, 1, 291, 0, 900), pass(1, 1, 291, 0, 900), pass(2, 1, 291, 0, 900)},
			highest: 4, recommended: 2,
			why: "nothing broke, so the ceiling was not reached",
		},
		{
			name:    "only the baseline is usable",
			passes:  []PassFigures{pass(1, 1, 291, 0, 900), pass(2, 1, 150, 0, 900)},
			highest: 1, recommended: 1, broken: 2, brokeBy: []Cause{CauseAcceptance, CauseBaseline},
			why: "the lowest level, with no margin step below it",
		},
		{
			name:   "the baseline breaks",
			passes: []PassFigures{pass(1, 1, 200, 0, 900), pass(2, 1, 291, 0, 900)},
			broken: 1, brokeBy: []Cause{CauseAcceptance},
			why: "no usable concurrency: concurrency 1 already broke",
		},
		{
			name: "interrupted passes are left out",
			passes: []PassFigures{pass(1, 1, 291, 0, 900), pass(2, 1, 291, 0, 900),
				func() PassFigures { p := pass(4, 1, 10, 0, 900); p.Status = "interrupted"; return p }()},
			highest: 2, recommended: 1,
		},
		{
			name: "other variants are ignored",
			passes: []PassFigures{pass(1, 1, 291, 0, 900), pass(2, 1, 291, 0, 900),
				func() PassFigures { p := pass(4, 1, 10, 0, 900); p.Variant = "int4"; return p }()},
			highest: 2, recommended: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Recommend(tt.passes, acc)
			if got.HighestUsable != tt.highest || got.Recommended != tt.recommended || got.FirstBroken != tt.broken {
				t.Fatalf("got highest %d recommended %d broken %d, want %d %d %d (%s)",
					got.HighestUsable, got.Recommended, got.FirstBroken, tt.highest, tt.recommended, tt.broken, got.Why)
			}
			if !reflect.DeepEqual(got.BrokeBy, tt.brokeBy) {
				t.Errorf("broke by: got %v, want %v", got.BrokeBy, tt.brokeBy)
			}
			if !strings.Contains(got.Why, tt.why) {
				t.Errorf("why: got %q, want it to contain %q", got.Why, tt.why)
			}
		})
	}
}

func TestRecommendBaselineIsMeanOfRepetitions(t *testing.T) {
	ps := []PassFigures{pass(1, 1, 300, 0, 1), pass(1, 2, 294, 0, 1), pass(2, 1, 293, 0, 1)}
	got := Recommend(ps, Acceptance{MinAccepted: 0.9})
	if want := 297.0 / 300; got.BaselineShare != want || got.BaselineLevel != 1 {
		t.Fatalf("baseline: got level %d share %v, want 1 %v", got.BaselineLevel, got.BaselineShare, want)
	}
	// 0.99 × 0.99 = 0.9801; 293/300 = 0.9767 breaks. Repetition 2 of the
	// baseline (0.98) is the reference itself and not judged against it.
	if l, _ := got.Level(2); l.Usable {
		t.Errorf("level 2 with 293/300 should break the baseline floor: %+v", l)
	}
	if l, _ := got.Level(1); !l.Usable || l.Repetitions != 2 || l.MinShare != 294.0/300 {
		t.Errorf("level 1: got %+v", l)
	}
}

func TestRecommendAll(t *testing.T) {
	a := pass(1, 1, 291, 0, 1)
	b := pass(1, 1, 100, 0, 1)
	b.Variant = "int4"
	got := RecommendAll([]PassFigures{a, b, pass(2, 1, 291, 0, 1)}, Acceptance{MinAccepted: 0.95})
	if len(got) != 2 || got[0].Variant != "bf16" || got[0].HighestUsable != 2 || got[1].Variant != "int4" || got[1].Usable() {
		t.Fatalf("got %+v", got)
	}
}

func TestJudgePassBaselineRatio(t *testing.T) {
	// 280/300 against a baseline of 290/300 is 96.6% of it: broken at the
	// default 99%, usable when the protocol allows 95%.
	p := pass(4, 1, 280, 0, 1)
	if v := JudgePass(p, 290.0/300, Acceptance{MinAccepted: 0.9}); v.Usable || !strings.Contains(v.Reason, "< 99% of the baseline's") {
		t.Errorf("default ratio: got %+v", v)
	}
	if v := JudgePass(p, 290.0/300, Acceptance{MinAccepted: 0.9, MinBaselineRatio: 0.95}); !v.Usable {
		t.Errorf("ratio 0.95: got %+v", v)
	}
}

func TestJudgePassPreemptionStorm(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	p := pass(32, 1, 299, 0, 1000)
	tests := []struct {
		name        string
		preemptions *int64
		max         *int64
		usable      bool
	}{
		{"not judged without a maximum", n(500), nil, true},
		{"at the maximum", n(10), n(10), true},
		{"above the maximum", n(11), n(10), false},
		{"unknown preemptions are not judged", nil, n(0), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.Preemptions = tt.preemptions
			v := JudgePass(p, 1, Acceptance{MinAccepted: 0.95, MaxPreemptions: tt.max})
			if v.Usable != tt.usable {
				t.Fatalf("usable = %v, want %v (%s)", v.Usable, tt.usable, v.Reason)
			}
			if !tt.usable && (!reflect.DeepEqual(v.Causes, []Cause{CauseMemory}) || !strings.Contains(v.Reason, "preemption storm: 11 preemptions > max 10")) {
				t.Errorf("verdict = %+v, want a memory cause naming the storm", v)
			}
		})
	}
}
