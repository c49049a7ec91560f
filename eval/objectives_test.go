package eval

import (
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

// TestAcceptance_OnTime: a request is on time when it meets every
// objective set, TTFT and E2E counted from its scheduled instant; with no
// objective, every request is.
func TestAcceptance_OnTime(t *testing.T) {
	ms := int64(1e6)
	rec := func(sched, send, first, last, done int64, tokens int) *extractbench.Record {
		return &extractbench.Record{Response: extractbench.Response{Timings: extractbench.Timings{SchedNS: sched, SendNS: send, FirstTokenNS: first, LastTokenNS: last, DoneNS: done}, CompletionTokens: tokens}}
	}
	acc := extractbench.Acceptance{TTFTP99MS: 100, TPOTP99MS: 10, E2EP95MS: 500}
	for _, tc := range []struct {
		name string
		r    *extractbench.Record
		acc  extractbench.Acceptance
		want bool
	}{
		{"every objective met", rec(1, 1, 50*ms, 250*ms, 260*ms, 21), acc, true},
		{"TTFT late by the client's queue", rec(1, 80*ms, 150*ms, 300*ms, 310*ms, 21), acc, false},
		{"TPOT too slow", rec(1, 1, 50*ms, 450*ms, 460*ms, 21), acc, false},
		{"E2E from schedule too long", rec(1, 1, 50*ms, 250*ms, 600*ms, 21), acc, false},
		{"no first token under a TTFT objective", rec(1, 1, 0, 0, 10*ms, 0), acc, false},
		{"no objective", rec(1, 1, 0, 0, 10*ms, 0), extractbench.Acceptance{}, true},
	} {
		if got := tc.acc.OnTime(tc.r); got != tc.want {
			t.Errorf("%s: on time = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestJudge_ObjectivesAndClientBound: a level breaks on an objective's
// percentile, on goodput below 99% of the baseline's accepted share, and on
// a client-bound repetition; the rate walk starts after the sync baseline.
func TestJudge_ObjectivesAndClientBound(t *testing.T) {
	ms := int64(1e6)
	yes := true
	pass := func(level int, phase string, ttft99, onTimeAccepted int64, bound bool) extractbench.Pass {
		b := bound
		return extractbench.Pass{Variant: "v", Mode: extractbench.ModeRate, Level: level, Repetition: 1, Phase: phase, Status: extractbench.PassComplete,
			Docs: 100, Accepted: 100, OnTime: &onTimeAccepted, OnTimeAccepted: &onTimeAccepted,
			TTFTSchedP99NS: &ttft99, ClientBound: &b}
	}
	acc := extractbench.Acceptance{MinAccepted: 0.9, TTFTP99MS: 200}
	passes := []extractbench.Pass{
		pass(extractbench.SyncLevel, extractbench.PhaseBaseline, 50*ms, 100, false),
		pass(10, extractbench.PhaseSweep, 80*ms, 100, false),
		pass(20, extractbench.PhaseSweep, 150*ms, 100, false),
		pass(40, extractbench.PhaseSweep, 190*ms, 90, false), // objective's percentile met, but 10% late: goodput breaks
		pass(80, extractbench.PhaseSweep, 900*ms, 20, false),
	}
	s := AggregateLevels(passes, acc, Planned{})[0]
	r := s.Recommendation
	if r.HighestUsable != 20 || r.Recommended != 10 || r.FirstBroken != 40 || !slices.Equal(r.BrokeBy, []Cause{CauseLatency}) {
		t.Errorf("recommendation %+v, want highest usable 20/s, recommended 10/s, broken at 40/s by latency", r)
	}
	if !strings.Contains(r.Why, "rate 10/s, one step below 20/s") || !strings.Contains(r.BrokeReason, "accepted on time 90.0%") {
		t.Errorf("why: %s", r.Why)
	}
	if v := s.Level(80).Verdict; !strings.Contains(v.Reason, "p99 TTFT from scheduled 900ms > objective 200ms") {
		t.Errorf("80/s verdict: %s", v.Reason)
	}

	passes[2].ClientBound = &yes
	s = AggregateLevels(passes, acc, Planned{})[0]
	if r := s.Recommendation; r.FirstBroken != 20 || !slices.Contains(r.BrokeBy, CauseClient) || r.Recommended != 10 {
		t.Errorf("a client-bound 20/s: recommendation %+v, want 10/s, broken at 20/s by client_bound", r)
	}
}
