package pipeline_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results/resultstest"
)

// TestRun_EngineClockIgnoresHost: against the built-in engine every
// latency is on the engine's own clock, in lockstep with the client, so a
// client that stalls at random before its sends (a loaded host) changes
// no request's instants, no pass's figures and no decision; with
// builtin.clock: wall the same stalls show (the check that this test can
// fail).
func TestRun_EngineClockIgnoresHost(t *testing.T) {
	const sweep = "{mode: concurrency, levels: [1, 4, 16], repetitions: 2, warmup: 2}"
	stalls := func(seed uint64) func() {
		var mu sync.Mutex
		rng := rand.New(rand.NewPCG(seed, 1))
		return func() {
			mu.Lock()
			d := time.Duration(rng.IntN(8)) * time.Millisecond
			mu.Unlock()
			time.Sleep(d)
		}
	}
	instants := func(out string) map[string]string {
		m := map[string]string{}
		for _, r := range requestsOf(t, out) {
			m[fmt.Sprintf("%s/%d/%d/%s", r.Variant, r.Level, r.Repetition, r.DocID)] = fmt.Sprintf("queue %d ttft %d e2e %d",
				r.SendNS-r.SchedNS, r.FirstTokenNS-r.SendNS, r.DoneNS-r.SendNS)
		}
		return m
	}
	quietOut, quiet := runRate(t, 40, sweep, "{min_accepted: 0}", "{time_scale: 0.02}", nil)
	stalledOut, stalled := runRate(t, 40, sweep, "{min_accepted: 0}", "{time_scale: 0.02}", stalls(1))
	a, b := instants(quietOut), instants(stalledOut)
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("%d and %d requests", len(a), len(b))
	}
	differ := 0
	for k, v := range a {
		if b[k] != v {
			if differ++; differ <= 3 {
				t.Errorf("%s: %s quiet, %s with a stalling client", k, v, b[k])
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d requests changed with the host", differ, len(a))
	}
	for i, p := range quiet.Passes {
		q := stalled.Passes[i]
		if *p.E2EP95NS != *q.E2EP95NS || p.DurationNS != q.DurationNS || *p.ClientBound != *q.ClientBound {
			t.Errorf("level %d repetition %d: E2E p95 %d/%d, duration %d/%d, client-bound %v/%v", p.Level, p.Repetition,
				*p.E2EP95NS, *q.E2EP95NS, p.DurationNS, q.DurationNS, *p.ClientBound, *q.ClientBound)
		}
		if p.LatenessP99NS == nil || *p.LatenessP99NS != 0 {
			t.Errorf("level %d: client queue p99 %v on the engine clock, want 0", p.Level, p.LatenessP99NS)
		}
	}

	wallOut, _ := runRate(t, 40, sweep, "{min_accepted: 0}", "{time_scale: 0.02, clock: wall}", stalls(1))
	if w := instants(wallOut); equalMaps(w, a) {
		t.Error("builtin.clock: wall gave the engine clock's instants: the test cannot tell the clocks apart")
	}
}

func requestsOf(t *testing.T, out string) []extractbench.Record {
	t.Helper()
	return resultstest.Requests(t, out)
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
