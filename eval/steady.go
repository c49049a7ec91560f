package eval

import (
	"github.com/extractbench/extractbench"

	"fmt"
	"math"
	"slices"
	"strings"
)

// Steady state, checked without the engine's help (MEASUREMENT.md section
// 2): an engine that is still warming (compiling kernels, capturing graphs,
// filling caches) serves its first requests slower than its later ones. Two
// checks need nothing but the client's own instants:
//
//   - within a pass, a trend test: the early and the late requests of the
//     same length class are compared (TrendOf) and the evidence stored per
//     pass (passes.steady_trend_*, passes.steady);
//   - per level, the repetitions: a first repetition slower than the others
//     beyond the noise floor (firstRepetitionSlower), by its median E2E, which
//     a burst of load on the machine that slows a few requests leaves alone.
//
// A level either check flags is NOT STEADY: its figures describe an engine
// on its way to steady state, and the verdict does not recommend it (cause
// not_steady), unless the protocol asks only to record it
// (acceptance.steady_state: record).

// SteadyNoiseFloor is the smallest slowdown that counts as a trend: early
// requests (or the first repetition) must be slower than the late ones (the
// other repetitions) by more than this share, so that a statistically
// certain but tiny drift on a large pass, or a loaded machine's jitter, is
// not called warming. The repetition check widens it to the other
// repetitions' own spread when that is larger.
const SteadyNoiseFloor = 0.20

// SteadyResolutionNS is the smallest slowdown, in time, that can be told
// from the client's own timing: timers, the scheduler of a machine the
// client shares. A pass's floor is the larger of it and the client's own
// median delay in the pass (passes.lateness_p50_ns: a median, as the trend
// compares medians): an engine that warms (compiles, captures graphs)
// costs tens of milliseconds and more, while a loaded machine delays
// every request by about its client's delay.
const SteadyResolutionNS = 5e6

// SteadyFloorNS is the absolute floor of a pass whose client's median
// delay is given (nil: unknown).
func SteadyFloorNS(clientDelayNS *int64) float64 {
	if clientDelayNS != nil {
		return max(SteadyResolutionNS, float64(*clientDelayNS))
	}
	return SteadyResolutionNS
}

// SteadyTrendZ is the stratified Mann-Whitney statistic (TrendOf) beyond
// which early requests are slower than late ones: z ≥ 3.09 is p < 0.001,
// one-sided, so that the 40-odd passes of a run seldom flag one by chance.
// One-sided: warming makes the first requests slow; late requests slower
// than early ones are not a warming engine (and on a shared machine most
// often its load).
const SteadyTrendZ = 3.09

// SteadyMinGroup is the fewest early (and late) requests a length class
// needs to enter the trend test; SteadyMinRequests the fewest compared in
// all. Below them the pass is not tested (passes.steady NULL).
const (
	SteadyMinGroup    = 5
	SteadyMinRequests = 20
)

// TrendGroup is one length class of a pass in the trend test: its requests
// in the order they were sent, the first and last n sent at once left out
// (a closed loop's ramp up and drain), then cut in thirds by send order;
// the first third is early, the last late. RankSumEarly is the sum of the
// early requests' ranks among early and late by E2E (ties get their mean
// rank); the medians are of their E2E in ns.
type TrendGroup struct {
	Class        string
	NEarly       int
	NLate        int
	RankSumEarly float64
	MedianEarly  float64
	MedianLate   float64
}

// Trend is a pass's trend test: N requests compared (early + late, over the
// classes that entered), Z the stratified Mann-Whitney statistic (positive:
// early requests slower), Effect the early median over the late one, less
// 1, averaged over the classes weighted by their requests. OK is false when
// too few requests entered.
type Trend struct {
	N      int
	Z      float64
	Effect float64
	OK     bool
	// SlowerNS is the early median less the late one, ns, averaged over
	// the classes as Effect; FloorNS the absolute floor it must exceed
	// (SteadyFloorNS), set by whoever knows the pass's client delay.
	SlowerNS, FloorNS float64
}

// TrendOf runs the trend test on a pass's groups. Mann-Whitney's U, not a
// regression slope (Theil-Sen): latencies are skewed and heavy-tailed, U
// assumes no distribution, and it needs one sort, where Theil-Sen takes
// every pair of a million-request pass. Summing U over the length classes
// (a stratified test: each class is ranked among its own) keeps the corpus's
// mix of short and long documents out of the comparison.
func TrendOf(groups []TrendGroup) Trend {
	var t Trend
	var dev, variance, wsum, weffect, wslower float64
	for _, g := range groups {
		n1, n2 := float64(g.NEarly), float64(g.NLate)
		if g.NEarly < SteadyMinGroup || g.NLate < SteadyMinGroup || g.MedianLate <= 0 {
			continue
		}
		u := g.RankSumEarly - n1*(n1+1)/2
		dev += u - n1*n2/2
		variance += n1 * n2 * (n1 + n2 + 1) / 12
		w := n1 + n2
		wsum += w
		weffect += w * (g.MedianEarly/g.MedianLate - 1)
		wslower += w * (g.MedianEarly - g.MedianLate)
		t.N += g.NEarly + g.NLate
	}
	if t.N < SteadyMinRequests || variance <= 0 {
		return Trend{N: t.N}
	}
	t.Z, t.Effect, t.SlowerNS, t.OK = dev/math.Sqrt(variance), weffect/wsum, wslower/wsum, true
	return t
}

