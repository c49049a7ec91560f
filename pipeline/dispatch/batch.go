package dispatch

import (
	"context"

	"github.com/extractbench/extractbench"
)

// Batches sends the documents in groups of level: one /v1/completions
// call with a list of prompts where the engine accepts it, else level
// simultaneous chat requests with a barrier (the next batch starts when
// this one is done). It returns which transport it used.
func Batches[R any](ctx context.Context, level int, p Batcher[R]) (string, error) {
	transport := extractbench.TransportCompletionsList
	for start := 0; start < p.Len() && ctx.Err() == nil && !p.Died(); start += level {
		group := make([]R, 0, level)
		for i := start; i < min(start+level, p.Len()); i++ {
			r, ok := p.Read(i)
			if !ok {
				return transport, nil // the corpus cannot be read back: nothing more is sent
			}
			group = append(group, r)
		}
		sched := p.Now()
		if transport == extractbench.TransportCompletionsList {
			ok, unsupported := p.SendList(group, sched)
			if !ok {
				return transport, nil // every replica is dead: nothing is sent
			}
			if !unsupported {
				continue
			}
			transport = extractbench.TransportBarrier
			p.Barrier()
		}
		var w workers
		for i := range group {
			w.Go(func() { p.Exchange(&group[i], sched) })
		}
		if err := w.Wait(); err != nil { // the barrier
			return transport, err
		}
	}
	return transport, nil
}
