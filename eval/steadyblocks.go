package eval

import (
	"cmp"
	"math"
	"slices"
)

// The steady-state test's units are time blocks, not requests: in a closed
// loop a request's latency depends on who else is running, so neighbouring
// requests' latencies are correlated and a per-request rank test's p-value
// is not its real one (z ≥ 3.09 came in about half of the concurrency
// passes of stateless engines). Blocks of several flights of requests
// carry little of one another's state, and a block's median leaves out the
// few requests a single host stall delays.

// SteadyBlockFlights is how many flights (the pass's sent concurrency, c)
// of requests a block holds at least: a host stall delays the c requests in
// flight, so a block of 4c keeps three quarters of its requests clear of it
// and its median moves little.
const SteadyBlockFlights = 4

// SteadyMinBlock is the fewest requests of a block (c up to 4): the median
// of twenty E2E ratios varies by a few percent in a steady engine, where
// ten varied by ±20% (the calibration's measure).
const SteadyMinBlock = 20

// SteadyMinBlocks is the fewest blocks the test needs: the first and at
// least three others to measure their spread. A pass with fewer (a small
// corpus at a high concurrency) is not tested (passes.steady NULL); its
// level's repetitions are still compared (firstRepetitionSlower).
const SteadyMinBlocks = 4

// SteadyBlockSize is the fewest requests a block of a pass sent at
// concurrency c holds.
func SteadyBlockSize(c int64) int64 {
	return max(SteadyMinBlock, SteadyBlockFlights*c)
}

// SteadyRequest is one measured request as the steady-state test reads it:
// its length class, its send instant and its E2E, ns.
type SteadyRequest struct {
	Class  string
	SendNS int64
	E2ENS  int64
}

// SteadyBlock is one block of a pass: N requests contiguous in send order,
// and the median of their E2E each divided by its length class's median in
// the pass (Ratio): 1.3 is a block whose requests took 30% longer than
// their class's usual, whatever the mix of short and long documents it
// drew, so that corpus order does not pass for warming.
type SteadyBlock struct {
	N     int64
	Ratio float64
}

// SteadyBlocks is what a pass gives the test: its blocks in send order and
// the median E2E of the requests they hold (ns), which turns a ratio into
// time for the absolute floor.
type SteadyBlocks struct {
	Blocks      []SteadyBlock
	MedianE2ENS float64
	// Head is the pass's head (SteadyHead): its first wave and the
	// SteadyMinBlock requests sent after it, their E2E each over its
	// class's median after the head, geometric mean; 0 when the pass is
	// too small to have one. It is measured whether or not the pass has
	// blocks: the level compares its repetitions' heads.
	Head float64
}

// SteadyBlocksOf cuts a pass's measured requests into blocks, the
// definition results.Store.PassSteadyBlocks computes in SQL: requests in
// send order (a stable sort: ties keep their order), the first and last
// trim left out (the closed loop's first wave, sent at once, and its
// drain; trim is the most requests in flight, c), the E2E of each divided
// by its class's median over those left, then n / SteadyBlockSize(trim)
// blocks as SQL's NTILE cuts them (the first n mod k one larger). No
// blocks when fewer than SteadyMinBlocks fit.
func SteadyBlocksOf(reqs []SteadyRequest, trim int64) SteadyBlocks {
	rs := slices.Clone(reqs)
	slices.SortStableFunc(rs, func(a, b SteadyRequest) int { return cmp.Compare(a.SendNS, b.SendNS) })
	trim = max(trim, 0)
	if int64(len(rs)) <= 2*trim {
		return SteadyBlocks{Head: steadyHeadOf(rs, trim)}
	}
	head := steadyHeadOf(rs, trim)
	rs = rs[trim : int64(len(rs))-trim]
	n := int64(len(rs))
	k := n / SteadyBlockSize(trim)
	if k < SteadyMinBlocks {
		return SteadyBlocks{Head: head}
	}
	byClass := map[string][]float64{}
	all := make([]float64, 0, n)
	for _, r := range rs {
		byClass[r.Class] = append(byClass[r.Class], float64(r.E2ENS))
		all = append(all, float64(r.E2ENS))
	}
	classMedian := make(map[string]float64, len(byClass))
	for c, e := range byClass {
		classMedian[c] = median(e)
	}
	out := SteadyBlocks{MedianE2ENS: median(all), Head: head}
	at := int64(0)
	for b := range k {
		size := n / k
		if b < n%k {
			size++
		}
		ratios := make([]float64, 0, size)
		for _, r := range rs[at : at+size] {
			if m := classMedian[r.Class]; m > 0 {
				ratios = append(ratios, float64(r.E2ENS)/m)
			}
		}
		out.Blocks = append(out.Blocks, SteadyBlock{N: size, Ratio: median(ratios)})
		at += size
	}
	return out
}

// median is the middle value, or the mean of the two middle ones (0 for
// none); it sorts its argument.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// SteadyHeadSize is how many requests a pass's head holds at concurrency
// c: its first wave (the c sent at once, which no block holds) and the
// SteadyMinBlock sent after it. Warming is a first-pass effect that a
// freshly started engine spends within its first 20 to 50 requests: at
// c ≥ 16 inside the first wave, where the pass's own blocks cannot see it,
// so the level compares its repetitions' heads (firstHeadSlower).
func SteadyHeadSize(c int64) int64 {
	return max(c, 0) + SteadyMinBlock
}

// steadyHeadOf is the head of requests rs sorted by send instant, at
// concurrency trim: rs[:h] against each class's median over the requests
// after it, the drain (the last trim) left out; 0 when fewer than h
// requests follow the head (the classes' medians would be the head's).
func steadyHeadOf(rs []SteadyRequest, trim int64) float64 {
	trim = max(trim, 0)
	h := SteadyHeadSize(trim)
	end := int64(len(rs)) - trim
	if end-h < h {
		return 0
	}
	byClass := map[string][]float64{}
	for _, r := range rs[h:end] {
		byClass[r.Class] = append(byClass[r.Class], float64(r.E2ENS))
	}
	classMedian := make(map[string]float64, len(byClass))
	for c, e := range byClass {
		classMedian[c] = median(e)
	}
	return SteadyHead(rs[:h], classMedian)
}

// SteadyHead is the head's figure: the geometric mean of its requests'
// E2E each over its class's median after the head (classMedian), those of
// a class without one, or of no E2E, left out; 0 for none. A geometric
// mean, not a median: a fresh engine's warming is steep (its first wave
// several times slower, the requests after it little), and the head's
// median would fall among the little; one request's outlier moves it by
// its log over the head's 20 and more requests.
func SteadyHead(head []SteadyRequest, classMedian map[string]float64) float64 {
	sum, n := 0.0, 0
	for _, r := range head {
		if m := classMedian[r.Class]; m > 0 && r.E2ENS > 0 {
			sum += math.Log(float64(r.E2ENS) / m)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return math.Exp(sum / float64(n))
}
