package process

import (
	"context"
	"errors"
	"testing"
	"time"
)

// loadTimeRead is the load time WaitReady's schedule reads for an engine
// that becomes ready at ready: the instant of the first health check at or
// after it (checks themselves taking no time).
func loadTimeRead(ready time.Duration) time.Duration {
	t := time.Duration(0)
	for t < ready {
		t += readyPollInterval(t)
	}
	return t
}

// TestReadyPoll_LoadTimeError is the load-time item of the llama.cpp issue:
// polling /health every 250 ms read 752 ms for a llama-server ready in
// about 0.6 s. The schedule polls a tenth of the elapsed time apart (10 ms
// at first, 250 ms at most), so the figure is late by at most 10% past the
// first 100 ms, and by at most 10 ms before.
func TestReadyPoll_LoadTimeError(t *testing.T) {
	for ready := time.Millisecond; ready <= 10*time.Minute; ready = ready*11/10 + time.Millisecond {
		got := loadTimeRead(ready)
		late := got - ready
		bound := max(ready/10, readyPollMin)
		if late < 0 || late > bound {
			t.Fatalf("ready at %s: read %s, %s late; want at most %s", ready, got, late, bound)
		}
	}
	if got := loadTimeRead(600 * time.Millisecond); got > 660*time.Millisecond {
		t.Errorf("ready at 600ms: read %s, want within 10%%", got)
	}
	for _, e := range []time.Duration{0, time.Second, time.Hour} {
		if iv := readyPollInterval(e); iv < readyPollMin || iv > readyPollMax {
			t.Errorf("interval after %s = %s, want within [%s, %s]: no busy loop, no blind second", e, iv, readyPollMin, readyPollMax)
		}
	}
}

// TestWaitReady_PollsUntilReady: WaitReady returns at the first health
// check that succeeds, after as many checks as it took.
func TestWaitReady_PollsUntilReady(t *testing.T) {
	p := &Process{done: make(chan struct{})}
	calls := 0
	d, err := p.WaitReady(context.Background(), time.Minute, func(context.Context) error {
		calls++
		if calls < 4 {
			return errors.New("503 loading model")
		}
		return nil
	})
	if err != nil || calls != 4 || d <= 0 {
		t.Fatalf("WaitReady = %s, %v after %d checks; want the 4th check's instant", d, err, calls)
	}
}