// Steady reports whether the test found no warming: Z below SteadyTrendZ,
// or early requests slower by no more than the noise floor, or by no more
// than FloorNS in time. Meaningless unless OK.
func (t Trend) Steady() bool {
	return t.Z < SteadyTrendZ || t.Effect <= SteadyNoiseFloor || t.SlowerNS <= t.FloorNS
}

// Describe says what the test found, in words.
func (t Trend) Describe() string {
	dir := "early requests slower than late ones"
	if t.Effect < 0 {
		dir = "late requests slower than early ones"
	}
	return fmt.Sprintf("%s by %.0f%% (Mann-Whitney z %.1f over %d requests)", dir, math.Abs(t.Effect)*100, t.Z, t.N)
}

// FillTrend stores a pass's trend test in its steady-state columns; nothing
// when the pass had too few requests (NULL: not tested).
func FillTrend(p *extractbench.Pass, t Trend) {
	if !t.OK {
		return
	}
	n, z, e, ok := int64(t.N), t.Z, t.Effect, t.Steady()
	p.SteadyTrendN, p.SteadyTrendZ, p.SteadyTrendEffect, p.Steady = &n, &z, &e, &ok
}

// trendOfPass is the stored test of a pass, for the level's reason.
func trendOfPass(p *extractbench.Pass) Trend {
	if p.SteadyTrendZ == nil || p.SteadyTrendEffect == nil || p.SteadyTrendN == nil {
		return Trend{}
	}
	return Trend{N: int(*p.SteadyTrendN), Z: *p.SteadyTrendZ, Effect: *p.SteadyTrendEffect, OK: true}
}

// steadyTally collects what a level's steady-state check needs.
type steadyTally struct {
	durations map[int]int64 // complete pass median E2E by repetition
	floorNS   float64       // the largest absolute floor of a pass (SteadyFloorNS)
	trends    []string      // the repetitions whose pass found a trend, with what it found
	tested    int           // the passes the trend test could judge (passes.steady not NULL)
}

func (s *steadyTally) add(p *extractbench.Pass) {
	s.floorNS = max(s.floorNS, SteadyFloorNS(p.LatenessP50NS))
	if p.E2EP50NS != nil && *p.E2EP50NS > 0 {
		if s.durations == nil {
			s.durations = map[int]int64{}
		}
		s.durations[p.Repetition] = *p.E2EP50NS
	}
	if p.Steady != nil {
		s.tested++
	}
	if p.Steady != nil && !*p.Steady {
		s.trends = append(s.trends, fmt.Sprintf("repetition %d: %s", p.Repetition, trendOfPass(p).Describe()))
	}
}

// reason is why the level is not in steady state; "" when neither check
// flagged it.
func (s *steadyTally) reason() string {
	var parts []string
	if r := firstRepetitionSlower(s.durations, s.floorNS); r != "" {
		parts = append(parts, r)
	}
	// A trend decides the level only in most of its tested passes: one
	// unlucky repetition on a loaded client does not (as with client-bound
	// repetitions); each pass's test stays recorded either way.
	if len(s.trends) > 0 && 2*len(s.trends) > s.tested {
		parts = append(parts, fmt.Sprintf("a trend within the pass in %d of %d repetitions: ", len(s.trends), s.tested)+strings.Join(s.trends, "; "))
	}
	return strings.Join(parts, "; ")
}

// firstRepetitionSlower compares the first repetition's median E2E with the
// median of the others': slower by more than the noise floor (the larger of
// SteadyNoiseFloor and the others' own range over their median) is a
// first repetition that still warmed the engine, when the difference also
// exceeds floorNS in time. "" when it is not, or when there is no first
// repetition and another to compare it with.
func firstRepetitionSlower(durations map[int]int64, floorNS float64) string {
	first, ok := durations[1]
	if !ok || len(durations) < 2 {
		return ""
	}
	var rest []float64
	for rep, d := range durations {
		if rep != 1 {
			rest = append(rest, float64(d))
		}
	}
	slices.Sort(rest)
	med := Describe(rest).P50
	if med <= 0 {
		return ""
	}
	noise := max(SteadyNoiseFloor, (rest[len(rest)-1]-rest[0])/med)
	if slower := float64(first)/med - 1; slower > noise && float64(first)-med > floorNS {
		return fmt.Sprintf("repetition 1's median E2E %s, the others' %s: %.0f%% slower, beyond the noise floor %.0f%%",
			FormatDuration(first), FormatDuration(int64(med)), slower*100, noise*100)
	}
	return ""
}
