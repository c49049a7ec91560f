package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// DefaultCILevel is the confidence level of descriptive intervals (F1 deltas).
// The equivalence verdict uses its own level, 1 − 2α (90% at α = 0.05).
const DefaultCILevel = 0.95

// bootstrapStream is the second word of the PCG state: with the caller's seed
// as the first, a given seed always draws the same resamples.
const bootstrapStream = 0x9e3779b97f4a7c15

// Percentile returns the p-th percentile (p in [0, 100]) of sorted values
// by linear interpolation between closest ranks: Hyndman and Fan (1996)
// definition 7, the default of numpy.percentile, R's quantile and Excel's
// PERCENTILE.INC. With n values the rank is h = (n−1)·p/100 and the result
// x[⌊h⌋] + (h−⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]). It returns NaN for no values; p
// outside [0, 100] is clamped. The slice must be sorted ascending.
func Percentile(sorted []float64, p float64) float64 {
	return percentileOf(len(sorted), p, func(i int) float64 { return sorted[i] })
}

// percentileOf is Percentile over n sorted values read by rank: the one
// place the type-7 arithmetic is written, for a slice and for a sorted
// stream (SortedDistribution) alike, so that both give the same bits.
func percentileOf(n int, p float64, at func(i int) float64) float64 {
	if n == 0 || math.IsNaN(p) {
		return math.NaN()
	}
	lo, frac := percentileRank(n, p)
	if lo >= n-1 {
		return at(n - 1)
	}
	x := at(lo)
	return x + frac*(at(lo+1)-x)
}

// percentileRank is the lower rank ⌊h⌋ and the fraction h − ⌊h⌋ of the
// p-th percentile of n values (n > 0), h = (n−1)·p/100, p clamped to [0, 100].
func percentileRank(n int, p float64) (lo int, frac float64) {
	p = math.Max(0, math.Min(100, p))
	h := float64(n-1) * p / 100
	lo = int(math.Floor(h))
	return lo, h - float64(lo)
}

// Distribution describes a sample the way MEASUREMENT.md section 3 asks: the
// median and a tail with the count it rests on, min and max, never a mean
// alone. Percentiles are Percentile's (type 7). All fields are zero when N
// is 0.
type Distribution struct {
	N    int
	Min  float64
	Max  float64
	P50  float64
	P90  float64
	P95  float64
	P99  float64
	IQR  float64 // P75 − P25
	Mean float64
}

// TailCount returns how many observations lie in the tail beyond the p-th
// percentile, ⌈N·(100−p)/100⌉: the number a tail figure rests on. At
// N = 300, TailCount(99) is 3.
func (s Distribution) TailCount(p float64) int {
	// Round first so that 300·0.01 = 3.0000000000000004 does not become 4.
	t := float64(s.N) * (100 - p) / 100
	return int(math.Ceil(math.Round(t*1e9) / 1e9))
}

