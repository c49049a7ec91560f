package pipeline_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline"
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
	sameInstants(t, a, b)
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

// sameInstants fails t unless the stalled run's requests (b) are the
// quiet run's (a), each with the same instants.
func sameInstants(t *testing.T, a, b map[string]string) {
	t.Helper()
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

// TestRun_RateEngineClockIgnoresHost: a rate sweep against the built-in
// engine runs on its clock too: each request arrives at its planned
// instant, and the engine does not step past an arrival still on its way,
// so a client that stalls before its sends (at random, and once for three
// times the client-bound limit) changes no request's instants, no pass's
// figures, no client-bound flag and no recommendation, and lateness is 0.
// With builtin.clock: wall the same stalls make a pass client-bound (the
// check that this test can fail).
func TestRun_RateEngineClockIgnoresHost(t *testing.T) {
	const sweep = "{mode: rate, levels: [10, 40], repetitions: 2, warmup: 2}"
	stalls := func(seed uint64) func() {
		var mu sync.Mutex
		rng := rand.New(rand.NewPCG(seed, 1))
		sends := 0
		return func() {
			mu.Lock()
			sends++
			d := time.Duration(rng.IntN(8)) * time.Millisecond
			if sends == 30 {
				d = 3 * pipeline.ClientDelayBound
			}
			mu.Unlock()
			time.Sleep(d)
		}
	}
	quietOut, quiet := runRate(t, 40, sweep, "{min_accepted: 0}", "{time_scale: 0.02}", nil)
	stalledOut, stalled := runRate(t, 40, sweep, "{min_accepted: 0}", "{time_scale: 0.02}", stalls(1))
	a, b := rateInstants(t, quietOut), rateInstants(t, stalledOut)
	sameInstants(t, a, b)
	for i, p := range quiet.Passes {
		q := stalled.Passes[i]
		if *p.E2ESchedP95NS != *q.E2ESchedP95NS || p.DurationNS != q.DurationNS || *p.ClientBound != *q.ClientBound || *p.ClientBound {
			t.Errorf("level %d repetition %d: E2E sched p95 %d/%d, duration %d/%d, client-bound %v/%v", p.Level, p.Repetition,
				*p.E2ESchedP95NS, *q.E2ESchedP95NS, p.DurationNS, q.DurationNS, *p.ClientBound, *q.ClientBound)
		}
		if q.LatenessP99NS == nil || *q.LatenessP99NS != 0 {
			t.Errorf("level %d: lateness p99 %v on the engine clock, want 0", q.Level, q.LatenessP99NS)
		}
	}
	if r, s := quiet.Variants[0].Series[0].Recommendation, stalled.Variants[0].Series[0].Recommendation; !reflect.DeepEqual(r, s) {
		t.Errorf("recommendation %+v quiet, %+v with a stalling client", r, s)
	}

	_, wall := runRate(t, 40, sweep, "{min_accepted: 0}", "{time_scale: 0.02, clock: wall}", stalls(1))
	bound := 0
	for _, p := range wall.Passes {
		if *p.ClientBound {
			bound++
		}
	}
	if bound == 0 {
		t.Error("builtin.clock: wall: no pass client-bound with a client stalled 150ms: the test cannot tell the clocks apart")
	}
}

// rateInstants are each request's planned arrival (from its pass's first)
// and latencies, by variant, level, repetition and document.
func rateInstants(t *testing.T, out string) map[string]string {
	t.Helper()
	reqs := requestsOf(t, out)
	first := map[string]int64{}
	pass := func(r *extractbench.Record) string { return fmt.Sprintf("%s/%d/%d", r.Variant, r.Level, r.Repetition) }
	for i := range reqs {
		if f, ok := first[pass(&reqs[i])]; !ok || reqs[i].SchedNS < f {
			first[pass(&reqs[i])] = reqs[i].SchedNS
		}
	}
	m := map[string]string{}
	for i := range reqs {
		r := &reqs[i]
		m[pass(r)+"/"+r.DocID] = fmt.Sprintf("sched +%d queue %d ttft %d e2e %d",
			r.SchedNS-first[pass(r)], r.SendNS-r.SchedNS, r.FirstTokenNS-r.SendNS, r.DoneNS-r.SendNS)
	}
	return m
}
