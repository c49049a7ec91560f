package dispatch

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
)

// TestArrivals_SameSeedSameSchedule: a rate pass's schedule is a pure
// function of the seed, so that a run is reproduced request for request;
// another seed (or repetition) gives another sample of the same process.
func TestArrivals_SameSeedSameSchedule(t *testing.T) {
	for _, tc := range []struct {
		arrival    string
		burstiness float64
	}{{extractbench.ArrivalPoisson, 0}, {extractbench.ArrivalPoisson, 0.5}, {extractbench.ArrivalPoisson, 4}, {extractbench.ArrivalConstant, 0}} {
		a := Arrivals(ArrivalSeed(ptr(7), 40, 1), 40, 300, tc.arrival, tc.burstiness)
		b := Arrivals(ArrivalSeed(ptr(7), 40, 1), 40, 300, tc.arrival, tc.burstiness)
		if !slices.Equal(a, b) {
			t.Errorf("%s burstiness %v: two schedules from seed 7 differ", tc.arrival, tc.burstiness)
		}
		other := Arrivals(ArrivalSeed(ptr(8), 40, 1), 40, 300, tc.arrival, tc.burstiness)
		rep2 := Arrivals(ArrivalSeed(ptr(7), 40, 2), 40, 300, tc.arrival, tc.burstiness)
		if tc.arrival == extractbench.ArrivalConstant {
			if !slices.Equal(a, other) {
				t.Errorf("constant arrivals depend on the seed")
			}
			continue
		}
		if slices.Equal(a, other) || slices.Equal(a, rep2) {
			t.Errorf("%s burstiness %v: another seed or repetition gave the same schedule", tc.arrival, tc.burstiness)
		}
	}
}

// TestArrivals_Rate: the first arrival is at the pass's start, instants
// never go backwards, and the mean gap is 1/rate (constant: exactly).
func TestArrivals_Rate(t *testing.T) {
	const rate, n = 50.0, 20000
	for _, tc := range []struct {
		arrival    string
		burstiness float64
		cv         float64 // coefficient of variation of the gaps: 1/sqrt(shape)
	}{{extractbench.ArrivalPoisson, 0, 1}, {extractbench.ArrivalPoisson, 0.25, 2}, {extractbench.ArrivalPoisson, 4, 0.5}, {extractbench.ArrivalConstant, 0, 0}} {
		at := Arrivals(1, rate, n, tc.arrival, tc.burstiness)
		if at[0] != 0 {
			t.Errorf("%s: first arrival at %d, want 0", tc.arrival, at[0])
		}
		var sum, sq float64
		for i := 1; i < n; i++ {
			g := float64(at[i] - at[i-1])
			if g < 0 {
				t.Fatalf("%s: arrival %d before arrival %d", tc.arrival, i, i-1)
			}
			sum += g
			sq += g * g
		}
		mean := sum / (n - 1)
		want := float64(time.Second) / rate
		if math.Abs(mean-want)/want > 0.05 {
			t.Errorf("%s burstiness %v: mean gap %.0fns, want %.0fns ± 5%%", tc.arrival, tc.burstiness, mean, want)
		}
		cv := math.Sqrt(max(sq/(n-1)-mean*mean, 0)) / mean
		if math.Abs(cv-tc.cv) > 0.1*max(tc.cv, 0.1) {
			t.Errorf("%s burstiness %v: gaps' coefficient of variation %.3f, want %.3f", tc.arrival, tc.burstiness, cv, tc.cv)
		}
	}
}
