package dispatch

import (
	"context"
)

// Concurrent keeps exactly level requests in flight (closed loop) until
// the documents run out, ctx is canceled or the engine dies; in-flight
// requests finish. A request's t_sched is the instant its slot freed (the
// previous request's t_done, or the pass's start), so that whatever the
// client does before sending shows in client_queue rather than vanishing.
func Concurrent[R any](ctx context.Context, level int, p Pass[R]) error {
	var w workers
	concurrent(ctx, level, p, &w)
	return w.Wait()
}

func concurrent[R any](ctx context.Context, level int, p Pass[R], w *workers) {
	slots := make(chan int64, level)
	start := p.Now()
	for range level {
		slots <- start
	}
	for i := range p.Len() {
		if ctx.Err() != nil || p.Died() || w.panicked() {
			return
		}
		r, ok := p.Read(i) // while the slots are busy
		if !ok {
			return // the corpus cannot be read back: nothing more is sent
		}
		var freed int64
		select {
		case freed = <-slots:
		case <-ctx.Done():
			return
		}
		if p.Died() {
			return // the engine died while this one waited for a free slot: never sent
		}
		p.BeforeSend()
		w.Go(func() {
			free := true
			defer func() { // a worker that panicked frees its slot too: the loop never waits for it
				if free {
					slots <- p.Now()
				}
			}()
			if !p.Send(&r, freed) {
				return // every replica is dead: never sent
			}
			sendNS, done, failed := p.Times(&r)
			if done == 0 {
				done = p.Now()
			}
			p.Delay(sendNS, freed)
			if failed {
				// A failed exchange may be the engine's death: score it (which
				// waits for the evidence) before the slot frees, so that no
				// request is sent to a dead engine. The next request's t_sched
				// is still this one's t_done.
				p.Score(&r)
				free = false
				slots <- done
				p.Keep(&r)
				return
			}
			free = false
			slots <- done // free the slot before scoring: scoring is not the engine's time
			p.Score(&r)
			p.Keep(&r)
		})
	}
}
