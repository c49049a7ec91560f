package dispatch

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
)

func ptr[T any](v T) *T { return &v }

// planFrom places offsets a millisecond after now, as the run does on the
// wall clock.
func planFrom(now int64, offsets []int64) []int64 {
	out := make([]int64, len(offsets))
	for i, o := range offsets {
		out[i] = now + int64(time.Millisecond) + o
	}
	return out
}

// fakePass is a Pass whose requests take hold each and panic at document
// panicAt (-1: none), counting in flight with an atomic as conc's own
// pool tests do.
type fakePass struct {
	n        int
	hold     time.Duration
	panicAt  int
	inFlight atomic.Int64
	most     atomic.Int64
	sent     atomic.Int64
	mu       sync.Mutex
	kept     []int
	list     bool // SendList is supported
	barriers int
}

type fakeReq struct {
	i          int
	send, done int64
	failed     bool
	scored     bool
}

func (f *fakePass) Len() int                     { return f.n }
func (f *fakePass) Read(i int) (fakeReq, bool)   { return fakeReq{i: i}, true }
func (f *fakePass) Died() bool                   { return false }
func (f *fakePass) Now() int64                   { return time.Now().UnixNano() }
func (f *fakePass) BeforeSend()                  {}
func (f *fakePass) Plan(offsets []int64) []int64 { return planFrom(f.Now(), offsets) }
func (f *fakePass) Sleep(ctx context.Context, ns int64) bool {
	return extractbench.SleepFor(ctx, time.Duration(ns-f.Now()))
}
func (f *fakePass) Delay(int64, int64)                    {}
func (f *fakePass) Times(r *fakeReq) (int64, int64, bool) { return r.send, r.done, r.failed }
func (f *fakePass) Score(r *fakeReq)                      { r.scored = true }

func (f *fakePass) Send(r *fakeReq, sched int64) bool {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for m := f.most.Load(); n > m && !f.most.CompareAndSwap(m, n); m = f.most.Load() {
	}
	f.sent.Add(1)
	r.send = f.Now()
	if r.i == f.panicAt {
		panic("the client broke on document 3")
	}
	time.Sleep(f.hold)
	r.done = f.Now()
	return true
}

func (f *fakePass) Keep(r *fakeReq) {
	f.mu.Lock()
	f.kept = append(f.kept, r.i)
	f.mu.Unlock()
}

func (f *fakePass) SendList(group []fakeReq, sched int64) (bool, bool) {
	if !f.list {
		return true, true
	}
	for i := range group {
		f.Keep(&group[i])
	}
	return true, false
}

func (f *fakePass) Barrier() { f.barriers++ }

func (f *fakePass) Exchange(r *fakeReq, sched int64) bool {
	if !f.Send(r, sched) {
		return false
	}
	f.Keep(r)
	return true
}

// TestConcurrent_ExactlyNInFlight: the closed loop keeps level requests in
// flight, never more, and sends every document once.
func TestConcurrent_ExactlyNInFlight(t *testing.T) {
	f := &fakePass{n: 40, hold: 5 * time.Millisecond, panicAt: -1}
	if err := Concurrent(context.Background(), 4, f); err != nil {
		t.Fatal(err)
	}
	if got := f.most.Load(); got != 4 {
		t.Errorf("most in flight = %d, want 4", got)
	}
	if len(f.kept) != 40 {
		t.Errorf("kept %d records, want 40", len(f.kept))
	}
}

// TestDispatch_PanickingWorkerIsReported: a request's worker that panics
// (here the client, at document 3) stops the pass's dispatch and comes back
// as an error naming the panic, the records kept so far kept; with a bare
// sync.WaitGroup the panic killed the whole process, nothing recorded.
func TestDispatch_PanickingWorkerIsReported(t *testing.T) {
	sweepOf := func(mode extractbench.Mode) extractbench.Sweep {
		return extractbench.Sweep{Mode: mode, Concurrency: 2, MaxInFlight: 2}
	}
	for _, tc := range []struct {
		name  string
		mode  extractbench.Mode
		level int
	}{
		{"concurrency", extractbench.ModeConcurrency, 2},
		{"baseline", extractbench.ModeConcurrency, 1},
		{"rate", extractbench.ModeRate, 2000},
		{"context", extractbench.ModeContext, 1},
		{"batch barrier", extractbench.ModeBatch, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakePass{n: 200, hold: time.Millisecond, panicAt: 3}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := Run(ctx, sweepOf(tc.mode), ptr(7), tc.level, 1, f)
			if err == nil || !strings.Contains(err.Error(), "panicked") || !strings.Contains(err.Error(), "document 3") {
				t.Fatalf("Run = %v, want the worker's panic reported", err)
			}
			if ctx.Err() != nil {
				t.Fatal("dispatch hung after the panic")
			}
			if got := f.sent.Load(); got >= int64(f.n) {
				t.Errorf("sent %d of %d after the panic, want dispatch stopped", got, f.n)
			}
			if len(f.kept) == 0 && tc.level > 1 && tc.mode != extractbench.ModeBatch {
				t.Errorf("no record kept: what was measured before the panic is lost")
			}
		})
	}
}

// TestBatches_Barrier: an engine without a list of prompts gets barrier
// batches of level from the first group on, the decision recorded once.
func TestBatches_Barrier(t *testing.T) {
	f := &fakePass{n: 10, panicAt: -1}
	transport, err := Batches(context.Background(), 4, f)
	if err != nil || transport != extractbench.TransportBarrier || f.barriers != 1 || len(f.kept) != 10 || f.most.Load() > 4 {
		t.Errorf("Batches = %q, %v; %d decisions, %d kept, %d most in flight; want barrier, 1, 10, ≤ 4", transport, err, f.barriers, len(f.kept), f.most.Load())
	}
	f = &fakePass{n: 10, panicAt: -1, list: true}
	if transport, _ := Batches(context.Background(), 4, f); transport != extractbench.TransportCompletionsList || len(f.kept) != 10 {
		t.Errorf("Batches = %q with %d kept, want completions_list and 10", transport, len(f.kept))
	}
}

// TestWorkers_FinishedWorkerTakesTheNext checks that a worker that finished
// its request waits for the next one instead of returning (a pass runs on
// about as many goroutines as it has in flight), and that Wait lets the
// waiting workers go.
func TestWorkers_FinishedWorkerTakesTheNext(t *testing.T) {
	var w workers
	first, second := make(chan struct{}), make(chan struct{})
	w.Go(func() { close(first) })
	<-first
	handed := false
	for deadline := time.Now().Add(5 * time.Second); !handed && time.Now().Before(deadline); {
		select {
		case w.idle <- func() { close(second) }:
			handed = true
		default:
			time.Sleep(time.Millisecond)
		}
	}
	if !handed {
		t.Fatal("the worker that finished its request does not wait for another")
	}
	<-second
	if err := w.Wait(); err != nil {
		t.Fatal(err)
	}
}