// Describe summarises values (in any order; the slice is not modified).
// NaN values are dropped, so N counts what the figures rest on.
func Describe(values []float64) Distribution {
	v := make([]float64, 0, len(values))
	for _, x := range values {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	slices.Sort(v)
	s := NewSortedDistribution(len(v))
	for _, x := range v {
		s.Add(x)
	}
	sum, _ := s.Distribution() // sorted and counted just above
	return sum
}

// distributionPercentiles are the percentiles a Distribution reads (P25 and P75 for
// the IQR).
var distributionPercentiles = []float64{25, 50, 75, 90, 95, 99}

// SortedDistribution makes Describe's Distribution from n values that arrive one at a
// time in ascending order (a sorted SQL query, say), keeping only the dozen
// ranks the percentiles read: a summary of a million values then holds no
// slice of them. Its figures are Describe's, bit for bit: Describe itself
// goes through it.
type SortedDistribution struct {
	n, seen  int
	sum      float64
	last     float64
	unsorted bool
	keep     map[int]float64 // rank -> value, for the ranks a percentile reads
}

// NewSortedDistribution expects n values.
func NewSortedDistribution(n int) *SortedDistribution {
	s := &SortedDistribution{n: n, keep: map[int]float64{}}
	for _, p := range distributionPercentiles {
		if n == 0 {
			break
		}
		lo, _ := percentileRank(n, p)
		s.keep[lo] = 0
		if lo+1 < n {
			s.keep[lo+1] = 0
		}
	}
	s.keep[0], s.keep[max(n-1, 0)] = 0, 0
	return s
}

// Add takes the next value; it must not be below the previous one, nor NaN.
func (s *SortedDistribution) Add(x float64) {
	if s.seen > 0 && x < s.last || math.IsNaN(x) {
		s.unsorted = true
	}
	if _, ok := s.keep[s.seen]; ok {
		s.keep[s.seen] = x
	}
	s.sum += x
	s.last = x
	s.seen++
}

// Distribution is the values' Distribution (all zero for none); an error when they
// were not the n announced or not in ascending order.
func (s *SortedDistribution) Distribution() (Distribution, error) {
	if s.seen != s.n {
		return Distribution{}, fmt.Errorf("summary of %d sorted values: %d arrived", s.n, s.seen)
	}
	if s.unsorted {
		return Distribution{}, fmt.Errorf("summary of %d sorted values: a value below the one before it, or NaN", s.n)
	}
	if s.n == 0 {
		return Distribution{}, nil
	}
	at := func(i int) float64 { return s.keep[i] }
	pct := func(p float64) float64 { return percentileOf(s.n, p, at) }
	return Distribution{
		N:    s.n,
		Min:  at(0),
		Max:  at(s.n - 1),
		P50:  pct(50),
		P90:  pct(90),
		P95:  pct(95),
		P99:  pct(99),
		IQR:  pct(75) - pct(25),
		Mean: s.sum / float64(s.n),
	}, nil
}

// DescribeNS summarises durations in nanoseconds; the Distribution is in
// nanoseconds too (float64 is exact to 2^53 ns, about 104 days).
func DescribeNS(values []int64) Distribution {
	v := make([]float64, len(values))
	for i, x := range values {
		v[i] = float64(x)
	}
	return Describe(v)
}

// BootstrapCI returns the percentile bootstrap interval of stat over values
// at the given level (0.95 for 95%): resamples draws of len(values) with
// replacement, stat on each, and the (1−level)/2 and (1+level)/2 type-7
// percentiles of the results. The generator is math/rand/v2's PCG seeded
// with seed, so the interval is reproducible. stat may reorder its argument.
// Resamples where stat is NaN are dropped; with no values, no resamples or a
// level outside (0, 1) both bounds are NaN.
func BootstrapCI(values []float64, stat func([]float64) float64, resamples int, level float64, seed int64) (lo, hi float64) {
	n := len(values)
	if n == 0 || resamples <= 0 || !(level > 0 && level < 1) {
		return math.NaN(), math.NaN()
	}
	rng := rand.New(rand.NewPCG(uint64(seed), bootstrapStream))
	buf := make([]float64, n)
	stats := make([]float64, 0, resamples)
	for range resamples {
		for i := range buf {
			buf[i] = values[rng.IntN(n)]
		}
		if s := stat(buf); !math.IsNaN(s) {
			stats = append(stats, s)
		}
	}
	slices.Sort(stats)
	tail := (1 - level) / 2 * 100
	return Percentile(stats, tail), Percentile(stats, 100-tail)
}

// Mean returns the arithmetic mean of values, NaN for none; a convenient
// stat for BootstrapCI.
func Mean(values []float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, x := range values {
		sum += x
	}
	return sum / float64(len(values))
}

// Median returns the type-7 median of values, NaN for none. It sorts its
// argument in place, which BootstrapCI allows.
func Median(values []float64) float64 {
	slices.Sort(values)
	return Percentile(values, 50)
}
