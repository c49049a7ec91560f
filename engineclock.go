package extractbench

import (
	"fmt"
	"strconv"
	"strings"
)

// The wire contract between the client and a simulated engine that runs on
// an engine clock (Clock.WithEngineClock; engines/builtin/lockstep.go says
// how the engine keeps it): the client names each request's pass (its
// place in a closed loop, or its planned arrival in a rate pass), and the
// engine answers with the request's instants on its clock.

// LockstepHeader names a request's pass:
// "pass=ID; n=N; level=L; seq=S; at=NS; next=NS".
const LockstepHeader = "X-Extractbench-Lockstep"

// EngineClockHeader carries an answer's instants on the engine clock, as a
// trailer after a stream or body, or as a header on an error:
// "arrived=NS; first=NS,NS; last=NS,NS; done=NS" (first and last per
// choice, 0 where the choice produced no token).
const EngineClockHeader = "X-Extractbench-Engine-Clock"

// Lockstep is a request's place in its pass: a closed loop (Level) or a
// rate pass (At and Next).
type Lockstep struct {
	Pass  string
	N     int // requests the pass sends
	Level int // requests it keeps in flight; 0 in a rate pass
	// Seq is the request's place in the pass's send order: requests that
	// arrive at one instant of the engine clock are queued in it, not in
	// the order the host happened to deliver them.
	Seq int
	// At is a rate pass's planned arrival of this request and Next that of
	// the one after it (0 for the last), on the engine clock: the engine
	// takes the request in at At, and does not step past Next until the
	// next request has come.
	At, Next int64
}

// Rate reports whether l is a request of a rate pass.
func (l Lockstep) Rate() bool { return l.Level == 0 && l.At > 0 }

// String is the LockstepHeader value.
func (l Lockstep) String() string {
	return fmt.Sprintf("pass=%s; n=%d; level=%d; seq=%d; at=%d; next=%d", l.Pass, l.N, l.Level, l.Seq, l.At, l.Next)
}

// ParseLockstep reads a LockstepHeader value; ok false when it is absent or malformed.
func ParseLockstep(v string) (l Lockstep, ok bool) {
	err := eachField(v, func(k, val string) (err error) {
		switch k {
		case "pass":
			l.Pass = val
		case "n":
			l.N, err = strconv.Atoi(val)
		case "level":
			l.Level, err = strconv.Atoi(val)
		case "seq":
			l.Seq, err = strconv.Atoi(val)
		case "at":
			l.At, err = strconv.ParseInt(val, 10, 64)
		case "next":
			l.Next, err = strconv.ParseInt(val, 10, 64)
		}
		return err
	})
	if err != nil {
		return Lockstep{}, false
	}
	return l, l.Pass != "" && l.N > 0 && (l.Level > 0 || l.Rate())
}

// eachField calls f with each "key=value" of a header value such as
// "a=1; b=2" (both headers of this contract are written so); the first
// error or a part without "=" stops it, and an empty v is an error.
func eachField(v string, f func(k, val string) error) error {
	if v == "" {
		return fmt.Errorf("empty")
	}
	for _, part := range strings.Split(v, ";") {
		k, val, found := strings.Cut(strings.TrimSpace(part), "=")
		if !found {
			return fmt.Errorf("%q is not key=value", part)
		}
		if err := f(k, val); err != nil {
			return err
		}
	}
	return nil
}

// EngineInstants are one answer's instants on the engine clock.
type EngineInstants struct {
	Arrived, Done int64
	First, Last   []int64 // per choice
}

// String is the EngineClockHeader value.
func (in EngineInstants) String() string {
	join := func(v []int64) string {
		s := make([]string, len(v))
		for i, ns := range v {
			s[i] = strconv.FormatInt(ns, 10)
		}
		return strings.Join(s, ",")
	}
	return fmt.Sprintf("arrived=%d; first=%s; last=%s; done=%d", in.Arrived, join(in.First), join(in.Last), in.Done)
}

// ParseEngineInstants reads an EngineClockHeader value.
func ParseEngineInstants(v string) (in EngineInstants, ok bool) {
	list := func(s string) ([]int64, error) {
		if s == "" {
			return nil, nil
		}
		var out []int64
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return out, nil
	}
	err := eachField(v, func(k, val string) (err error) {
		switch k {
		case "arrived":
			in.Arrived, err = strconv.ParseInt(val, 10, 64)
		case "done":
			in.Done, err = strconv.ParseInt(val, 10, 64)
		case "first":
			in.First, err = list(val)
		case "last":
			in.Last, err = list(val)
		}
		return err
	})
	if err != nil {
		return EngineInstants{}, false
	}
	return in, in.Arrived > 0 && in.Done >= in.Arrived && len(in.First) == len(in.Last)
}
