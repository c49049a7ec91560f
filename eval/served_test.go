package eval

import (
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

func TestTransport_Served(t *testing.T) {
	tests := []struct {
		name string
		tr   extractbench.Transport
		want bool
	}{
		{"streamed answer", extractbench.Transport{HTTPStatus: 200, FinishReason: "stop"}, true},
		{"cut by the budget: served all the same", extractbench.Transport{HTTPStatus: 200, FinishReason: "length"}, true},
		{"in-process engine, no status", extractbench.Transport{}, true},
		{"429 at once", extractbench.Transport{HTTPStatus: 429, Kind: extractbench.TransportHTTPStatus, ErrorBody: `{"error":"busy"}`}, false},
		{"503", extractbench.Transport{HTTPStatus: 503, Kind: extractbench.TransportHTTPStatus}, false},
		{"error object in a 200 stream", extractbench.Transport{HTTPStatus: 200, ErrorBody: "overloaded"}, false},
		{"reset", extractbench.Transport{HTTPStatus: 200, Kind: extractbench.TransportReset}, false},
		{"refused", extractbench.Transport{Kind: extractbench.TransportRefused}, false},
	}
	for _, tt := range tests {
		if got := tt.tr.Served(); got != tt.want {
			t.Errorf("%s: Served() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestJudge_FailuresDominate: a level most of whose requests failed as
// errors (a 429 above a few in flight) is not usable, whatever the
// acceptance threshold, and says its latency is the failures'; a level with
// a few errors is judged as before.
func TestJudge_FailuresDominate(t *testing.T) {
	level := func(errors int64) Level {
		p := pass(2, 1, 300-int(errors), 0, 1)
		p.Failures.Add(extractbench.Error, errors)
		var b levelBuilder
		b.add(&p)
		return b.close()
	}
	acc := extractbench.Acceptance{MinAccepted: 0} // the threshold alone would not catch it
	for _, tt := range []struct {
		errors int64
		flag   bool
	}{{0, false}, {150, false}, {151, true}, {296, true}} {
		l := level(tt.errors)
		v := Judge(&l, -1, acc)
		if got := slices.Contains(v.Causes, CauseFailures); got != tt.flag || v.Usable == tt.flag {
			t.Errorf("%d of 300 errors: causes %v (usable %v), want failures flagged %v", tt.errors, v.Causes, v.Usable, tt.flag)
		}
		if tt.flag && !strings.Contains(v.Reason, "latency percentiles") {
			t.Errorf("%d of 300 errors: reason %q does not say the latency is the failures'", tt.errors, v.Reason)
		}
	}
}
