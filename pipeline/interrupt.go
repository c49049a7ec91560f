package pipeline

import (
	"context"
	"sync"
	"time"
)

// interrupts turns the run's two signals into what happens to requests in
// flight. The first (ctx done: SIGINT or SIGTERM) stops dispatching at once
// and gives the requests in flight the protocol's grace period
// (interrupt_grace); when it ends, or at the second signal (Options.Abandon),
// they are cancelled: the client records them as interrupted, a transport
// kind that is neither a measurement nor a failure of the engine, and
// -resume sends them again.
type interrupts struct {
	reqs   context.Context // the requests' context: outlives ctx by the grace period
	cancel context.CancelFunc
	mu     sync.Mutex
	n      int
	pass   *passSends // the pass being dispatched; nil between passes
	stop   chan struct{}
	done   sync.WaitGroup
}

// passSends counts the requests a pass sent, to kick its sampler when the
// first and the last of its todo are sent (telemetry.Sampler.Kick).
type passSends struct {
	todo, sent int
	kick       func()
}

// watchInterrupts starts the watcher; stop it with (*interrupts).close.
func (rs *runState) watchInterrupts(ctx context.Context) *interrupts {
	in := &interrupts{stop: make(chan struct{})}
	in.reqs, in.cancel = context.WithCancel(context.WithoutCancel(ctx))
	grace := rs.proto.Grace()
	in.done.Go(func() {
		select {
		case <-ctx.Done():
		case <-in.stop:
			return
		}
		rs.logf("interrupt: dispatch stopped; %d request(s) in flight, waiting up to %s for them (interrupt_grace); a second signal abandons them now",
			in.count(), grace)
		t := time.NewTimer(grace)
		defer t.Stop()
		why := "the grace period ended"
		select {
		case <-t.C:
		case <-rs.opts.Abandon:
			why = "second signal"
		case <-in.stop:
			return
		}
		if n := in.count(); n > 0 {
			rs.logf("interrupt: %s: cancelling %d request(s) in flight; they are recorded as interrupted and sent again by -resume", why, n)
		}
		in.cancel()
	})
	return in
}

// begin and end count a request (or a batch of n prompts) in flight.
func (in *interrupts) begin(n int) {
	in.mu.Lock()
	in.n += n
	var kick func()
	if p := in.pass; p != nil {
		before := p.sent
		p.sent += n
		if before == 0 || (before < p.todo && p.sent >= p.todo) {
			kick = p.kick
		}
	}
	in.mu.Unlock()
	if kick != nil {
		kick()
	}
}

func (in *interrupts) end(n int) { in.mu.Lock(); in.n -= n; in.mu.Unlock() }

// watchPass calls kick when the pass's first request is sent and when the
// last of its todo requests is; nil kick stops watching.
func (in *interrupts) watchPass(todo int, kick func()) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.pass = nil
	if kick != nil {
		in.pass = &passSends{todo: todo, kick: kick}
	}
}

func (in *interrupts) count() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.n
}

// close stops the watcher, waits for it and releases the requests' context.
func (in *interrupts) close() {
	close(in.stop)
	in.done.Wait()
	in.cancel()
}
