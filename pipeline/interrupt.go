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
	stop   chan struct{}
	done   sync.WaitGroup
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
func (in *interrupts) begin(n int) { in.mu.Lock(); in.n += n; in.mu.Unlock() }
func (in *interrupts) end(n int)   { in.mu.Lock(); in.n -= n; in.mu.Unlock() }

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
