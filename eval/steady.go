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
// filling caches) serves its first requests slower than its later ones. Three
// checks need nothing but the client's own instants:
//
//   - within a pass, the first time block of requests against the others
//     (SteadyBlocksOf, TrendOf), each request's E2E taken relative to its
//     length class's, the evidence stored per pass (passes.steady_*);
//   - per level, the first repetition's head (its first wave and the
//     requests after it, SteadyHead) against the other repetitions' at the
//     same places (firstHeadSlower): warming is a first-pass effect, the
//     later repetitions are its natural control, and at high concurrency a
//     fresh engine warms within the first wave, which no block holds;
//   - per level, the first repetition's median E2E against the others'
//     (firstRepetitionSlower), for warming that lasts the whole pass.
//
// A level whose first pass shows warming, or whose first repetition is
// slower than the others by either measure, is NOT STEADY: its figures
// describe an engine on its way to steady state, and the verdict does not
// recommend it (cause not_steady), unless the protocol asks only to record
// it (acceptance.steady_state: record). The level's first measured pass is
// the run's first (the baseline, level 1, repetition 1) at level 1, so the
// run's own warming is judged the same way. The test's false-alarm rate and
// power are measured, not assumed: eval/steady_calibration_test.go.

// SteadyNoiseFloor is the smallest slowdown of a whole repetition that
// counts as warming: the first repetition's median E2E must be above the
// others' median by more than this share (or their own range, when
// larger). It catches warming that lasts the whole first pass (the
// built-in engine's over 250 requests at c = 64), which the head, taken
// relative to its own pass, does not see. At 20% a loaded host's bursts
// passed for warming in 2-5% of the levels at c ≥ 32 (the calibration's
// negative controls); at 30%, in none, and the built-in engine's warming
// is still caught at every level.
const SteadyNoiseFloor = 0.30

// SteadyBlockFloor is the noise floor of the test within a pass: its
// first block must be slower than the later blocks' median by more than
// half. Below it, a continuous-batching engine's own variation passes for
// warming too often: the length mix of the corpus's order leaks through
// the batch (a long prompt admitted stalls every request running), by
// ±10-15%, and a block's median varies by as much again. Warming that
// matters is larger: the built-in engine's first steps are 3 times slower,
// a freshly started engine's 3-10 times.
const SteadyBlockFloor = 0.50

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

// Trend is a pass's steady-state test (TrendOf): its first block of
// requests against its later half (SteadyBlocksOf). N is the requests the
// blocks hold, Blocks how many; Effect the first block's ratio over the
// median of the later half's, less 1 (0.60: the first block 60% slower);
// Spread the highest later block's over the same median, less 1: the first
// block must stand above every later block, not only above their middle.
// The later half, not every other block: warming decays over the blocks
// after the first, and a warm engine is what the first is compared with.
// OK is false when the pass had too few blocks.
type Trend struct {
	N, Blocks      int
	Effect, Spread float64
	OK             bool
	// SlowerNS is the first block's slowdown in time: its ratio less the
	// later blocks' median, times the pass's median E2E; FloorNS the
	// absolute floor it must exceed (SteadyFloorNS), set by whoever knows
	// the pass's client delay.
	SlowerNS, FloorNS float64
	// Head is the pass's head ratio (SteadyBlocks.Head), for the level's
	// comparison of its repetitions; 0 when the pass had none.
	Head float64
}

// TrendOf tests a pass's blocks: is the first block slower than the later
// ones, beyond their spread and the floors (SteadyBlockFloor, the absolute
// floor)? The floors are what keep a steady engine's false alarms rare, as
// eval/steady_calibration_test.go measures on simulated closed loops
// (corpus order original, shuffled, reversed; host load and a stall),
// where it also measures the power on warming engines.
func TrendOf(b SteadyBlocks) Trend {
	if len(b.Blocks) < SteadyMinBlocks {
		return Trend{Head: b.Head}
	}
	var rest []float64
	t := Trend{Blocks: len(b.Blocks), Head: b.Head}
	for i, bl := range b.Blocks {
		t.N += int(bl.N)
		if 2*i >= len(b.Blocks) {
			rest = append(rest, bl.Ratio)
		}
	}
	med := median(rest) // sorts rest
	if med <= 0 {
		return Trend{Head: b.Head}
	}
	first := b.Blocks[0].Ratio
	t.Effect, t.Spread = first/med-1, rest[len(rest)-1]/med-1
	t.SlowerNS, t.OK = (first-med)*b.MedianE2ENS, true
	return t
}

