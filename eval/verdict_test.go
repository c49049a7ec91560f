package eval

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

// pass builds a complete pass of 300 documents at a level.
func pass(level, rep, accepted, memFail int, p95ms int64) extractbench.Pass {
	phase := "sweep"
	if level == 1 {
		phase = "baseline"
	}
	p := extractbench.Pass{Variant: "bf16", Mode: "concurrency", Level: level, Repetition: rep, Phase: phase,
		Status: "complete", Docs: 300, Accepted: int64(accepted)}
	p.Failures.Add(extractbench.Memory, int64(memFail))
	if p95ms > 0 {
		ns := p95ms * 1e6
		p.E2EP95NS = &ns
	}
	return p
}

// recommendOne aggregates passes and returns the first series (bf16).
func recommendOne(passes []extractbench.Pass, acc extractbench.Acceptance) Series {
	s := AggregateLevels(passes, acc, Planned{})
	for _, x := range s {
		if x.Variant == "bf16" {
			return x
		}
	}
	return Series{}
}

func TestJudgePass(t *testing.T) {
	acc := extractbench.Acceptance{MinAccepted: 0.95, LatencyP95MS: 30000}
	tests := []struct {
		name     string
		p        extractbench.Pass
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
		{"no documents", extractbench.Pass{Level: 1}, -1, []Cause{CauseAcceptance}, "accepted 0.0%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := JudgePass(&tt.p, tt.baseline, acc)
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
	acc := extractbench.Acceptance{MinAccepted: 0.95, LatencyP95MS: 30000}
	tests := []struct {
		name                         string
		passes                       []extractbench.Pass
		highest, recommended, broken int
		brokeBy                      []Cause
		why                          string
	}{
		{
			name: "memory breaks at 16",
			passes: []extractbench.Pass{pass(1, 1, 291, 0, 900), pass(2, 1, 291, 0, 1000), pass(4, 1, 290, 0, 1500),
				pass(8, 1, 290, 0, 3000), pass(16, 1, 250, 40, 9000), pass(32, 1, 100, 190, 9000)},
			highest: 8, recommended: 4, broken: 16, brokeBy: []Cause{CauseMemory, CauseAcceptance, CauseBaseline},
			why: "concurrency 4, one step below 8, the highest usable; concurrency 16 broke (40 memory failure(s)",
		},
		{
			name: "a lucky level above the break does not count",
			passes: []extractbench.Pass{pass(1, 1, 291, 0, 900), pass(2, 1, 291, 0, 1000), pass(4, 1, 291, 0, 50000),
				pass(8, 1, 291, 0, 20000)},
			highest: 2, recommended: 1, broken: 4, brokeBy: []Cause{CauseLatency},
		},
		{
			name: "memory failures are summed over repetitions",
			passes: []extractbench.Pass{pass(1, 1, 291, 0, 900), pass(1, 2, 291, 0, 900), pass(2, 1, 291, 0, 900),
				pass(2, 2, 291, 0, 900), pass(4, 1, 291, 0, 900), pass(4, 2, 291, 2, 900)},
			highest: 2, recommended: 1, broken: 4, brokeBy: []Cause{CauseMemory},
			why: "concurrency 4 broke (2 memory failure(s))",
		},
		{
			name:    "nothing broke",
			passes:  []extractbench.Pass{pass(4, 1, 291, 0, 900), pass(1, 1, 291, 0, 900), pass(2, 1, 291, 0, 900)},
			highest: 4, recommended: 2,
			why: "nothing broke, so the ceiling was not reached",
		},
		{
			name:    "only the baseline is usable",
			passes:  []extractbench.Pass{pass(1, 1, 291, 0, 900), pass(2, 1, 150, 0, 900)},
			highest: 1, recommended: 1, broken: 2, brokeBy: []Cause{CauseAcceptance, CauseBaseline},
			why: "the lowest level, with no margin step below it",
		},
		{
			name:   "the baseline breaks",
			passes: []extractbench.Pass{pass(1, 1, 200, 0, 900), pass(2, 1, 291, 0, 900)},
			broken: 1, brokeBy: []Cause{CauseAcceptance},
			why: "no usable concurrency: concurrency 1 already broke",
		},
		{
			name: "interrupted passes are left out",
			passes: []extractbench.Pass{pass(1, 1, 291, 0, 900), pass(2, 1, 291, 0, 900),
				func() extractbench.Pass { p := pass(4, 1, 10, 0, 900); p.Status = "interrupted"; return p }()},
			highest: 2, recommended: 1,
		},
		{
			name: "other variants are ignored",
			passes: []extractbench.Pass{pass(1, 1, 291, 0, 900), pass(2, 1, 291, 0, 900),
				func() extractbench.Pass { p := pass(4, 1, 10, 0, 900); p.Variant = "int4"; return p }()},
			highest: 2, recommended: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := recommendOne(tt.passes, acc).Recommendation
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

func TestRecommendBaselineIsPooled(t *testing.T) {
	ps := []extractbench.Pass{pass(1, 1, 300, 0, 1), pass(1, 2, 294, 0, 1), pass(2, 1, 293, 0, 1)}
	s := recommendOne(ps, extractbench.Acceptance{MinAccepted: 0.9})
	got := s.Recommendation
	if want := 594.0 / 600; got.BaselineShare != want || got.BaselineLevel != 1 {
		t.Fatalf("baseline: got level %d share %v, want 1 %v", got.BaselineLevel, got.BaselineShare, want)
	}
	// 0.99 × 0.99 = 0.9801; 293/300 = 0.9767 breaks.
	if l := s.Level(2); l.Verdict.Usable {
		t.Errorf("level 2 with 293/300 should break the baseline floor: %+v", l.Verdict)
	}
	if l := s.Level(1); !l.Verdict.Usable || l.Repetitions != 2 || l.Docs != 600 || l.Accepted != 594 {
		t.Errorf("level 1: got %+v", l)
	}
}

func TestAggregateLevelsSeries(t *testing.T) {
	a := pass(1, 1, 291, 0, 1)
	b := pass(1, 1, 100, 0, 1)
	b.Variant = "int4"
	got := AggregateLevels([]extractbench.Pass{a, b, pass(2, 1, 291, 0, 1)}, extractbench.Acceptance{MinAccepted: 0.95}, Planned{})
	if len(got) != 2 || got[0].Variant != "bf16" || got[0].Recommendation.HighestUsable != 2 || got[1].Variant != "int4" || got[1].Recommendation.Usable() {
		t.Fatalf("got %+v", got)
	}
}

// The verdict judges the figure the tables show: the median p95 over
// repetitions, and it says so. One slow repetition out of three does not
// break a level; two do.
func TestJudgeUsesMedianOfRepetitions(t *testing.T) {
	acc := extractbench.Acceptance{MinAccepted: 0.9, LatencyP95MS: 200}
	one := []extractbench.Pass{pass(1, 1, 291, 0, 100), pass(1, 2, 291, 0, 100), pass(1, 3, 291, 0, 100),
		pass(2, 1, 291, 0, 150), pass(2, 2, 291, 0, 207), pass(2, 3, 291, 0, 178)}
	s := recommendOne(one, acc)
	l := s.Level(2)
	if l.E2EP95NS.Median != 178e6 || l.E2EP95NS.Min != 150e6 || l.E2EP95NS.Max != 207e6 || !l.Verdict.Usable {
		t.Fatalf("level 2: p95 %+v verdict %+v, want median 178ms usable", l.E2EP95NS, l.Verdict)
	}
	two := append(one[:4:4], pass(2, 2, 291, 0, 207), pass(2, 3, 291, 0, 212))
	s = recommendOne(two, acc)
	v := s.Level(2).Verdict
	// Printed with the digits the range supports (150ms–212ms: two).
	want := "p95 E2E 210ms (median of 3 repetitions, 150ms–210ms) > objective 200ms"
	if v.Usable || v.Reason != want {
		t.Fatalf("verdict: got %+v, want reason %q", v, want)
	}
}

// TestJudgeMostRepetitions: a latency objective breaks a level only when
// most of its repetitions exceed it (Spread.MostExceed), so one noisy
// repetition of two does not flip the level, though the median of the two
// (their mean) is above the objective; both above it do.
func TestJudgeMostRepetitions(t *testing.T) {
	acc := extractbench.Acceptance{MinAccepted: 0.9, LatencyP95MS: 200}
	base := []extractbench.Pass{pass(1, 1, 291, 0, 100), pass(1, 2, 291, 0, 100)}
	tests := []struct {
		name   string
		p95s   []int64
		usable bool
	}{
		{"one of two noisy", []int64{150, 260}, true},
		{"both above", []int64{210, 260}, false},
		{"one of three noisy", []int64{150, 160, 900}, true},
		{"two of three above", []int64{150, 210, 900}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := slices.Clone(base)
			for i, ms := range tt.p95s {
				ps = append(ps, pass(2, i+1, 291, 0, ms))
			}
			s := recommendOne(ps, acc)
			l := s.Level(2)
			if l.Verdict.Usable != tt.usable {
				t.Errorf("p95s %v ms (median %s): usable %v, want %v (%s)", tt.p95s, l.E2EP95NS.Duration(), l.Verdict.Usable, tt.usable, l.Verdict.Reason)
			}
		})
	}
}

func TestAggregatePartialSweep(t *testing.T) {
	ps := []extractbench.Pass{pass(1, 1, 291, 0, 1), pass(2, 1, 291, 0, 1),
		func() extractbench.Pass { p := pass(4, 1, 10, 0, 1); p.Status = extractbench.PassInterrupted; return p }()}
	s := AggregateLevels(ps, extractbench.Acceptance{MinAccepted: 0.9}, Planned{Levels: []int{1, 2, 4, 8}, Repetitions: 1})[0]
	r := s.Recommendation
	if !r.Partial || len(r.Missing) != 2 || r.Missing[0] != "level 4 (0 of 1 repetitions)" {
		t.Fatalf("got partial %v missing %q", r.Partial, r.Missing)
	}
	if !strings.HasPrefix(r.Why, "PARTIAL sweep (level 4 (0 of 1 repetitions), level 8 (0 of 1 repetitions) not measured): concurrency 1") {
		t.Errorf("why = %q", r.Why)
	}
	if s.Level(4) != nil {
		t.Errorf("an interrupted pass made a level: %+v", s.Level(4))
	}
}

func TestFormatDuration(t *testing.T) {
	for _, tt := range []struct {
		ns   int64
		want string
	}{{0, "0s"}, {999, "999ns"}, {1234, "1.23µs"}, {3_494_000, "3.49ms"}, {17_345_000, "17.3ms"}, {178_270_000, "178ms"},
		{1_234_567_890, "1.23s"}, {41_234_000_000, "41.2s"}, {412_340_000_000, "6m52s"}} {
		if got := FormatDuration(tt.ns); got != tt.want {
			t.Errorf("FormatDuration(%d) = %q, want %q", tt.ns, got, tt.want)
		}
	}
}

func TestJudgePassBaselineRatio(t *testing.T) {
	// 280/300 against a baseline of 290/300 is 96.6% of it: broken at the
	// default 99%, usable when the protocol allows 95%.
	p := pass(4, 1, 280, 0, 1)
	if v := JudgePass(&p, 290.0/300, extractbench.Acceptance{MinAccepted: 0.9}); v.Usable || !strings.Contains(v.Reason, "< 99% of the baseline's") {
		t.Errorf("default ratio: got %+v", v)
	}
	if v := JudgePass(&p, 290.0/300, extractbench.Acceptance{MinAccepted: 0.9, MinBaselineRatio: 0.95}); !v.Usable {
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
			v := JudgePass(&p, 1, extractbench.Acceptance{MinAccepted: 0.95, MaxPreemptions: tt.max})
			if v.Usable != tt.usable {
				t.Fatalf("usable = %v, want %v (%s)", v.Usable, tt.usable, v.Reason)
			}
			if !tt.usable && (!reflect.DeepEqual(v.Causes, []Cause{CauseMemory}) || !strings.Contains(v.Reason, "preemption storm: 11 preemptions > max 10")) {
				t.Errorf("verdict = %+v, want a memory cause naming the storm", v)
			}
		})
	}
}
