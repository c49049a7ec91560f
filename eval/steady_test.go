package eval

import (
	"github.com/extractbench/extractbench"
	"strings"
	"testing"
)

// trendGroup ranks early and late E2E values of one class as PassTrend
// does (mean ranks for ties) and takes their medians.
func trendGroup(early, late []float64) TrendGroup {
	all := append(append([]float64{}, early...), late...)
	rank := func(v float64) float64 {
		below, equal := 0, 0
		for _, w := range all {
			switch {
			case w < v:
				below++
			case w == v:
				equal++
			}
		}
		return float64(below) + float64(equal+1)/2
	}
	g := TrendGroup{NEarly: len(early), NLate: len(late)}
	for _, v := range early {
		g.RankSumEarly += rank(v)
	}
	g.MedianEarly, g.MedianLate = Describe(early).P50, Describe(late).P50
	return g
}

func series(n int, f func(i int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func TestTrendOf(t *testing.T) {
	// Interleaved values: early and late from one distribution.
	flat := trendGroup(series(15, func(i int) float64 { return float64(100 + 2*i) }), series(15, func(i int) float64 { return float64(101 + 2*i) }))
	// Early requests twice as slow (warming), in two length classes.
	warmShort := trendGroup(series(12, func(i int) float64 { return float64(200 + i) }), series(12, func(i int) float64 { return float64(100 + i) }))
	warmLong := trendGroup(series(10, func(i int) float64 { return float64(2000 + 10*i) }), series(10, func(i int) float64 { return float64(1000 + 10*i) }))
	// Late requests slower: not warming.
	late := trendGroup(series(15, func(i int) float64 { return float64(100 + i) }), series(15, func(i int) float64 { return float64(200 + i) }))
	// Early slower by 5% only, on many requests: certain, within the floor.
	drift := trendGroup(series(500, func(i int) float64 { return float64(1050 + i%10) }), series(500, func(i int) float64 { return float64(1000 + i%10) }))
	tests := []struct {
		name   string
		groups []TrendGroup
		ok     bool
		steady bool
	}{
		{"flat", []TrendGroup{flat}, true, true},
		{"warming, two classes", []TrendGroup{warmShort, warmLong}, true, false},
		{"late slower", []TrendGroup{late}, true, true},
		{"small drift", []TrendGroup{drift}, true, true},
		{"too few", []TrendGroup{trendGroup([]float64{3, 4, 5, 6, 7}, []float64{1, 2, 2, 1, 1})}, false, true},
	}
	for _, tt := range tests {
		got := TrendOf(tt.groups)
		if got.OK != tt.ok || (got.OK && got.Steady() != tt.steady) {
			t.Errorf("%s: %+v (steady %v), want ok %v steady %v", tt.name, got, got.Steady(), tt.ok, tt.steady)
		}
	}
	if w := TrendOf([]TrendGroup{warmShort, warmLong}); w.Z < SteadyTrendZ || w.Effect < 0.9 || w.N != 44 {
		t.Errorf("warming: z %.2f effect %.2f n %d; want z ≥ %.2f, effect about 1 (twice as slow), 44 requests", w.Z, w.Effect, w.N, SteadyTrendZ)
	}
}

// e2ePass is a complete baseline pass whose median E2E is p50 ms.
func e2ePass(rep int, p50 int64) extractbench.Pass {
	p50 *= 1e6
	return extractbench.Pass{Variant: "v", Mode: "concurrency", Level: 1, Repetition: rep, Phase: extractbench.PhaseBaseline, Status: extractbench.PassComplete,
		Docs: 100, Accepted: 100, DurationNS: 10 * p50, E2EP50NS: &p50}
}

// TestSteadyState_Level: a first repetition whose median E2E is above the
// others' beyond the noise floor, or a pass whose trend test found warming,
// makes the level NOT STEADY and not usable (cause not_steady); with
// acceptance.steady_state: record the evidence stays and the verdict ignores
// it; within the floor, or the others' own spread, the level is steady.
func TestSteadyState_Level(t *testing.T) {
	level := func(acc extractbench.Acceptance, passes ...extractbench.Pass) Level {
		return AggregateLevels(passes, acc, Planned{Repetitions: len(passes)})[0].Levels[0]
	}
	no := false
	z, e, n := 5.0, 0.8, int64(60)
	trending := e2ePass(2, 100)
	trending.Steady, trending.SteadyTrendZ, trending.SteadyTrendEffect, trending.SteadyTrendN = &no, &z, &e, &n
	yes := true
	tested := func(rep int) extractbench.Pass { // a pass whose trend test found nothing
		p := e2ePass(rep, 100)
		p.Steady, p.SteadyTrendN = &yes, &n
		return p
	}
	trending3 := trending
	trending3.Repetition = 3
	tests := []struct {
		name   string
		acc    extractbench.Acceptance
		passes []extractbench.Pass
		flag   string // in NotSteady; "" = steady
		usable bool
	}{
		{"steady", extractbench.Acceptance{}, []extractbench.Pass{e2ePass(1, 110), e2ePass(2, 100), e2ePass(3, 104)}, "", true},
		{"first repetition slower", extractbench.Acceptance{}, []extractbench.Pass{e2ePass(1, 160), e2ePass(2, 100), e2ePass(3, 104)}, "repetition 1's median E2E", false},
		{"within the others' spread", extractbench.Acceptance{}, []extractbench.Pass{e2ePass(1, 160), e2ePass(2, 100), e2ePass(3, 150)}, "", true},
		{"a trend within a pass", extractbench.Acceptance{}, []extractbench.Pass{e2ePass(1, 100), trending, e2ePass(3, 100)}, "repetition 2: early requests slower than late ones by 80%", false},
		{"a trend in one of three tested passes", extractbench.Acceptance{}, []extractbench.Pass{tested(1), trending, tested(3)}, "", true},
		{"a trend in two of three tested passes", extractbench.Acceptance{}, []extractbench.Pass{tested(1), trending, trending3}, "in 2 of 3 repetitions", false},
		{"record only", extractbench.Acceptance{SteadyState: extractbench.SteadyRecord}, []extractbench.Pass{e2ePass(1, 160), e2ePass(2, 100), e2ePass(3, 104)}, "repetition 1's median E2E", true},
	}
	for _, tt := range tests {
		l := level(tt.acc, tt.passes...)
		if tt.flag == "" && l.NotSteady != "" || tt.flag != "" && !strings.Contains(l.NotSteady, tt.flag) {
			t.Errorf("%s: not steady %q, want %q", tt.name, l.NotSteady, tt.flag)
		}
		if l.Verdict.Usable != tt.usable {
			t.Errorf("%s: verdict %+v, want usable %v", tt.name, l.Verdict, tt.usable)
		}
	}
}

// TestClientBoundLeftOut: client-bound repetitions are left out of the
// level's figures when most of its repetitions were not client-bound; when
// as many or more were, every pass stays and the level is client-bound.
func TestClientBoundLeftOut(t *testing.T) {
	yes, no := true, false
	pass := func(rep int, bound bool, p50 int64) extractbench.Pass {
		p := e2ePass(rep, p50)
		p.Level, p.Phase = 2, extractbench.PhaseSweep
		p.ClientBound = &no
		if bound {
			p.ClientBound = &yes
		}
		return p
	}
	base := []extractbench.Pass{e2ePass(1, 100), e2ePass(2, 100), e2ePass(3, 100)}
	tests := []struct {
		name             string
		passes           []extractbench.Pass
		bound, out, reps int
		usable           bool
	}{
		{"none bound", []extractbench.Pass{pass(1, false, 100), pass(2, false, 101), pass(3, false, 100)}, 0, 0, 3, true},
		{"one of three", []extractbench.Pass{pass(1, false, 100), pass(2, true, 400), pass(3, false, 101)}, 0, 1, 2, true},
		{"two of three", []extractbench.Pass{pass(1, false, 100), pass(2, true, 400), pass(3, true, 400)}, 2, 0, 3, false},
		{"one of two", []extractbench.Pass{pass(1, false, 100), pass(2, true, 400)}, 1, 0, 2, false},
		{"the only one", []extractbench.Pass{pass(1, true, 400)}, 1, 0, 1, false},
	}
	for _, tt := range tests {
		s := AggregateLevels(append(append([]extractbench.Pass{}, base...), tt.passes...), extractbench.Acceptance{}, Planned{})[0]
		l := s.Level(2)
		if l.ClientBound != tt.bound || l.ClientBoundLeftOut != tt.out || l.Repetitions != tt.reps || l.Verdict.Usable != tt.usable {
			t.Errorf("%s: client-bound %d, left out %d, repetitions %d, usable %v; want %d %d %d %v (%s)",
				tt.name, l.ClientBound, l.ClientBoundLeftOut, l.Repetitions, l.Verdict.Usable, tt.bound, tt.out, tt.reps, tt.usable, l.Verdict.Reason)
		}
		if tt.name == "one of three" && l.E2EP50NS.Max != 101e6 {
			t.Errorf("one of three: the client-bound repetition's figures are still in the level's (E2E p50 max %v)", l.E2EP50NS.Max)
		}
	}
	// A left-out repetition was measured: a plan of three repetitions is
	// complete, not a PARTIAL sweep "not measured" (the H200 llama.cpp sweep
	// of 2026-12-02 said so of three variants' level 128).
	plan := Planned{Levels: []int{1, 2}, Repetitions: 3}
	passes := append(append([]extractbench.Pass{}, base...), pass(1, false, 100), pass(2, true, 400), pass(3, false, 101))
	if r := AggregateLevels(passes, extractbench.Acceptance{}, plan)[0].Recommendation; r.Partial || len(r.Missing) > 0 {
		t.Errorf("one of three left out: partial %v, missing %v; want a complete sweep", r.Partial, r.Missing)
	}
	if r := AggregateLevels(passes[:5], extractbench.Acceptance{}, plan)[0].Recommendation; !r.Partial {
		t.Errorf("two of three passes at level 2 (one left out): not partial, want the missing repetition named")
	}
}

// TestSteadyState_Floor: a slowdown beyond the share floor but within the
// client's own timing (SteadyResolutionNS, or the pass's client delay p99)
// is not called warming.
func TestSteadyState_Floor(t *testing.T) {
	small := []extractbench.Pass{e2ePass(1, 3), e2ePass(2, 1), e2ePass(3, 1)} // 3 ms against 1 ms: 200%, but 2 ms
	if l := AggregateLevels(small, extractbench.Acceptance{}, Planned{})[0].Levels[0]; l.NotSteady != "" {
		t.Errorf("2 ms slower: %s", l.NotSteady)
	}
	delay := int64(80e6)
	loaded := []extractbench.Pass{e2ePass(1, 150), e2ePass(2, 100), e2ePass(3, 100)}
	for i := range loaded {
		loaded[i].LatenessP50NS = &delay
	}
	if l := AggregateLevels(loaded, extractbench.Acceptance{}, Planned{})[0].Levels[0]; l.NotSteady != "" {
		t.Errorf("50 ms slower with a client's median delay of 80 ms: %s", l.NotSteady)
	}
	warm := TrendOf([]TrendGroup{trendGroup(series(12, func(i int) float64 { return float64(200e6 + i) }), series(12, func(i int) float64 { return float64(100e6 + i) }))})
	if warm.Steady() {
		t.Errorf("100 ms slower, no floor: steady")
	}
	warm.FloorNS = 150e6
	if !warm.Steady() {
		t.Errorf("100 ms slower within a 150 ms floor: not steady")
	}
}
