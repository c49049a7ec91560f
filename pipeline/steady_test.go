package pipeline_test

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
)

// steadyRun runs sweep over docs documents and returns the summary's
// series and the run's decisions.
func steadyRun(t *testing.T, docs int, sweep, acceptance, engine string, before func()) (eval.Series, []results.Decision, *pipeline.RunReport) {
	t.Helper()
	out, sum := runRate(t, docs, sweep, acceptance, engine, before)
	data, err := results.LoadRun(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	return sum.Variants[0].Series[0], data.Decisions, sum
}

func kindDecisions(ds []results.Decision, kind string) []results.Decision {
	var out []results.Decision
	for _, d := range ds {
		if d.Kind == kind {
			out = append(out, d)
		}
	}
	return out
}

// TestRun_SteadyState: the client's own steady-state check (eval/steady.go)
// needs no engine support. On a steady built-in engine it does not fire:
// every tested pass is steady, no level is NOT STEADY, no decision. On an
// engine that warms (engine.builtin.warmup_requests: its first 40 requests
// up to 3 times slower, so the baseline's first repetition runs while it
// warms, and only that one) it fires on the baseline's first pass, with the evidence stored per pass and a
// not_steady decision, and changes the recommendation: the baseline is not
// usable (cause not_steady). acceptance.steady_state: record keeps the
// evidence and the old recommendation.
func TestRun_SteadyState(t *testing.T) {
	if testing.Short() {
		t.Skip("three small runs at ~20 ms a request")
	}
	want := steadyEngine(t)
	t.Run("warming engine judged", func(t *testing.T) { warmingJudged(t, want) })
	t.Run("warming engine recorded", func(t *testing.T) { warmingRecorded(t, want) })
}

// TestRun_SteadyState's runs: 100 documents, so that the baseline's pass
// holds the 4 blocks of 20 the test needs (eval.SteadyMinBlocks); ~50 ms
// a request, so that a warming engine's early requests are slower by more
// than a loaded machine's client delay.
const (
	steadyDocs    = 100
	steadySweep   = "{mode: concurrency, levels: [1, 2], repetitions: 3, warmup: 1}"
	warmingEngine = "{time_scale: 0.05, warmup_requests: 40}"
)

// steadyEngine: an engine that does not warm is steady at every level, no
// not_steady decision is made, and its recommendation is returned.
func steadyEngine(t *testing.T) eval.Recommendation {
	steady, ds, sum := steadyRun(t, steadyDocs, steadySweep, "{min_accepted: 0.5}", "{time_scale: 0.05}", nil)
	for _, l := range steady.Levels {
		if l.NotSteady != "" {
			t.Errorf("steady engine, level %d: NOT STEADY: %s", l.Level, l.NotSteady)
		}
	}
	tested := 0
	for _, p := range sum.Passes {
		if p.Steady != nil {
			tested++
			if !*p.Steady {
				t.Errorf("steady engine, level %d repetition %d: warming (first block %.2f, later spread %.2f)", p.Level, p.Repetition, *p.SteadyTrendEffect, *p.SteadySpread)
			}
		}
	}
	if tested == 0 {
		t.Error("no pass was trend-tested")
	}
	if d := kindDecisions(ds, results.DecisionNotSteady); len(d) > 0 {
		t.Errorf("steady engine: not_steady decisions %+v", d)
	}
	want := steady.Recommendation
	if !want.Usable() {
		t.Fatalf("steady engine: no usable level: %s", want.Why)
	}
	return want
}

// warmingJudged: a warming engine's baseline is NOT STEADY, its first pass
// records the warming, and the recommendation changes.
func warmingJudged(t *testing.T, want eval.Recommendation) {
	judged, ds, sum := steadyRun(t, steadyDocs, steadySweep, "{min_accepted: 0.5}", warmingEngine, nil)
	base := judged.Level(1)
	if base.NotSteady == "" {
		t.Fatalf("warming engine: the baseline is not flagged NOT STEADY (passes %+v)", sum.Passes[:3])
	}
	if !strings.Contains(base.NotSteady, "the level's first pass (repetition 1) warming") {
		t.Errorf("warming engine: the reason does not name the first repetition: %s", base.NotSteady)
	}
	if !slices.ContainsFunc(sum.Passes, firstPassWarming) {
		t.Errorf("warming engine: the baseline's first pass records no warming")
	}
	if r := judged.Recommendation; r.Recommended == want.Recommended || r.Usable() && r.HighestUsable == want.HighestUsable {
		t.Errorf("warming engine: recommendation %d (highest usable %d), the same as the steady engine's: %s", r.Recommended, r.HighestUsable, r.Why)
	}
	if !hasCause(base.Verdict.Causes, eval.CauseNotSteady) {
		t.Errorf("warming engine: baseline verdict %+v has no not_steady cause", base.Verdict)
	}
	if d := kindDecisions(ds, results.DecisionNotSteady); len(d) != 1 || d[0].FromLevel != 1 || !strings.Contains(d[0].Reason, "not recommended") {
		t.Errorf("warming engine: not_steady decisions %+v, want one at level 1 saying it is not recommended", d)
	}
}

// firstPassWarming reports whether p is the baseline's first pass, found
// warming by its first block.
func firstPassWarming(p extractbench.Pass) bool {
	return p.Level == 1 && p.Repetition == 1 && p.Steady != nil && !*p.Steady && *p.SteadyTrendEffect > eval.SteadyBlockFloor && p.SteadyTrendZ == nil
}

// warmingRecorded: steady_state: record keeps the evidence and the steady
// engine's recommendation.
func warmingRecorded(t *testing.T, want eval.Recommendation) {
	recorded, ds, _ := steadyRun(t, steadyDocs, steadySweep, "{min_accepted: 0.5, steady_state: record}", warmingEngine, nil)
	if recorded.Level(1).NotSteady == "" {
		t.Error("steady_state: record: the evidence is not shown")
	}
	if r := recorded.Recommendation; r.Recommended != want.Recommended {
		t.Errorf("steady_state: record: recommendation %d, want the steady engine's %d (%s)", r.Recommended, want.Recommended, r.Why)
	}
	if d := kindDecisions(ds, results.DecisionNotSteady); len(d) != 1 || !strings.Contains(d[0].Reason, "recorded, not judged") {
		t.Errorf("steady_state: record: decisions %+v", d)
	}
}

func hasCause(cs []eval.Cause, c eval.Cause) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// TestRun_ClientBoundRepetitionLeftOut: one client-bound repetition (the
// client slowed on purpose during the second repetition of level 2, as a
// loaded machine would) no longer decides its level: a
// client_bound_left_out decision names it, it is left out of the level's
// figures, which rest on the two others, and level 2 is usable. On the
// wall clock: on the engine clock a slow client is not on the figures.
func TestRun_ClientBoundRepetitionLeftOut(t *testing.T) {
	if testing.Short() {
		t.Skip("a small run at ~20 ms a request")
	}
	const docs = 60
	var sends atomic.Int64
	slow := func() { // level 1 takes 3 × 60 sends, level 2's first repetition 60 more
		if n := sends.Add(1); n > 4*docs && n <= 5*docs {
			time.Sleep(60 * time.Millisecond)
		}
	}
	s, ds, sum := steadyRun(t, docs, "{mode: concurrency, levels: [1, 2, 4], repetitions: 3, warmup: 1}", "{min_accepted: 0.5}", "{time_scale: 0.02, clock: wall}", slow)
	var bound bool
	for _, p := range sum.Passes {
		if p.Level == 2 && p.Repetition == 2 {
			bound = p.ClientBound != nil && *p.ClientBound
		}
	}
	if !bound {
		t.Fatal("the slowed repetition was not client-bound: the test slows nothing")
	}
	l := s.Level(2)
	if l.ClientBoundLeftOut == 0 {
		t.Fatalf("level 2: no client-bound repetition left out (client-bound %d of %d): %+v", l.ClientBound, l.Repetitions, l.Verdict)
	}
	d := kindDecisions(ds, results.DecisionClientBoundLeftOut)
	var named bool
	for _, x := range d {
		named = named || x.FromLevel == 2 && strings.Contains(x.Reason, "repetition 2 (client delay p99") && strings.Contains(x.Reason, "left out")
	}
	if !named {
		t.Errorf("client_bound_left_out decisions %+v, want one at level 2 naming repetition 2", d)
	}
	if l.ClientBound != 0 || l.Repetitions+l.ClientBoundLeftOut != 3 || hasCause(l.Verdict.Causes, eval.CauseClient) {
		t.Errorf("level 2: client-bound %d, left out %d, repetitions %d, verdict %+v", l.ClientBound, l.ClientBoundLeftOut, l.Repetitions, l.Verdict)
	}
	if s.Recommendation.FirstBroken == 2 && hasCause(s.Recommendation.BrokeBy, eval.CauseClient) {
		t.Errorf("the client-bound repetition still decides level 2: %s", s.Recommendation.Why)
	}
}
