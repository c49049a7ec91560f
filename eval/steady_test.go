package eval

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

// blocksOf are blocks of the given median ratios, 20 requests each, in a
// pass whose median E2E is e2e ns.
func blocksOf(e2e float64, ratios ...float64) SteadyBlocks {
	b := SteadyBlocks{MedianE2ENS: e2e}
	for _, r := range ratios {
		b.Blocks = append(b.Blocks, SteadyBlock{N: 20, Ratio: r})
	}
	return b
}

func TestTrendOf(t *testing.T) {
	tests := []struct {
		name   string
		blocks SteadyBlocks
		ok     bool
		steady bool
	}{
		{"flat", blocksOf(1e9, 1, 1.05, 0.95, 1, 1.02, 0.98), true, true},
		{"warming", blocksOf(1e9, 2.5, 1.6, 1.2, 1, 1.02, 0.98), true, false},
		{"late slower", blocksOf(1e9, 1, 1, 1, 1.8, 1.9, 2), true, true},
		{"within the floor", blocksOf(1e9, 1.4, 1, 1, 1, 1, 1), true, true},
		{"a later block as slow", blocksOf(1e9, 2, 1, 1, 1, 2.1, 1), true, true},
		{"slow early blocks are not compared", blocksOf(1e9, 2, 1.9, 1.8, 1, 1, 1), true, false},
		{"too few blocks", blocksOf(1e9, 3, 1, 1), false, true},
	}
	for _, tt := range tests {
		got := TrendOf(tt.blocks)
		if got.OK != tt.ok || (got.OK && got.Steady() != tt.steady) {
			t.Errorf("%s: %+v (steady %v), want ok %v steady %v", tt.name, got, got.Steady(), tt.ok, tt.steady)
		}
	}
	if w := TrendOf(blocksOf(1e9, 2.5, 1.6, 1.2, 1, 1.02, 0.98)); w.Effect != 1.5 || w.Blocks != 6 || w.N != 120 || w.SlowerNS != 1.5e9 {
		t.Errorf("warming: %+v; want effect 1.5 over the later half's median 1, 6 blocks, 120 requests, 1.5 s slower", w)
	}
}

// TestSteadyBlocksOf: the first wave and the drain are left out, each
// E2E is taken relative to its class's median, so that a pass whose long
// documents come first is flat, and blocks are cut as NTILE cuts them.
func TestSteadyBlocksOf(t *testing.T) {
	var reqs []SteadyRequest
	for i := range 130 {
		class, e2e := "short", int64(100)
		if i < 60 && i%2 == 0 || i >= 60 && i%5 == 0 { // long documents first
			class, e2e = "long", 1000
		}
		reqs = append(reqs, SteadyRequest{Class: class, SendNS: int64(1000 - i), E2ENS: e2e}) // sent in reverse
	}
	b := SteadyBlocksOf(reqs, 1)
	if len(b.Blocks) != 6 || b.Blocks[0].N != 22 || b.Blocks[5].N != 21 {
		t.Fatalf("blocks %+v, want 6: 128 requests as NTILE(6) cuts them (22, 22, 21, ...)", b.Blocks)
	}
	for i, bl := range b.Blocks {
		if bl.Ratio != 1 {
			t.Errorf("block %d: ratio %v, want 1 whatever its mix of classes", i, bl.Ratio)
		}
	}
	// The head at c = 1: the first 21 sent against each class's median
	// after them; the long documents of the first 60 are no slower than
	// their class, so the head is 1 too.
	if b.Head != 1 {
		t.Errorf("head %v, want 1 whatever its mix of classes", b.Head)
	}
	slow := slices.Clone(reqs)
	for i := range slow {
		if slow[i].SendNS < 1000-129+21 { // the first 21 sent (the last listed): 3 times slower
			slow[i].E2ENS *= 3
		}
	}
	if h := SteadyBlocksOf(slow, 1).Head; math.Abs(h-3) > 1e-9 {
		t.Errorf("head of a pass whose first 21 requests took 3 times as long: %v, want 3", h)
	}
	if got := SteadyBlocksOf(reqs[:40], 1); got.Head != 0 {
		t.Errorf("40 requests at c = 1: head %v, want none (21 in the head, 18 after it)", got.Head)
	}
	if got := SteadyBlocksOf(reqs, 20); len(got.Blocks) != 0 {
		t.Errorf("c = 20: %d blocks of 90 requests, want none (blocks of 80)", len(got.Blocks))
	}
}

