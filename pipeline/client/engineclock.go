package client

import (
	"context"
	"net/http"

	"github.com/extractbench/extractbench"
)

// A run on an engine clock (extractbench.Clock.WithEngineClock) records
// each request's instants as the simulated engine modelled them, not as
// this process read them: a loaded host or a stalled client then moves
// none of the figures. The client's part is to say which pass each request
// belongs to, and in a rate pass its planned arrival (WithLockstep), and to
// take the engine's instants from its answer (Config.EngineClock).

type lockstepKey struct{}

// WithLockstep returns ctx carrying l, sent with the request made under it
// as extractbench.LockstepHeader.
func WithLockstep(ctx context.Context, l extractbench.Lockstep) context.Context {
	return context.WithValue(ctx, lockstepKey{}, l)
}

func lockstepOf(ctx context.Context) (extractbench.Lockstep, bool) {
	l, ok := ctx.Value(lockstepKey{}).(extractbench.Lockstep)
	return l, ok && l.Pass != ""
}

// setLockstep adds ctx's lockstep header to req, if any.
func setLockstep(ctx context.Context, req *http.Request) {
	if l, ok := lockstepOf(ctx); ok {
		req.Header.Set(extractbench.LockstepHeader, l.String())
	}
}

// useEngineClock replaces x's instants by the engine's, found in the
// answer's trailer (a stream, read to its end) or header (an error or a
// whole body). An answer without them (a connection that dropped) keeps
// the client's readings, which on an engine clock are that clock's too.
func (x *exchangeResult) useEngineClock(res *http.Response) {
	v := res.Trailer.Get(extractbench.EngineClockHeader)
	if v == "" {
		v = res.Header.Get(extractbench.EngineClockHeader)
	}
	in, ok := extractbench.ParseEngineInstants(v)
	if !ok {
		return
	}
	t := &x.timings
	t.SendNS, t.DoneNS = in.Arrived, in.Done
	t.FirstByteNS = in.Done
	for i := range min(len(in.First), len(x.acc.choices)) {
		ch := &x.acc.choices[i]
		ch.firstTokenNS, ch.lastTokenNS = in.First[i], in.Last[i]
		if in.First[i] > 0 {
			t.FirstByteNS = min(t.FirstByteNS, in.First[i])
		}
	}
}
