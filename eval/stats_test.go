package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestPercentile(t *testing.T) {
	// Expected values worked by hand with h = (n−1)p/100 (numpy's default).
	tests := []struct {
		sorted []float64
		p      float64
		want   float64
	}{
		{[]float64{1, 2, 3, 4}, 50, 2.5},
		{[]float64{1, 2, 3, 4}, 90, 3.7}, // h = 2.7
		{[]float64{1, 2, 3, 4}, 0, 1},
		{[]float64{1, 2, 3, 4}, 100, 4},
		{[]float64{1, 2, 3, 4}, 150, 4}, // clamped
		{[]float64{1, 2, 3, 4}, -5, 1},
		{[]float64{10, 20}, 25, 12.5},
		{[]float64{7}, 99, 7},
		{[]float64{1, 1, 1, 100}, 99, 97.03}, // h = 2.97
	}
	for _, tt := range tests {
		if got := Percentile(tt.sorted, tt.p); !near(got, tt.want) {
			t.Errorf("Percentile(%v, %v): got %v, want %v", tt.sorted, tt.p, got, tt.want)
		}
	}
	if got := Percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("Percentile(nil): got %v, want NaN", got)
	}
}

func TestDescribe(t *testing.T) {
	v := make([]float64, 100)
	for i := range v {
		v[99-i] = float64(i + 1) // 1..100, reversed: Describe must sort
	}
	got := Describe(v)
	want := Distribution{N: 100, Min: 1, Max: 100, P50: 50.5, P90: 90.1, P95: 95.05, P99: 99.01, IQR: 49.5, Mean: 50.5}
	if fmt.Sprintf("%.6f", []float64{got.Min, got.Max, got.P50, got.P90, got.P95, got.P99, got.IQR, got.Mean}) !=
		fmt.Sprintf("%.6f", []float64{want.Min, want.Max, want.P50, want.P90, want.P95, want.P99, want.IQR, want.Mean}) || got.N != want.N {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if v[0] != 100 {
		t.Errorf("Describe modified its argument")
	}
	if got := Describe([]float64{math.NaN(), 2}); got.N != 1 || got.P50 != 2 {
		t.Errorf("got %+v, want the NaN dropped", got)
	}
	if got := Describe(nil); got != (Distribution{}) {
		t.Errorf("got %+v, want the zero Distribution", got)
	}
}

func TestDescribeNS(t *testing.T) {
	got := DescribeNS([]int64{3_000_000, 1_000_000, 2_000_000})
	if got.N != 3 || got.P50 != 2_000_000 || got.Min != 1_000_000 || got.Max != 3_000_000 {
		t.Errorf("got %+v, want median 2ms in ns", got)
	}
}

func TestSummary_TailCount(t *testing.T) {
	tests := []struct {
		n    int
		p    float64
		want int
	}{{300, 99, 3}, {300, 95, 15}, {300, 90, 30}, {100, 99, 1}, {50, 99, 1}, {0, 99, 0}, {1000, 99.9, 1}}
	for _, tt := range tests {
		if got := (Distribution{N: tt.n}).TailCount(tt.p); got != tt.want {
			t.Errorf("TailCount(n=%d, p=%v): got %d, want %d", tt.n, tt.p, got, tt.want)
		}
	}
}

func TestBootstrapCI(t *testing.T) {
	v := make([]float64, 1000)
	for i := range v {
		v[i] = float64(i)
	}
	lo, hi := BootstrapCI(v, Mean, 2000, 0.95, 42)
	lo2, hi2 := BootstrapCI(v, Mean, 2000, 0.95, 42)
	if lo != lo2 || hi != hi2 {
		t.Errorf("same seed: got [%v, %v] then [%v, %v], want the same interval", lo, hi, lo2, hi2)
	}
	// The mean is 499.5 with standard error 288.7/√1000 ≈ 9.13, so a 95%
	// interval is about ±17.9; the bootstrap is close to that.
	if !(lo > 475 && lo < 490 && hi > 509 && hi < 524) {
		t.Errorf("got [%v, %v], want about [481.6, 517.4]", lo, hi)
	}
	if lo3, hi3 := BootstrapCI(v, Mean, 2000, 0.95, 43); lo3 == lo && hi3 == hi {
		t.Errorf("another seed gave the same interval [%v, %v]", lo3, hi3)
	}
	if lo, hi := BootstrapCI([]float64{4, 4, 4}, Median, 100, 0.9, 1); lo != 4 || hi != 4 {
		t.Errorf("constant sample: got [%v, %v], want [4, 4]", lo, hi)
	}
	for _, c := range []struct {
		v     []float64
		n     int
		level float64
	}{{nil, 10, 0.9}, {v, 0, 0.9}, {v, 10, 1}, {v, 10, 0}} {
		if lo, hi := BootstrapCI(c.v, Mean, c.n, c.level, 1); !math.IsNaN(lo) || !math.IsNaN(hi) {
			t.Errorf("BootstrapCI(len %d, %d, %v): got [%v, %v], want NaN", len(c.v), c.n, c.level, lo, hi)
		}
	}
}

// TestSortedDistribution checks the streamed summary against Percentile on the
// whole sorted slice, for exact equality, at every size from 1 to 120 with
// many ties; that it keeps a dozen values whatever the count; and that
// values out of order, NaN or a wrong count are an error, not a figure.
func TestSortedDistribution(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 120; n++ {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(rng.IntN(n/3+1) * 1000)
		}
		slices.Sort(v)
		s := NewSortedDistribution(n)
		for _, x := range v {
			s.Add(x)
		}
		got, err := s.Distribution()
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		want := Distribution{N: n, Min: v[0], Max: v[n-1], P50: Percentile(v, 50), P90: Percentile(v, 90), P95: Percentile(v, 95),
			P99: Percentile(v, 99), IQR: Percentile(v, 75) - Percentile(v, 25), Mean: sum / float64(n)}
		if got != want {
			t.Errorf("n=%d: got %+v, want %+v", n, got, want)
		}
	}
	if s := NewSortedDistribution(1_000_000); len(s.keep) > 2*len(distributionPercentiles)+2 {
		t.Errorf("a summary of a million values keeps %d of them, want at most %d", len(s.keep), 2*len(distributionPercentiles)+2)
	}
	if got, err := NewSortedDistribution(0).Distribution(); err != nil || got != (Distribution{}) {
		t.Errorf("no values: got %+v, %v; want the zero Distribution", got, err)
	}
	for name, feed := range map[string][]float64{"unsorted": {2, 1, 3}, "NaN": {1, math.NaN(), 3}, "too few": {1, 2}, "too many": {1, 2, 3, 4}} {
		s := NewSortedDistribution(3)
		for _, x := range feed {
			s.Add(x)
		}
		if _, err := s.Distribution(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