// e2ePass is a complete baseline pass whose median E2E is p50 ms.
func e2ePass(rep int, p50 int64) extractbench.Pass {
	p50 *= 1e6
	return extractbench.Pass{Variant: "v", Mode: "concurrency", Level: 1, Repetition: rep, Phase: extractbench.PhaseBaseline, Status: extractbench.PassComplete,
		Docs: 100, Accepted: 100, DurationNS: 10 * p50, E2EP50NS: &p50}
}

// TestSteadyState_Level: a first repetition whose median E2E is above the
// others' beyond the noise floor, or a first pass whose test found warming,
// makes the level NOT STEADY and not usable (cause not_steady); a later
// pass alone does not, most of them do; with acceptance.steady_state:
// record the evidence stays and the verdict ignores it; within the floor,
// or the others' own spread, the level is steady.
func TestSteadyState_Level(t *testing.T) {
	level := func(acc extractbench.Acceptance, passes ...extractbench.Pass) Level {
		return AggregateLevels(passes, acc, Planned{Repetitions: len(passes)})[0].Levels[0]
	}
	warming := func(rep int) extractbench.Pass {
		p := e2ePass(rep, 100)
		FillTrend(&p, TrendOf(blocksOf(100e6, 1.8, 1, 1, 1, 1, 1)))
		return p
	}
	tested := func(rep int) extractbench.Pass { // a pass whose test found nothing
		p := e2ePass(rep, 100)
		FillTrend(&p, TrendOf(blocksOf(100e6, 1, 1, 1, 1, 1, 1)))
		return p
	}
	headed := func(rep int, p50 int64, head float64) extractbench.Pass { // a pass at c ≥ 32: no blocks, a head
		p := e2ePass(rep, p50)
		FillTrend(&p, TrendOf(SteadyBlocks{Head: head}))
		return p
	}
	tests := []struct {
		name   string
		acc    extractbench.Acceptance
		passes []extractbench.Pass
		flag   string // in NotSteady; "" = steady
		usable bool
	}{
		{"first head slower", extractbench.Acceptance{}, []extractbench.Pass{headed(1, 110, 2.4), headed(2, 100, 1.2), headed(3, 100, 1.5)},
			"repetition 1's first wave and the 20 requests after it 60% slower than in the slowest of the 2 other repetitions", false},
		{"first head within the floor", extractbench.Acceptance{}, []extractbench.Pass{headed(1, 110, 2.2), headed(2, 100, 1.2), headed(3, 100, 1.5)}, "", true},
		{"a later head slower", extractbench.Acceptance{}, []extractbench.Pass{headed(1, 100, 1.2), headed(2, 100, 3), headed(3, 100, 1.2)}, "", true},
		{"no other head", extractbench.Acceptance{}, []extractbench.Pass{headed(1, 100, 3), e2ePass(2, 100), e2ePass(3, 100)}, "", true},
		{"steady", extractbench.Acceptance{}, []extractbench.Pass{e2ePass(1, 110), e2ePass(2, 100), e2ePass(3, 104)}, "", true},
		{"first repetition slower", extractbench.Acceptance{}, []extractbench.Pass{e2ePass(1, 160), e2ePass(2, 100), e2ePass(3, 104)}, "repetition 1's mean latency", false},
		{"first repetition within the floor", extractbench.Acceptance{}, []extractbench.Pass{e2ePass(1, 125), e2ePass(2, 100), e2ePass(3, 104)}, "", true},
		{"within the others' spread", extractbench.Acceptance{}, []extractbench.Pass{e2ePass(1, 160), e2ePass(2, 100), e2ePass(3, 150)}, "", true},
		{"warming in the first pass only", extractbench.Acceptance{}, []extractbench.Pass{warming(1), tested(2), tested(3)},
			"the level's first pass (repetition 1) warming: the first of 6 blocks (120 requests) 80% slower", false},
		{"warming in a later pass only", extractbench.Acceptance{}, []extractbench.Pass{tested(1), warming(2), tested(3)}, "", true},
		{"warming in two of three later passes", extractbench.Acceptance{}, []extractbench.Pass{tested(1), warming(2), warming(3)}, "in 2 of 3 repetitions", false},
		{"record only", extractbench.Acceptance{SteadyState: extractbench.SteadyRecord}, []extractbench.Pass{warming(1), tested(2), tested(3)}, "the level's first pass", true},
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
// client's own timing (SteadyResolutionNS, or the pass's client delay)
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
	warm := TrendOf(blocksOf(100e6, 2, 1, 1, 1, 1, 1))
	if warm.Steady() {
		t.Errorf("100 ms slower, no floor: steady")
	}
	warm.FloorNS = 150e6
	if !warm.Steady() {
		t.Errorf("100 ms slower within a 150 ms floor: not steady")
	}
}
