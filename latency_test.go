package extractbench

import "testing"

// TestSpan_EdgeCases: a latency is undefined, never negative nor measured
// from the clock's origin, when an instant is missing or out of order.
func TestSpan_EdgeCases(t *testing.T) {
	tests := []struct {
		name   string
		a, b   int64
		want   int64
		wantOK bool
	}{
		{"both", 100, 250, 150, true},
		{"same instant", 100, 100, 0, true},
		{"from missing", 0, 250, 0, false},
		{"to missing", 100, 0, 0, false},
		{"out of order", 250, 100, 0, false},
		{"negative reading", -5, 100, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Span(tt.a, tt.b)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Span(%d, %d) = %d, %v; want %d, %v", tt.a, tt.b, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// TestTimings_Latencies: E2E and the client queue from the schedule are
// undefined without a scheduled instant (they once read it as 0, giving
// the done instant itself, or were taken to be the E2E from the send).
func TestTimings_Latencies(t *testing.T) {
	noSched := Timings{SendNS: 10, FirstTokenNS: 30, LastTokenNS: 50, DoneNS: 60}
	for name, f := range map[string]func() (int64, bool){
		"E2ESched": noSched.E2ESched, "TTFTSched": noSched.TTFTSched, "ClientQueue": noSched.ClientQueue,
	} {
		if ns, ok := f(); ok {
			t.Errorf("%s without t_sched = %d, want undefined", name, ns)
		}
	}
	full := noSched
	full.SchedNS = 4
	got := [][2]int64{}
	for _, f := range []func() (int64, bool){full.TTFT, full.TTFTSched, full.E2E, full.E2ESched, full.ClientQueue} {
		ns, ok := f()
		if !ok {
			t.Fatalf("a latency of a complete request is undefined: %+v", full)
		}
		got = append(got, [2]int64{ns})
	}
	want := [][2]int64{{20}, {26}, {50}, {56}, {6}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("latency %d = %d, want %d", i, got[i][0], want[i][0])
		}
	}
}

// TestRecord_TPOT_EdgeCases: TPOT is undefined without a first token, with
// the last before the first, with no time between them, or with no step.
func TestRecord_TPOT_EdgeCases(t *testing.T) {
	rec := func(first, last int64, tokens int) *Record {
		r := &Record{}
		r.FirstTokenNS, r.LastTokenNS, r.CompletionTokens = first, last, tokens
		return r
	}
	tests := []struct {
		name   string
		r      *Record
		want   int64
		wantOK bool
	}{
		{"defined", rec(100, 400, 4), 100, true},
		{"no first token", rec(0, 400, 4), 0, false},
		{"last before first", rec(400, 100, 4), 0, false},
		{"no time between", rec(100, 100, 4), 0, false},
		{"one token", rec(100, 400, 1), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.r.TPOT()
			if got != tt.want || ok != tt.wantOK || got < 0 {
				t.Errorf("TPOT = %d, %v; want %d, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// TestSpanSQL is the condition and value results' pass percentiles use.
func TestSpanSQL(t *testing.T) {
	where, value := SpanSQL(ColSched, ColDone)
	if where != "sched_ns > 0 AND done_ns > 0 AND done_ns >= sched_ns" || value != "done_ns - sched_ns" {
		t.Errorf("SpanSQL = %q, %q", where, value)
	}
}
