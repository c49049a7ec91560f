package dispatch

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

// TestContext_Dispatch: a context pass reads its documents in order and
// sends each once at the sweep's fixed concurrency whatever the level (the
// level names a length class): exactly sweep.concurrency in flight. The
// first sweep.concurrency requests are scheduled at the pass's start, each
// later one at the t_done of an earlier request whose slot it took, each
// such instant taken once; at concurrency 1, the one just before it.
func TestContext_Dispatch(t *testing.T) {
	const n = 15
	for _, tc := range []struct {
		name               string
		concurrency, level int
	}{
		{"one at a time, class 1", 1, 1},
		{"one at a time, class 3", 1, 3},
		{"four, class 1", 4, 1},
		{"four, class 2", 4, 2},
		{"more than the documents", 20, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newScripted(t, n, 1)
			want := min(tc.concurrency, n)
			f.gate = want
			var transport string
			sw := extractbench.Sweep{Mode: extractbench.ModeContext, Concurrency: tc.concurrency}
			if err := runWatched(t, f, func() (err error) {
				transport, err = Run(context.Background(), sw, ptr(7), tc.level, 1, f)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if transport != "" || f.batchCalls != 0 {
				t.Errorf("transport %q and %d batch calls, want none outside batch mode", transport, f.batchCalls)
			}
			if got, want := f.reads, upTo(n); !slices.Equal(got, want) {
				t.Errorf("read %v, want %v", got, want)
			}
			if bad := f.sentOnce(n); bad != nil {
				t.Errorf("%v", bad)
			}
			if got, want := f.keptSorted(), upTo(n); !slices.Equal(got, want) {
				t.Errorf("kept %v, want %v", got, want)
			}
			if got := f.most.Load(); got != int64(want) {
				t.Errorf("most in flight = %d, want sweep.concurrency %d", got, want)
			}
			const start = 1 // the first Now
			taken := map[int64]bool{}
			for i := range n {
				sched := f.sched[i]
				if i < want {
					if sched != start {
						t.Errorf("document %d: t_sched %d, want the pass's start %d", i, sched, start)
					}
					continue
				}
				from := slices.IndexFunc(upTo(i), func(j int) bool { return f.done[j] == sched })
				switch {
				case from < 0:
					t.Errorf("document %d: t_sched %d is no earlier request's t_done", i, sched)
				case taken[sched]:
					t.Errorf("document %d: t_sched %d, the t_done of document %d, taken twice", i, sched, from)
				case tc.concurrency == 1 && from != i-1:
					t.Errorf("document %d: t_sched is document %d's t_done, want document %d's", i, from, i-1)
				}
				taken[sched] = true
			}
		})
	}
}

// TestContext_Cancel: a canceled context pass sends nothing more: canceled
// after k sends, it has sent exactly k; canceled before, none, and it
// reads nothing.
func TestContext_Cancel(t *testing.T) {
	const n = 20
	for _, tc := range []struct {
		name        string
		concurrency int
		cancelAt    int // the BeforeSend that cancels; 0: before Context
		wantSends   int
	}{
		{"one at a time, after 4", 1, 4, 4},
		{"three, after 7", 3, 7, 7},
		{"before the first send", 3, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newScripted(t, n, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelAt == 0 {
				cancel()
			}
			f.onBeforeSend = func(k int) {
				if k == tc.cancelAt {
					cancel()
				}
			}
			sw := extractbench.Sweep{Mode: extractbench.ModeContext, Concurrency: tc.concurrency}
			if err := runWatched(t, f, func() error { return Context(ctx, sw, f) }); err != nil {
				t.Fatal(err)
			}
			if got := len(f.sends); got != tc.wantSends {
				t.Errorf("sent %d documents, want %d", got, tc.wantSends)
			}
			if got, want := f.keptSorted(), upTo(tc.wantSends); !slices.Equal(got, want) {
				t.Errorf("kept %v, want %v", got, want)
			}
			if tc.cancelAt == 0 && len(f.reads) != 0 {
				t.Errorf("read %v after the pass was canceled, want nothing", f.reads)
			}
		})
	}
}

// TestContext_PanickingWorker: a request's worker that panics comes back
// as Context's error naming the panic, the records before it kept and none
// for it; its slot is freed, or at concurrency 1 the loop would wait for it
// forever.
func TestContext_PanickingWorker(t *testing.T) {
	const n = 20
	for _, concurrency := range []int{1, 2, 5} {
		f := newScripted(t, n, 1)
		f.panicAt = 3
		sw := extractbench.Sweep{Mode: extractbench.ModeContext, Concurrency: concurrency}
		err := runWatched(t, f, func() error { return Context(context.Background(), sw, f) })
		if err == nil || !strings.Contains(err.Error(), "panicked") || !strings.Contains(err.Error(), "document 3") {
			t.Fatalf("concurrency %d: Context = %v, want the worker's panic reported", concurrency, err)
		}
		kept := f.keptSorted()
		if !slices.Equal(kept[:min(3, len(kept))], []int{0, 1, 2}) {
			t.Errorf("concurrency %d: kept %v, want documents 0, 1 and 2 among them", concurrency, kept)
		}
		if slices.Contains(kept, 3) {
			t.Errorf("concurrency %d: the panicking request was kept", concurrency)
		}
	}
}
