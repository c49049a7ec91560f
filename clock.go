package extractbench

import "time"

// Clock is the run's monotonic clock. Every eval.Timings instant is a reading
// of one Clock, so instants of different requests compare and subtract
// without wall-clock jumps (NTP, DST) leaking into latencies.
type Clock struct {
	origin time.Time
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

// OriginUnixNano returns the clock's origin as Unix nanoseconds, what a
// manifest stores to rebuild the clock with NewClockAt.
func (c Clock) OriginUnixNano() int64 { return c.origin.UnixNano() }

// Now returns the nanoseconds elapsed since the clock's origin. It is at
// least 1 so that a recorded instant is never mistaken for "never happened"
// (zero in eval.Timings).
func (c Clock) Now() int64 {
	ns := int64(time.Since(c.origin))
	if ns < 1 {
		return 1
	}
	return ns
}
