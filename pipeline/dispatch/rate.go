package dispatch

import (
	"context"

	"github.com/extractbench/extractbench"
)

// Rate sends the documents at their planned arrivals (open loop), rate
// requests per second: the schedule is precomputed from seed (Arrivals)
// and placed on the run's clock (Pass.Plan), and each request's t_sched is
// its planned instant, whether or not the client managed to send it then.
// The loop waits for each instant on the run's clock (Pass.Sleep): on an
// engine clock, until the simulated engine has got there. With
// sweep.max_in_flight, a request that finds every slot taken waits for
// one, keeping its planned t_sched, so the wait shows as client queue.
func Rate[R any](ctx context.Context, sw extractbench.Sweep, seed uint64, rate float64, p Pass[R]) error {
	var w workers
	rateLoop(ctx, sw, Arrivals(seed, rate, p.Len(), sw.Arrival, sw.Burstiness), p, &w)
	return w.Wait()
}

func rateLoop[R any](ctx context.Context, sw extractbench.Sweep, offsets []int64, p Pass[R], w *workers) {
	var slots chan struct{}
	if sw.MaxInFlight > 0 {
		slots = make(chan struct{}, sw.MaxInFlight)
	}
	planned := p.Plan(offsets)
	// heldUntil is when the last wait for a slot ended: this loop was held
	// there, so a later request planned before it was late because the
	// engine was saturated, not because the client was slow.
	var heldUntil int64
	for i := range p.Len() {
		r, ok := p.Read(i) // before its instant, not after
		if !ok {
			return // the corpus cannot be read back: nothing more is sent
		}
		sched := planned[i]
		if !p.Sleep(ctx, sched) {
			return
		}
		if ctx.Err() != nil || p.Died() || w.panicked() {
			return
		}
		p.BeforeSend()
		due := max(sched, heldUntil)
		if slots != nil {
			select {
			case slots <- struct{}{}:
			default: // every slot is taken: wait, and count the wait as the engine's, not the client's
				select {
				case slots <- struct{}{}:
					heldUntil = p.Now()
					due = max(sched, heldUntil)
				case <-ctx.Done():
					return
				}
			}
		}
		held := slots // this request's slot, freed once it is sent
		w.Go(func() {
			defer func() { // a worker that panicked while sending frees its slot too
				if held != nil {
					<-held
				}
			}()
			sent := p.Send(&r, sched)
			if held != nil {
				<-held
				held = nil
			}
			if !sent {
				return // every replica is dead: never sent
			}
			sendNS, _, _ := p.Times(&r)
			p.Delay(sendNS, due)
			p.Score(&r)
			p.Keep(&r)
		})
	}
}
