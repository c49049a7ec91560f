package builtin

import "testing"

// TestProfile_WarmingFactor: a warming engine's step takes WarmupSlowdown
// times as long before its first request is done, falling linearly to 1
// at WarmupRequests; an engine without the option is warm from the start.
func TestProfile_WarmingFactor(t *testing.T) {
	p := Profile{WarmupRequests: 10}
	for _, tt := range []struct {
		finished int64
		want     float64
	}{{0, WarmupSlowdown}, {5, 1 + (WarmupSlowdown-1)/2}, {10, 1}, {50, 1}} {
		if got := p.warmingFactor(tt.finished); got != tt.want {
			t.Errorf("after %d requests: factor %v, want %v", tt.finished, got, tt.want)
		}
	}
	if got := (Profile{}).warmingFactor(0); got != 1 {
		t.Errorf("no warm-up: factor %v, want 1", got)
	}
	q, err := LookupProfile("sim-8b")
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	q.WarmupRequests = -1
	if err := q.Validate(); err == nil {
		t.Error("a negative warm-up is accepted")
	}
}
