// Package dispatch decides when each request of a pass goes, one file per
// sweep mode as k6's executors: concurrency keeps exactly N requests in
// flight (closed loop), rate sends at planned arrivals (open loop), batch
// sends groups of B, context runs the concurrency dispatcher at a context
// sweep's fixed concurrency. What a request is (reading the document back,
// the client, scoring, the store) is the run's: it implements Pass.
//
// Every request goroutine has an owner that waits for it (conc.WaitGroup),
// and a panic in one stops the pass's dispatch and comes back as an error,
// with the records already kept, instead of killing the process with
// nothing recorded.
package dispatch

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/sourcegraph/conc"

	"github.com/extractbench/extractbench"
)

// Pass is the run's side of one pass. R is one request: the document read
// back, then its answer and record; dispatch holds it, the run fills it.
type Pass[R any] interface {
	// Len is how many documents the pass sends.
	Len() int
	// Read reads the i-th document back, before it is due; false when the
	// corpus cannot be read back: nothing more is sent.
	Read(i int) (R, bool)
	// Died reports whether the engine can take no more work.
	Died() bool
	// Now is the run's clock (nanoseconds).
	Now() int64
	// Plan places a rate pass's schedule (its arrival offsets) on the
	// run's clock and returns the planned instants; Sleep waits until Now
	// reads at least ns, false when ctx ended the wait.
	Plan(offsets []int64) []int64
	Sleep(ctx context.Context, ns int64) bool
	// BeforeSend runs just before a request is handed to the client.
	BeforeSend()
	// Send sends r's request, scheduled at sched (its t_sched); false when
	// every replica is dead and nothing was sent.
	Send(r *R, sched int64) bool
	// Times are r's t_send and t_done as the client measured them (0: not
	// reached), and whether its exchange failed.
	Times(r *R) (sendNS, doneNS int64, failed bool)
	// Score judges r's answer (for a failure, waiting for the evidence of
	// the engine's death); Keep stores its record.
	Score(r *R)
	Keep(r *R)
	// Delay records a request's client delay: t_send − due, the instant it
	// could go.
	Delay(sendNS, dueNS int64)
}

// Batcher is a Pass that also sends batches (mode batch).
type Batcher[R any] interface {
	Pass[R]
	// SendList sends group as one /v1/completions call with a list of
	// prompts, scheduled at sched, and scores and keeps each answer.
	// unsupported: the engine takes no list, and nothing was kept; ok
	// false: every replica is dead and nothing was sent.
	SendList(group []R, sched int64) (ok, unsupported bool)
	// Barrier records the decision to send each batch as simultaneous chat
	// requests instead, once the engine refused a list.
	Barrier()
	// Exchange sends one request of a barrier batch and scores and keeps
	// it; false when every replica is dead and nothing was sent.
	Exchange(r *R, sched int64) bool
}

// Run sends a pass's documents the way its sweep's mode says, at level:
// batches of level, arrivals at level requests per second after the
// synchronous baseline (extractbench.SyncLevel: one at a time), or level
// (a context sweep: sweep.concurrency) in flight. seed and rep seed a rate
// pass's schedule. It returns the batch transport ("" in other modes) and
// the panic of a request's worker, if one panicked.
func Run[R any](ctx context.Context, sw extractbench.Sweep, seed *int, level, rep int, p Batcher[R]) (transport string, err error) {
	switch {
	case sw.Mode == extractbench.ModeBatch:
		return Batches(ctx, level, p)
	case sw.Mode == extractbench.ModeRate && level == extractbench.SyncLevel:
		return "", Concurrent(ctx, 1, p) // the synchronous baseline
	case sw.Mode == extractbench.ModeRate:
		return "", Rate(ctx, sw, ArrivalSeed(seed, level, rep), float64(level), p)
	case sw.Mode == extractbench.ModeContext:
		return "", Context(ctx, sw, p)
	default:
		return "", Concurrent(ctx, level, p)
	}
}

// workers are one pass's request goroutines, owned by the dispatcher that
// starts them and waited for by it (conc.WaitGroup). A worker that panics
// sets stopped, so that the dispatcher sends nothing more; Wait returns the
// panic as an error.
//
// A worker that finished its request waits for the next one on idle, so
// that a pass of thousands of requests runs on about as many goroutines as
// it has in flight: a goroutine per request grew a new stack through the
// client's calls every time (2% of a run's CPU). Wait closes idle.
type workers struct {
	wg      conc.WaitGroup
	stopped atomic.Bool
	idle    chan func() // unbuffered: a send succeeds only to a waiting worker
}

// Go runs f on a waiting worker, or on a new one when none waits.
func (w *workers) Go(f func()) {
	if w.idle == nil {
		w.idle = make(chan func())
	}
	select {
	case w.idle <- f:
		return
	default:
	}
	w.wg.Go(func() {
		w.run(f)
		for next := range w.idle {
			w.run(next)
		}
	})
}

// run runs one request's f, marking the workers stopped if it panics (conc
// recovers the panic once the worker returns).
func (w *workers) run(f func()) {
	finished := false
	defer func() {
		if !finished {
			w.stopped.Store(true)
		}
	}()
	f()
	finished = true
}

// panicked reports whether a worker has panicked so far.
func (w *workers) panicked() bool { return w.stopped.Load() }

// Wait waits for every worker and returns the first one's panic, if any.
func (w *workers) Wait() error {
	if w.idle != nil {
		close(w.idle) // the waiting workers return
	}
	if r := w.wg.WaitAndRecover(); r != nil {
		return fmt.Errorf("a request's worker panicked: %w", r.AsError())
	}
	return nil
}
