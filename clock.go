package extractbench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Clock is the run's monotonic clock. Every Timings instant is a reading
// of one Clock, so instants of different requests compare and subtract
// without wall-clock jumps (NTP, DST) leaking into latencies.
//
// A Clock is either the wall clock or, against a simulated engine, that
// engine's own clock (WithEngineClock): a simulation's latencies are what it
// models, so that the host's scheduler (a loaded machine, a stalled client)
// moves none of its figures (MEASUREMENT.md section 3, "A simulator is judged
// on its own clock").
type Clock struct {
	origin time.Time
	engine *EngineClock // nil: the wall clock
}

// NewClock returns a Clock whose origin is now.
func NewClock() Clock {
	// time.Now carries Go's monotonic reading; time.Since uses it, so Now
	// never goes backwards even if the wall clock is stepped.
	return Clock{origin: time.Now()}
}

// NewClockAt returns a Clock whose origin is the wall-clock instant
// originUnixNano, so that a resumed run continues its first process's
// timeline. The origin is placed once from the wall clock; readings after
// that are monotonic.
func NewClockAt(originUnixNano int64) Clock {
	now := time.Now() // keeps the monotonic reading through Add
	return Clock{origin: now.Add(-time.Duration(now.UnixNano() - originUnixNano))}
}

// WithEngineClock returns c read from a new engine clock: it starts at c's
// reading now (so that a resumed run's instants still follow its first
// process's) and from then on moves only when an engine advances it.
func (c Clock) WithEngineClock() Clock {
	e := &EngineClock{}
	e.ns.Store(c.wallNow())
	c.engine = e
	return c
}

// Engine returns the engine clock c reads, or nil for the wall clock.
func (c Clock) Engine() *EngineClock { return c.engine }

// OriginUnixNano returns the clock's origin as Unix nanoseconds, what a
// manifest stores to rebuild the clock with NewClockAt.
func (c Clock) OriginUnixNano() int64 { return c.origin.UnixNano() }

// Now returns the nanoseconds elapsed since the clock's origin (on the
// engine clock, the time it has modelled). It is at least 1 so that a
// recorded instant is never mistaken for "never happened" (zero in
// Timings).
func (c Clock) Now() int64 {
	if c.engine != nil {
		return max(c.engine.Now(), 1)
	}
	return c.wallNow()
}

// Sleep waits until Now reads at least ns: on the wall clock for the time
// between, on an engine clock until the engine has moved it there. It
// returns false when ctx ended the wait.
func (c Clock) Sleep(ctx context.Context, ns int64) bool {
	if c.engine != nil {
		return c.engine.Until(ctx, ns)
	}
	return SleepFor(ctx, time.Duration(ns-c.Now()))
}

// SleepFor waits d on the wall clock. It returns false when ctx ended the
// wait (at once when d is not positive and ctx is done).
func SleepFor(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (c Clock) wallNow() int64 {
	ns := int64(time.Since(c.origin))
	if ns < 1 {
		return 1
	}
	return ns
}

// EngineClock is a simulated engine's clock: nanoseconds that only the
// engine's modelled work advances. Idle time, the client's own time and a
// host that stalls both are not on it.
type EngineClock struct {
	ns atomic.Int64
	mu sync.Mutex
	// moved is closed when the clock next moves (nil: nobody waits).
	moved chan struct{}
}

// Now returns the clock's reading.
func (e *EngineClock) Now() int64 { return e.ns.Load() }

// Advance moves the clock on by d (nothing for d ≤ 0) and returns its new
// reading.
func (e *EngineClock) Advance(d time.Duration) int64 {
	if d <= 0 {
		return e.ns.Load()
	}
	now := e.ns.Add(int64(d))
	e.mu.Lock()
	if e.moved != nil {
		close(e.moved)
		e.moved = nil
	}
	e.mu.Unlock()
	return now
}

// Until waits until the clock reads at least ns; false when ctx ended the
// wait.
func (e *EngineClock) Until(ctx context.Context, ns int64) bool {
	for {
		e.mu.Lock()
		if e.ns.Load() >= ns {
			e.mu.Unlock()
			return ctx.Err() == nil
		}
		if e.moved == nil {
			e.moved = make(chan struct{})
		}
		moved := e.moved
		e.mu.Unlock()
		select {
		case <-moved:
		case <-ctx.Done():
			return false
		}
	}
}
