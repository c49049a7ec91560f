package eval

import (
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
	n := len(sorted)
	if n == 0 || math.IsNaN(p) {
		return math.NaN()
	}
	p = math.Max(0, math.Min(100, p))
	h := float64(n-1) * p / 100
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return sorted[n-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// Summary describes a sample the way MEASUREMENT.md section 3 asks: the
// median and a tail with the count it rests on, min and max, never a mean
// alone. Percentiles are Percentile's (type 7). All fields are zero when N
// is 0.
type Summary struct {
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
func (s Summary) TailCount(p float64) int {
	// Round first so that 300·0.01 = 3.0000000000000004 does not become 4.
	t := float64(s.N) * (100 - p) / 100
	return int(math.Ceil(math.Round(t*1e9) / 1e9))
}

// Describe summarises values (in any order; the slice is not modified).
// NaN values are dropped, so N counts what the figures rest on.
func Describe(values []float64) Summary {
	v := make([]float64, 0, len(values))
	for _, x := range values {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return Summary{}
	}
	slices.Sort(v)
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return Summary{
		N:    len(v),
		Min:  v[0],
		Max:  v[len(v)-1],
		P50:  Percentile(v, 50),
		P90:  Percentile(v, 90),
		P95:  Percentile(v, 95),
		P99:  Percentile(v, 99),
		IQR:  Percentile(v, 75) - Percentile(v, 25),
		Mean: sum / float64(len(v)),
	}
}

// DescribeNS summarises durations in nanoseconds; the Summary is in
// nanoseconds too (float64 is exact to 2^53 ns, about 104 days).
func DescribeNS(values []int64) Summary {
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
