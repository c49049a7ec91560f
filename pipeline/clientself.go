package pipeline

import (
	"runtime"
	"sync"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// The client's self-check (MEASUREMENT.md section 3, as NVIDIA perf_analyzer
// warns when its own overhead passes 10%): a pass whose client could not keep
// its schedule is client_bound, and never the basis of a recommendation.
const (
	// ClientDelayBound is the highest p99 of the client's own delay (t_send −
	// the instant the request could go) a pass may have: above it the client,
	// not the engine, set the pace. Scheduling jitter on a busy machine stays
	// well below it (a few ms at p99 with 64 requests in flight on 2 cores);
	// a client that falls behind a schedule passes it within a few requests.
	ClientDelayBound = 50 * time.Millisecond
	// ClientOverheadShare is the highest median client delay a pass may have,
	// as a share of its median E2E (perf_analyzer's 10% overhead): above it
	// the client, not the engine, spaced the requests out.
	ClientOverheadShare = 0.10
	// ClientDelayFloor is a median client delay too small to flag whatever
	// the E2E: goroutine scheduling on a busy machine (2 shared cores, an
	// in-process engine) reaches a few ms, and against an engine that answers
	// in microseconds any client is "slow", and nothing is learnt.
	ClientDelayFloor = 5 * time.Millisecond
	// ClientCPUSaturated is the share of the machine's cores at which the
	// client counts as saturated; judged only when the engine runs in another
	// process (the built-in engine's CPU is the client process's too).
	ClientCPUSaturated = 0.9
)

// clientSelf is what the dispatcher measures of itself during one pass: its
// delay per request sent, its process's CPU time and the wall time.
type clientSelf struct {
	mu       sync.Mutex
	delays   []int64
	cpu0     int64
	cpuOK    bool
	wall0    time.Time
	cpuNS    int64
	wallNS   int64
	inProcEn bool // the engine runs in this process: CPU is not the client's alone
	faults   int  // requests that failed in the client itself (transport kind client)
}

func startClientSelf(inProcEngine bool) *clientSelf {
	c := &clientSelf{wall0: time.Now(), inProcEn: inProcEngine}
	c.cpu0, c.cpuOK = processCPU()
	return c
}

// sent records one request's client delay: t_send − due, where due is the
// instant the request could go.
func (c *clientSelf) sent(sendNS, dueNS int64) {
	if sendNS <= 0 || dueNS <= 0 {
		return
	}
	c.mu.Lock()
	c.delays = append(c.delays, max(sendNS-dueNS, 0))
	c.mu.Unlock()
}

func (c *clientSelf) stop() {
	c.wallNS = time.Since(c.wall0).Nanoseconds()
	if cpu, ok := processCPU(); ok && c.cpuOK {
		c.cpuNS = cpu - c.cpu0
	} else {
		c.cpuOK = false
	}
}

// Judge fills the pass's self-check columns (passrow.ClientCheck). A request that failed in the
// client itself makes the pass client_bound too: its figures miss documents
// for the client's want, not the engine's.
func (c *clientSelf) Judge(p *extractbench.Pass) {
	if c == nil {
		return
	}
	d := eval.DescribeNS(c.delays)
	if d.N > 0 {
		p.ClientDelayP99NS = ptr(int64(d.P99))
	}
	var share *float64
	if c.cpuOK && c.wallNS > 0 {
		p.ClientCPUNS = ptr(c.cpuNS)
		share = ptr(float64(c.cpuNS) / (float64(c.wallNS) * float64(runtime.NumCPU())))
		p.ClientCPUShare = share
	}
	if p.ClientDelayP99NS == nil {
		if c.faults > 0 {
			p.ClientBound = ptr(true)
		}
		return
	}
	bound := c.faults > 0 || *p.ClientDelayP99NS > delayBound(p) ||
		(p.E2EP50NS != nil && d.P50 > ClientOverheadShare*float64(*p.E2EP50NS) && d.P50 > float64(ClientDelayFloor)) ||
		(!c.inProcEn && share != nil && *share >= ClientCPUSaturated)
	p.ClientBound = &bound
}

// delayBound is the p99 client delay above which pass p is client-bound. A
// rate sweep's schedule is absolute: ClientDelayBound. Where requests wait
// for a slot (concurrency, context, batch), a request sent late only holds
// its slot for that much less of its time: a delay small beside the requests'
// own duration changes nothing the engine saw, so the bound grows to
// ClientOverheadShare of the median E2E where that is larger (2026-12-02, on
// the H200: 183 long documents sent at once took the client 61 ms, against a
// median E2E of 106 s, and the pass was filed client-bound).
func delayBound(p *extractbench.Pass) int64 {
	b := ClientDelayBound.Nanoseconds()
	if p.Mode == extractbench.ModeRate || p.E2EP50NS == nil {
		return b
	}
	return max(b, int64(ClientOverheadShare*float64(*p.E2EP50NS)))
}

func ptr[T any](v T) *T { return &v }