// Steady reports whether the test found no warming: the first block no
// slower than the later blocks' median by more than SteadyBlockFloor, or
// no higher than the highest of them, or no slower than FloorNS in time.
// Meaningless unless OK.
func (t Trend) Steady() bool {
	return t.Effect <= max(SteadyBlockFloor, t.Spread) || t.SlowerNS <= t.FloorNS
}

// Describe says what the test found, in words.
func (t Trend) Describe() string {
	dir := "slower"
	if t.Effect < 0 {
		dir = "faster"
	}
	return fmt.Sprintf("the first of %d blocks (%d requests) %.0f%% %s than the later half's median, the slowest later block %.0f%% above it",
		t.Blocks, t.N, math.Abs(t.Effect)*100, dir, t.Spread*100)
}

// FillTrend stores a pass's test in its steady-state columns; nothing
// when the pass had too few blocks (NULL: not tested). steady_trend_z,
// the test before schema version 13, stays NULL.
func FillTrend(p *extractbench.Pass, t Trend) {
	if t.Head > 0 {
		h := t.Head
		p.SteadyHead = &h
	}
	if !t.OK {
		return
	}
	n, k, e, s, ok := int64(t.N), int64(t.Blocks), t.Effect, t.Spread, t.Steady()
	p.SteadyTrendN, p.SteadyBlocks, p.SteadyTrendEffect, p.SteadySpread, p.Steady = &n, &k, &e, &s, &ok
}

// trendOfPass is the stored test of a pass, for the level's reason.
func trendOfPass(p *extractbench.Pass) string {
	switch {
	case p.SteadyTrendN != nil && p.SteadyBlocks != nil && p.SteadyTrendEffect != nil && p.SteadySpread != nil:
		return Trend{N: int(*p.SteadyTrendN), Blocks: int(*p.SteadyBlocks), Effect: *p.SteadyTrendEffect, Spread: *p.SteadySpread}.Describe()
	case p.SteadyTrendN != nil && p.SteadyTrendEffect != nil && p.SteadyTrendZ != nil: // a row from before the block test
		return fmt.Sprintf("early requests slower than late ones by %.0f%% (Mann-Whitney z %.1f over %d requests)", *p.SteadyTrendEffect*100, *p.SteadyTrendZ, *p.SteadyTrendN)
	}
	return "a trend"
}

// steadyTally collects what a level's steady-state check needs.
type steadyTally struct {
	durations map[int]int64   // complete pass mean latency by repetition (passLatencyNS)
	heads     map[int]float64 // the passes' head ratios by repetition
	floorNS   float64         // the largest absolute floor of a pass (SteadyFloorNS)
	firstRep  int             // the lowest repetition counted (0: none yet)
	firstWarm string          // what the first repetition's test found, when it found warming
	trends    []string        // the repetitions whose pass found warming, with what it found
	tested    int             // the passes the test could judge (passes.steady not NULL)
}

func (s *steadyTally) add(p *extractbench.Pass) {
	s.floorNS = max(s.floorNS, SteadyFloorNS(p.LatenessP50NS))
	if ns := passLatencyNS(p); ns > 0 {
		if s.durations == nil {
			s.durations = map[int]int64{}
		}
		s.durations[p.Repetition] = ns
	}
	if p.SteadyHead != nil && *p.SteadyHead > 0 {
		if s.heads == nil {
			s.heads = map[int]float64{}
		}
		s.heads[p.Repetition] = *p.SteadyHead
	}
	warm := p.Steady != nil && !*p.Steady
	if s.firstRep == 0 || p.Repetition < s.firstRep {
		s.firstRep, s.firstWarm = p.Repetition, ""
		if warm {
			s.firstWarm = trendOfPass(p)
		}
	}
	if p.Steady != nil {
		s.tested++
	}
	if warm {
		s.trends = append(s.trends, fmt.Sprintf("repetition %d: %s", p.Repetition, trendOfPass(p)))
	}
}

