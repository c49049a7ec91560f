package dispatch

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
)

// hour is a fake clock step longer than any schedule here: every planned
// arrival is past when it is looked at, so no timer waits.
const hour = int64(time.Hour)

// TestRate_Dispatch: a rate pass reads the documents in order and sends
// each once at its planned arrival (t_sched = the pass's start + the
// seed's schedule, whatever the clock did), never waiting for an answer
// (all n in flight at once) unless sweep.max_in_flight caps it (exactly
// that many); a request's due instant is its t_sched, or later when it
// waited for a slot. The schedule is the one Run derives from the seed,
// the level and the repetition.
func TestRate_Dispatch(t *testing.T) {
	const n = 24
	for _, tc := range []struct {
		name     string
		sweep    extractbench.Sweep
		level    int
		wantMost int64
	}{
		{"poisson open loop", extractbench.Sweep{Mode: extractbench.ModeRate}, 50, n},
		{"bursty", extractbench.Sweep{Mode: extractbench.ModeRate, Burstiness: 0.5}, 8, n},
		{"constant", extractbench.Sweep{Mode: extractbench.ModeRate, Arrival: extractbench.ArrivalConstant}, 10, n},
		{"max in flight", extractbench.Sweep{Mode: extractbench.ModeRate, MaxInFlight: 3}, 50, 3},
		{"max in flight 1", extractbench.Sweep{Mode: extractbench.ModeRate, MaxInFlight: 1}, 50, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newScripted(t, n, hour)
			f.gate = int(tc.wantMost)
			const seed, rep = 7, 2
			var transport string
			if err := runWatched(t, f, func() (err error) {
				transport, err = Run(context.Background(), tc.sweep, ptr(seed), tc.level, rep, f)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if transport != "" {
				t.Errorf("transport %q, want none outside batch mode", transport)
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
			if got := f.most.Load(); got != tc.wantMost {
				t.Errorf("most in flight = %d, want %d", got, tc.wantMost)
			}
			// The first Now is the pass's start, less the lead before the first send.
			start := hour + int64(time.Millisecond)
			offsets := Arrivals(ArrivalSeed(ptr(seed), tc.level, rep), float64(tc.level), n, tc.sweep.Arrival, tc.sweep.Burstiness)
			for i := range n {
				if got, want := f.sched[i], start+offsets[i]; got != want {
					t.Errorf("document %d: t_sched %d, want start + its planned offset %d", i, got, want)
				}
			}
			for _, i := range f.kept {
				due, ok := f.due[f.sendAt[i]]
				switch {
				case !ok:
					t.Errorf("document %d: no client delay recorded", i)
				case tc.sweep.MaxInFlight == 0 && due != f.sched[i]:
					t.Errorf("document %d: due %d, want its t_sched %d (no slot to wait for)", i, due, f.sched[i])
				case due < f.sched[i]:
					t.Errorf("document %d: due %d before its t_sched %d", i, due, f.sched[i])
				}
			}
			if f.batchCalls != 0 {
				t.Errorf("%d batch calls in rate mode", f.batchCalls)
			}
		})
	}
}

// TestRun_RateBaselineIsOneAtATime: a rate sweep's level SyncLevel is
// the synchronous baseline, not an arrival schedule: one request at a
// time, each scheduled at the instant the one before it finished.
func TestRun_RateBaselineIsOneAtATime(t *testing.T) {
	const n = 10
	f := newScripted(t, n, 1)
	if err := runWatched(t, f, func() error {
		_, err := Run(context.Background(), extractbench.Sweep{Mode: extractbench.ModeRate}, ptr(7), extractbench.SyncLevel, 1, f)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := f.most.Load(); got != 1 {
		t.Errorf("most in flight = %d, want 1", got)
	}
	if got, want := f.keptSorted(), upTo(n); !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
	if f.sched[0] != 1 { // the pass's start: the first Now
		t.Errorf("document 0: t_sched %d, want the pass's start 1", f.sched[0])
	}
	for i := 1; i < n; i++ {
		if f.sched[i] != f.done[i-1] {
			t.Errorf("document %d: t_sched %d, want document %d's t_done %d", i, f.sched[i], i-1, f.done[i-1])
		}
	}
}

// TestRate_Cancel: a canceled pass sends nothing more, whether the
// cancellation finds the loop between two sends, waiting for the next
// planned arrival (a thousand seconds away: the wait ends on ctx, not on
// its timer, or the watchdog fails the test), or before the first one;
// what was sent is kept.
func TestRate_Cancel(t *testing.T) {
	const n = 20
	for _, tc := range []struct {
		name      string
		step      int64
		sweep     extractbench.Sweep
		rate      float64
		setup     func(f *scriptedPass, cancel context.CancelFunc)
		wantSends int
	}{
		{"between sends", hour, extractbench.Sweep{Mode: extractbench.ModeRate}, 50,
			func(f *scriptedPass, cancel context.CancelFunc) {
				f.onBeforeSend = func(k int) {
					if k == 5 {
						cancel()
					}
				}
			}, 5},
		{"waiting for an arrival", 0, extractbench.Sweep{Mode: extractbench.ModeRate, Arrival: extractbench.ArrivalConstant}, 0.001,
			func(f *scriptedPass, cancel context.CancelFunc) {
				f.onKeep = func(int) { cancel() } // from the first request's worker, while the loop waits
			}, 1},
		{"before the first send", hour, extractbench.Sweep{Mode: extractbench.ModeRate}, 50,
			func(f *scriptedPass, cancel context.CancelFunc) { cancel() }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newScripted(t, n, tc.step)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tc.setup(f, cancel)
			if err := runWatched(t, f, func() error { return Rate(ctx, tc.sweep, 1, tc.rate, f) }); err != nil {
				t.Fatal(err)
			}
			if got := len(f.sends); got != tc.wantSends {
				t.Errorf("sent %d documents, want %d", got, tc.wantSends)
			}
			if got, want := f.keptSorted(), upTo(tc.wantSends); !slices.Equal(got, want) {
				t.Errorf("kept %v, want %v", got, want)
			}
		})
	}
}

// TestRate_PanickingWorker: a request's worker that panics comes back as
// Rate's error naming the panic, with the records sent before it kept and
// none for it; under max_in_flight 1 its slot is freed, or the loop would
// wait for it forever.
func TestRate_PanickingWorker(t *testing.T) {
	const n = 20
	for _, maxInFlight := range []int{0, 1, 2} {
		f := newScripted(t, n, hour)
		f.panicAt = 3
		err := runWatched(t, f, func() error {
			return Rate(context.Background(), extractbench.Sweep{Mode: extractbench.ModeRate, MaxInFlight: maxInFlight}, 1, 50, f)
		})
		if err == nil || !strings.Contains(err.Error(), "panicked") || !strings.Contains(err.Error(), "document 3") {
			t.Fatalf("max_in_flight %d: Rate = %v, want the worker's panic reported", maxInFlight, err)
		}
		kept := f.keptSorted()
		if !slices.Equal(kept[:min(3, len(kept))], []int{0, 1, 2}) {
			t.Errorf("max_in_flight %d: kept %v, want documents 0, 1 and 2 among them", maxInFlight, kept)
		}
		if slices.Contains(kept, 3) {
			t.Errorf("max_in_flight %d: the panicking request was kept", maxInFlight)
		}
	}
}
