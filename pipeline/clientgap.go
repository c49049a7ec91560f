package pipeline

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/extractbench/extractbench"
)

// ClientGapBound is the longest the client's own timeline may stop before
// it counts as frozen (SIGSTOP, a VM pause, a machine that stalls): a
// request in flight across such a gap was timed by a client that was not
// there, so its latency is the gap's, not the engine's. Scheduling on a
// loaded machine (stress-ng --cpu 8 on 2 cores) delays a 100 ms tick by
// tens of milliseconds, far below it.
const ClientGapBound = time.Second

// clientGapTick is how often the watch looks at the clock.
const clientGapTick = 100 * time.Millisecond

// clientGap is one stretch of the run's clock the client did not live
// through: [from, to] in the run's nanoseconds.
type clientGap struct{ from, to int64 }

func (g clientGap) String() string {
	return fmt.Sprintf("%s from %s", time.Duration(g.to-g.from).Round(time.Millisecond), time.Duration(g.from).Round(time.Millisecond))
}

// clientGaps watches the client's own timeline during a pass on the wall
// clock: a ticker notes the clock every clientGapTick, and a tick (or a
// request's end) that finds more than ClientGapBound since the last one
// records a gap. The check runs on both, so that a request answered right
// after a freeze is seen to straddle it even before the ticker wakes.
type clientGaps struct {
	now  func() int64
	mu   sync.Mutex
	last int64
	gaps []clientGap
	stop chan struct{}
	done chan struct{}
}

// watchClientGaps starts the watch on the run's clock; nil (watching
// nothing) on the engine clock, where the host's time measures nothing.
func watchClientGaps(clock extractbench.Clock) *clientGaps {
	if clock.Engine() != nil {
		return nil
	}
	g := &clientGaps{now: clock.Now, last: clock.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	go func() { // owned by g: end waits for done
		defer close(g.done)
		t := time.NewTicker(clientGapTick)
		defer t.Stop()
		for {
			select {
			case <-g.stop:
				return
			case <-t.C:
				g.check()
			}
		}
	}()
	return g
}

// check notes the clock, recording a gap when it moved more than
// ClientGapBound since the last note.
func (g *clientGaps) check() {
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if now-g.last > ClientGapBound.Nanoseconds() {
		g.gaps = append(g.gaps, clientGap{g.last, now})
	}
	g.last = max(g.last, now)
}

// straddled returns the gap a request sent at send and ended at done lived
// through, if any.
func (g *clientGaps) straddled(send, done int64) (clientGap, bool) {
	if g == nil || send <= 0 {
		return clientGap{}, false
	}
	g.check()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, gap := range g.gaps {
		if send < gap.to && done > gap.from {
			return gap, true
		}
	}
	return clientGap{}, false
}

// end stops the watch and returns the gaps it saw.
func (g *clientGaps) end() []clientGap {
	if g == nil {
		return nil
	}
	close(g.stop)
	<-g.done
	g.check()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gaps
}

// frozen takes a request that lived through a gap out of the measurement:
// kind client (the client's own failure: no class, left out of the pass,
// which is client_bound, and sent again by -resume).
func (g *clientGaps) frozen(rec *extractbench.Record) {
	if !rec.Kind.Measured() {
		return
	}
	gap, ok := g.straddled(rec.SendNS, rec.DoneNS)
	if !ok {
		return
	}
	was := "answered"
	if rec.Kind != extractbench.TransportOK {
		was = strings.TrimSpace(string(rec.Kind) + " " + rec.Detail)
	}
	rec.Detail = fmt.Sprintf("the client was frozen for %s while this request was in flight: its timing is the client's, not the engine's (it was %s)", gap, was)
	rec.Kind = extractbench.TransportClient
	rec.Failure, rec.Accepted = extractbench.None, false
}

// gapsText lists gaps for an event.
func gapsText(gaps []clientGap) string {
	parts := make([]string, len(gaps))
	for i, g := range gaps {
		parts[i] = g.String()
	}
	return strings.Join(parts, ", ")
}
