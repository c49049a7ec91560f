package dispatch

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
)

// scriptedPass is a Pass on a fake clock that records what the dispatcher
// did. Now advances by step at every call, so that with a step longer than
// the schedule every planned arrival is already past and no timer waits;
// a request takes no time, but the first ones are held at a gate until
// gate of them are in flight together, which proves (by counts, not
// durations) that the dispatcher lets that many go at once: one that lets
// fewer never opens the gate, and the watchdog ends it as a failure instead
// of a hang.
type scriptedPass struct {
	n       int
	step    int64
	gate    int // 0: no gate
	panicAt int // the document whose worker panics; -1: none
	// onBeforeSend runs at the k-th BeforeSend (1-based); onKeep when
	// document i is kept.
	onBeforeSend func(k int)
	onKeep       func(i int)

	clock    atomic.Int64
	inFlight atomic.Int64
	most     atomic.Int64
	open     chan struct{}
	openOnce sync.Once
	watchdog context.Context

	mu         sync.Mutex
	reads      []int
	befores    int
	sched      map[int]int64   // document → the t_sched it was sent with
	sends      map[int]int     // document → how many times it was sent
	sendAt     map[int]int64   // document → its t_send, as kept
	done       map[int]int64   // document → its t_done, as kept
	due        map[int64]int64 // t_send → the due instant Delay got
	kept       []int
	batchCalls int
}

func newScripted(t *testing.T, n int, step int64) *scriptedPass {
	t.Helper()
	watchdog, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return &scriptedPass{n: n, step: step, panicAt: -1, open: make(chan struct{}), watchdog: watchdog,
		sched: map[int]int64{}, sends: map[int]int{}, sendAt: map[int]int64{}, done: map[int]int64{}, due: map[int64]int64{}}
}

func (f *scriptedPass) Len() int   { return f.n }
func (f *scriptedPass) Died() bool { return false }
func (f *scriptedPass) Now() int64 { return f.clock.Add(f.step) }

func (f *scriptedPass) Plan(offsets []int64) []int64 { return planFrom(f.Now(), offsets) }
func (f *scriptedPass) Sleep(ctx context.Context, ns int64) bool {
	return extractbench.SleepFor(ctx, time.Duration(ns-f.Now()))
}

func (f *scriptedPass) Read(i int) (fakeReq, bool) {
	f.mu.Lock()
	f.reads = append(f.reads, i)
	f.mu.Unlock()
	return fakeReq{i: i}, true
}

func (f *scriptedPass) BeforeSend() {
	f.mu.Lock()
	f.befores++
	k := f.befores
	f.mu.Unlock()
	if f.onBeforeSend != nil {
		f.onBeforeSend(k)
	}
}

func (f *scriptedPass) Send(r *fakeReq, sched int64) bool {
	f.mu.Lock()
	f.sched[r.i] = sched
	f.sends[r.i]++
	f.mu.Unlock()
	r.send = f.Now()
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for m := f.most.Load(); n > m && !f.most.CompareAndSwap(m, n); m = f.most.Load() {
	}
	if r.i == f.panicAt {
		panic(fmt.Sprintf("the client broke on document %d", r.i))
	}
	if f.gate > 0 {
		if n >= int64(f.gate) {
			f.openOnce.Do(func() { close(f.open) })
		}
		select {
		case <-f.open:
		case <-f.watchdog.Done():
		}
	}
	r.done = f.Now()
	return true
}

func (f *scriptedPass) Times(r *fakeReq) (int64, int64, bool) { return r.send, r.done, r.failed }
func (f *scriptedPass) Score(r *fakeReq)                      { r.scored = true }

func (f *scriptedPass) Delay(sendNS, dueNS int64) {
	f.mu.Lock()
	f.due[sendNS] = dueNS
	f.mu.Unlock()
}

func (f *scriptedPass) Keep(r *fakeReq) {
	f.mu.Lock()
	f.kept = append(f.kept, r.i)
	f.sendAt[r.i], f.done[r.i] = r.send, r.done
	f.mu.Unlock()
	if f.onKeep != nil {
		f.onKeep(r.i)
	}
}

// The batch calls: no rate or context pass may make one.
func (f *scriptedPass) SendList([]fakeReq, int64) (bool, bool) { f.batchCalls++; return false, false }
func (f *scriptedPass) Barrier()                               { f.batchCalls++ }
func (f *scriptedPass) Exchange(*fakeReq, int64) bool          { f.batchCalls++; return false }

// sentOnce reports the documents not sent exactly once, among 0..n-1.
func (f *scriptedPass) sentOnce(n int) []string {
	var bad []string
	for i := range n {
		if c := f.sends[i]; c != 1 {
			bad = append(bad, fmt.Sprintf("document %d sent %d times", i, c))
		}
	}
	return bad
}

// keptSorted is the kept documents in ascending order.
func (f *scriptedPass) keptSorted() []int {
	k := slices.Clone(f.kept)
	slices.Sort(k)
	return k
}

// upTo is 0, 1, ..., n-1.
func upTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// runWatched runs dispatch and fails t if it has not returned within the
// watchdog's time: a dispatcher that waits for a slot nobody frees hangs.
func runWatched(t *testing.T, f *scriptedPass, dispatch func() error) error {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- dispatch() }()
	select {
	case err := <-errc:
		return err
	case <-f.watchdog.Done():
		t.Fatal("dispatch hung")
		return nil
	}
}