// reason is why the level is not in steady state; "" when no check
// flagged it. Warming shows first: an engine warms during the first pass
// it serves at a level (the run's first pass, or a batch shape it meets
// for the first time), and the later repetitions run on a warm engine. So
// the level's first measured pass decides alone; a later pass alone does
// not (a steady engine's pass flags by chance in under 1% of passes, as
// the calibration measures, and one of three would be a coin with three
// throws), but most of the tested passes do (an engine that warms again
// every pass).
func (s *steadyTally) reason() string {
	var parts []string
	if r := firstRepetitionSlower(s.durations, s.floorNS); r != "" {
		parts = append(parts, r)
	}
	if r := firstHeadSlower(s.heads, s.durations, s.floorNS); r != "" {
		parts = append(parts, r)
	}
	switch {
	case s.firstWarm != "":
		parts = append(parts, fmt.Sprintf("the level's first pass (repetition %d) warming: %s", s.firstRep, s.firstWarm))
	case len(s.trends) > 0 && 2*len(s.trends) > s.tested:
		parts = append(parts, fmt.Sprintf("warming within the pass in %d of %d repetitions: ", len(s.trends), s.tested)+strings.Join(s.trends, "; "))
	}
	return strings.Join(parts, "; ")
}

// firstRepetitionSlower names a first repetition slower than the others by
// more than the noise floor and floorNS: one that still warmed the engine;
// "" otherwise. Repetitions are read by their mean latency (Little's law),
// not their median E2E, which jumps between a pass's latency modes with
// the send order while a warming engine slows the whole pass.
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
		return fmt.Sprintf("repetition 1's mean latency %s, the others' %s: %.0f%% slower, beyond the noise floor %.0f%%",
			FormatDuration(first), FormatDuration(int64(med)), slower*100, noise*100)
	}
	return ""
}

// passLatencyNS is a complete pass's mean latency: in a closed loop, by
// Little's law, the requests it kept in flight times its duration over its
// documents; in a rate sweep (whose duration is the schedule's) and where
// those are unknown, its median E2E. 0 when it has neither.
func passLatencyNS(p *extractbench.Pass) int64 {
	if p.Mode != extractbench.ModeRate && p.SentConcurrency > 0 && p.DurationNS > 0 && p.Docs > 0 {
		return int64(float64(p.SentConcurrency) * float64(p.DurationNS) / float64(p.Docs))
	}
	if p.E2EP50NS != nil && *p.E2EP50NS > 0 {
		return *p.E2EP50NS
	}
	return 0
}

// SteadyHeadFloor is how much slower the first repetition's head
// (SteadyHead) must be than the slowest other repetition's to count as
// warming. Each head is relative to its own pass, at the same places in
// send order, so the first wave's own cost (every request admitted at
// once) is in every repetition's alike; what is left is the corpus order
// (the same documents in each repetition, or a fresh shuffle) and a loaded
// host, which move a head by up to 30-40% (the calibration's negative
// controls), while warming puts it 50% to several times above.
const SteadyHeadFloor = 0.50

// firstHeadSlower compares the first repetition's head with the others':
// slower than the slowest of them by more than SteadyHeadFloor, and by
// more than floorNS in time (the ratio's excess times the others' median
// E2E), is a first repetition that warmed the engine. "" when it is not,
// or when there is no first repetition's head and another to compare.
func firstHeadSlower(heads map[int]float64, durations map[int]int64, floorNS float64) string {
	first, ok := heads[1]
	if !ok || len(heads) < 2 {
		return ""
	}
	ref, others := 0.0, 0
	var e2e []float64
	for rep, h := range heads {
		if rep == 1 {
			continue
		}
		ref, others = max(ref, h), others+1
		if d, ok := durations[rep]; ok {
			e2e = append(e2e, float64(d))
		}
	}
	if ref <= 0 {
		return ""
	}
	if slower := first/ref - 1; slower > SteadyHeadFloor && slower*median(e2e) > floorNS {
		return fmt.Sprintf("repetition 1's first wave and the %d requests after it %.0f%% slower than in the slowest of the %d other repetitions (each relative to its pass's length classes), beyond the floor %.0f%%",
			SteadyMinBlock, slower*100, others, SteadyHeadFloor*100)
	}
	return ""
}
