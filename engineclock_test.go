package extractbench

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestLockstep_RoundTrip(t *testing.T) {
	for _, l := range []Lockstep{
		{Pass: "run.bf16.concurrency.8.2", N: 300, Level: 8, Seq: 17},
		{Pass: "run.bf16.rate.4.1", N: 300, Seq: 17, At: 5_000, Next: 7_500},
	} {
		got, ok := ParseLockstep(l.String())
		if !ok || got != l {
			t.Errorf("ParseLockstep(%q) = %+v, %v", l.String(), got, ok)
		}
	}
	for _, bad := range []string{"", "pass=x", "pass=x; n=0; level=1", "pass=; n=3; level=1", "pass=x; n=three; level=1", "junk",
		"pass=x; n=3; level=0; at=0", "pass=x; n=3; level=-1; at=5", "pass=x; n=3; level=0; at=five"} {
		if _, ok := ParseLockstep(bad); ok {
			t.Errorf("ParseLockstep(%q) accepted", bad)
		}
	}
}

func TestEngineInstants_RoundTrip(t *testing.T) {
	in := EngineInstants{Arrived: 10, Done: 90, First: []int64{20, 0}, Last: []int64{80, 0}}
	got, ok := ParseEngineInstants(in.String())
	if !ok || got.Arrived != 10 || got.Done != 90 || !slices.Equal(got.First, in.First) || !slices.Equal(got.Last, in.Last) {
		t.Errorf("ParseEngineInstants(%q) = %+v, %v", in.String(), got, ok)
	}
	for _, bad := range []string{"", "arrived=5; first=; last=; done=4", "arrived=0; first=; last=; done=4", "arrived=1; first=1,2; last=3; done=4", "arrived=x"} {
		if _, ok := ParseEngineInstants(bad); ok {
			t.Errorf("ParseEngineInstants(%q) accepted", bad)
		}
	}
}

func FuzzParseEngineInstants(f *testing.F) {
	f.Add("arrived=10; first=20,0; last=80,0; done=90")
	f.Add("arrived=1; first=; last=; done=1")
	f.Fuzz(func(t *testing.T, s string) {
		in, ok := ParseEngineInstants(s)
		if !ok {
			return
		}
		if in.Arrived <= 0 || in.Done < in.Arrived || len(in.First) != len(in.Last) {
			t.Fatalf("accepted %q as %+v", s, in)
		}
	})
}

// TestClock_Engine: a clock read from an engine clock moves only when the
// engine advances it, and starts at the wall clock's reading (a resumed
// run's instants follow its first process's).
func TestClock_Engine(t *testing.T) {
	wall := NewClockAt(time.Now().Add(-time.Hour).UnixNano())
	c := wall.WithEngineClock()
	start := c.Now()
	if start < int64(time.Hour) {
		t.Errorf("engine clock starts at %d, before the wall clock's hour", start)
	}
	time.Sleep(2 * time.Millisecond)
	if c.Now() != start {
		t.Error("the engine clock moved on its own")
	}
	c.Engine().Advance(5 * time.Millisecond)
	if got := c.Now() - start; got != int64(5*time.Millisecond) {
		t.Errorf("advanced 5ms, moved %d ns", got)
	}
	if wall.Engine() != nil {
		t.Error("the wall clock has an engine clock")
	}
}

// TestClock_EngineSleep: Sleep on an engine clock returns once the engine
// has moved it to the instant, not before, and false when ctx ends first.
func TestClock_EngineSleep(t *testing.T) {
	c := NewClock().WithEngineClock()
	at := c.Now() + int64(10*time.Millisecond)
	woke := make(chan bool)
	go func() { woke <- c.Sleep(context.Background(), at) }()
	c.Engine().Advance(5 * time.Millisecond)
	select {
	case <-woke:
		t.Fatal("Sleep returned before the engine clock reached its instant")
	case <-time.After(20 * time.Millisecond):
	}
	c.Engine().Advance(5 * time.Millisecond)
	if !<-woke {
		t.Error("Sleep reported false once the clock reached its instant")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if c.Sleep(ctx, at+1) {
		t.Error("Sleep reported true with its context ended and the clock short of the instant")
	}
}
