package eval

import (
	"fmt"
	"slices"

	"github.com/extractbench/extractbench"
)

// The one rule by which a level's figure is made from its passes, used by
// the stdout table, -json, the verdict, the report, compare, plan and
// memory alike (README "One truth per figure", results/SCHEMA.md):
//   - only complete passes count; interrupted ones are counted apart;
//   - documents, accepted documents, failures and output tokens are summed
//     over the repetitions, so the accepted share is pooled
//     (accepted / documents of all repetitions);
//   - per-pass figures (latency percentiles, throughput, pass duration) are
//     the median over repetitions, with their range (Spread);
//   - peaks (memory, KV, running, waiting, preemptions) are the highest
//     over repetitions;
//   - client-bound repetitions are left out when most of the level's
//     were not (levelBuilder.leftOut), and the level's steady state is
//     checked (steady.go).

// Spread is one per-pass figure over the complete repetitions of a level:
// the median (linear interpolation, as every percentile here) and the
// range. N = 0 means no repetition had the figure.
type Spread struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// Most is the value most repetitions reach: the lower middle of the
	// sorted repetitions (the median itself for an odd count, the lower of
	// two for two). A limit below it is exceeded by a strict majority.
	Most float64 `json:"-"`
}

func spreadOf(vs []float64) Spread {
	if len(vs) == 0 {
		return Spread{}
	}
	d := Describe(vs)
	sorted := slices.Sorted(slices.Values(vs))
	return Spread{N: d.N, Median: d.P50, Min: d.Min, Max: d.Max, Most: sorted[(len(sorted)-1)/2]}
}

// MostExceed reports whether a strict majority of the repetitions exceed
// limit: the rule by which a latency objective judges a level, so that one
// noisy repetition of two or three does not flip its usability (with two,
// both must exceed it; with three, two).
func (s Spread) MostExceed(limit float64) bool { return s.N > 0 && s.Most > limit }

// Qualifier says how the figure was made when it rests on more than one
// repetition: " (median of 3 repetitions, 170ms–210ms)" for durations in
// nanoseconds, the range at the digits it supports; "" for one repetition.
func (s Spread) Qualifier() string {
	switch {
	case s.N <= 1:
		return ""
	case !s.varies():
		return fmt.Sprintf(" (median of %d repetitions)", s.N)
	}
	return fmt.Sprintf(" (median of %d repetitions, %s)", s.N, s.DurationRange())
}

// Ptr returns the median, or nil when no repetition had the figure.
func (s Spread) Ptr() *float64 {
	if s.N == 0 {
		return nil
	}
	m := s.Median
	return &m
}

// Level is what one level of a series measured over its complete
// repetitions, made by the rule above, with its verdict.
type Level struct {
	Variant     string            `json:"variant"`
	Mode        extractbench.Mode `json:"mode"`
	Level       int               `json:"level"`
	Phase       string            `json:"phase"`       // baseline, sweep, retry or probe
	Repetitions int               `json:"repetitions"` // complete passes aggregated
	Planned     int               `json:"planned"`     // repetitions the protocol planned; 0 = unknown
	Interrupted int               `json:"interrupted"` // passes cut by an interruption, left out

	Docs         int64                      `json:"docs"`
	Accepted     int64                      `json:"accepted_docs"`
	Failures     extractbench.FailureCounts `json:"-"`
	OutputTokens int64                      `json:"output_tokens"`

	TTFTP50NS        Spread `json:"ttft_p50_ns"`
	TTFTP95NS        Spread `json:"ttft_p95_ns"`
	E2EP50NS         Spread `json:"e2e_p50_ns"`
	E2EP95NS         Spread `json:"e2e_p95_ns"`
	E2ESchedP95NS    Spread `json:"e2e_sched_p95_ns"`
	ClientQueueP95NS Spread `json:"client_queue_p95_ns"`
	TPOTP50NS        Spread `json:"tpot_p50_ns"`
	DurationNS       Spread `json:"duration_ns"`
	OutputTokensPerS Spread `json:"output_tokens_per_s"`
	AcceptedPerS     Spread `json:"accepted_per_s"`
	DocsPerHour      Spread `json:"docs_per_hour"` // accepted documents per hour
	PromptTokensPerS Spread `json:"prompt_tokens_per_s"`
	TotalTokensPerS  Spread `json:"total_tokens_per_s"`

	PeakGPUMemBytes         *int64   `json:"peak_gpu_mem_bytes"`
	PeakTorchAllocatedBytes *int64   `json:"peak_torch_allocated_bytes"`
	PeakTorchReservedBytes  *int64   `json:"peak_torch_reserved_bytes"`
	PeakKVUsage             *float64 `json:"peak_kv_usage"`
	MaxRunning              *int64   `json:"observed_max_running"`
	MaxWaiting              *int64   `json:"observed_max_waiting"`
	Preemptions             *int64   `json:"preemptions"` // the highest of a pass

	// EngineCaptures sums the engine's graph captures and compilations over
	// the repetitions: above 0, the level was not measured in steady state.
	EngineCaptures *int64 `json:"engine_captures"`
	// OutputsChanged and VerdictsChanged sum, over the repetitions, the
	// documents whose output (and verdict) differ from level 1's.
	OutputsChanged  *int64 `json:"outputs_changed"`
	VerdictsChanged *int64 `json:"verdicts_changed"`

	// Load as it arrived and as it was sent, and the client's self-check
	// (rate sweeps; MEASUREMENT.md section 3): per-pass figures, median over
	// repetitions. ClientBound counts the repetitions flagged client_bound.
	OfferedRate      Spread `json:"offered_rate"`
	AchievedRate     Spread `json:"achieved_rate"`
	LatenessP50NS    Spread `json:"lateness_p50_ns"`
	LatenessP99NS    Spread `json:"lateness_p99_ns"`
	ClientDelayP99NS Spread `json:"client_delay_p99_ns"`
	ClientCPUShare   Spread `json:"client_cpu_share"`
	ClientBound      int    `json:"client_bound"`
	// ClientBoundLeftOut counts the client-bound repetitions left out of
	// the level's figures because most of its repetitions were not
	// (levelBuilder.leftOut).
	ClientBoundLeftOut int `json:"client_bound_left_out,omitempty"`

	// Latency objectives with quality: the objectives' figures (median over
	// repetitions), on-time requests and accepted on-time documents (summed),
	// and goodput (accepted on-time documents per second, median).
	TTFTSchedP99NS Spread `json:"ttft_sched_p99_ns"`
	TPOTP90NS      Spread `json:"tpot_p90_ns"`
	TPOTP99NS      Spread `json:"tpot_p99_ns"`
	OnTime         int64  `json:"on_time"`
	OnTimeAccepted int64  `json:"on_time_accepted"`
	Goodput        Spread `json:"goodput"`

	// NotSteady says why the level was not in steady state (eval/steady.go:
	// a first repetition slower than the others, a trend within a pass);
	// "" when it was, or could not be told.
	NotSteady string `json:"not_steady,omitempty"`

	// The engine's prompt cache (cacheshare.go): the passes' cached prompt
	// share (nil when none reported it), what became of the cache before
	// them unless every one was reset ("kept ×3", "failed: ... ×1"), and
	// CacheNote, why the level's figures are not compared on equal terms
	// (its share strays from the baseline's, or its repetitions' from one
	// another, beyond CacheShareTolerance); "" when they are.
	CachedPromptShare *Spread `json:"cached_prompt_share,omitempty"`
	CacheReset        string  `json:"cache_reset,omitempty"`
	CacheNote         string  `json:"cache_note,omitempty"`

	Verdict Verdict `json:"verdict"`
}

// GoodShare is the pooled share of documents accepted and on time: what
// goodput counts, over documents of every complete repetition.
func (l *Level) GoodShare() float64 {
	if l.Docs <= 0 {
		return 0
	}
	return float64(l.OnTimeAccepted) / float64(l.Docs)
}

// Share is the pooled accepted share: accepted documents over documents of
// every complete repetition. Failed documents stay in the denominator.
func (l *Level) Share() float64 {
	if l.Docs <= 0 {
		return 0
	}
	return float64(l.Accepted) / float64(l.Docs)
}

// FailureCountsByName returns the failure counts keyed by class, for JSON.
func (l *Level) FailureCountsByName() map[extractbench.Failure]int64 {
	m := make(map[extractbench.Failure]int64, len(extractbench.Failures))
	for i, f := range extractbench.Failures {
		m[f] = l.Failures[i]
	}
	return m
}

// levelBuilder collects the passes of one level (vegeta's Metrics shape:
// add, then close once).
type levelBuilder struct {
	l                                                Level
	ttft50, ttft95, e2e50, e2e95, sched, queue, tpot []float64
	dur, tps, aps, dph, ptps, ttps                   []float64
	offered, achieved, late50, late99, delay99, cpu  []float64
	ttftSched99, tpot90, tpot99, goodput             []float64
	steady                                           steadyTally
	cache                                            cacheTally
	passes                                           []extractbench.Pass // as added; counted at close
}

// add keeps one pass of the level; close counts them.
func (b *levelBuilder) add(p *extractbench.Pass) { b.passes = append(b.passes, *p) }

// leftOut marks the client-bound passes left out of the level's figures:
// when most of the level's complete repetitions were not client-bound, the
// client-bound ones (a loaded machine, not the engine, set their pace) are
// left out, so that one unlucky pass does not decide the level; otherwise
// every pass stays and the level is client-bound. The runner records a
// client_bound_left_out decision naming them.
func (b *levelBuilder) leftOut() map[int]bool {
	complete, bound := 0, 0
	for i := range b.passes {
		if p := &b.passes[i]; p.Complete() {
			complete++
			if p.ClientBound != nil && *p.ClientBound {
				bound++
			}
		}
	}
	if bound == 0 || 2*(complete-bound) <= complete {
		return nil
	}
	out := map[int]bool{}
	for i := range b.passes {
		if p := &b.passes[i]; p.Complete() && p.ClientBound != nil && *p.ClientBound {
			out[i] = true
		}
	}
	return out
}

func (b *levelBuilder) count(p *extractbench.Pass) {
	l := &b.l
	if l.Repetitions == 0 && l.Interrupted == 0 {
		l.Variant, l.Mode, l.Level, l.Phase = p.Variant, p.Mode, p.Level, p.Phase
	}
	if !p.Complete() {
		l.Interrupted++
		return
	}
	l.Repetitions++
	l.Docs += p.Docs
	l.Accepted += p.Accepted
	l.Failures = l.Failures.Plus(p.Failures)
	l.OutputTokens += p.OutputTokens
	b.ttft50, b.ttft95 = appendNS(b.ttft50, p.TTFTP50NS), appendNS(b.ttft95, p.TTFTP95NS)
	b.e2e50, b.e2e95 = appendNS(b.e2e50, p.E2EP50NS), appendNS(b.e2e95, p.E2EP95NS)
	b.sched, b.queue, b.tpot = appendNS(b.sched, p.E2ESchedP95NS), appendNS(b.queue, p.ClientQueueP95NS), appendNS(b.tpot, p.TPOTP50NS)
	if p.DurationNS > 0 {
		b.dur = append(b.dur, float64(p.DurationNS))
	}
	b.tps, b.aps, b.dph = appendF(b.tps, p.OutputTokensPerS), appendF(b.aps, p.AcceptedPerS), appendF(b.dph, p.DocsPerHour)
	l.PeakGPUMemBytes = maxOf(l.PeakGPUMemBytes, p.PeakGPUMemBytes)
	l.PeakTorchAllocatedBytes = maxOf(l.PeakTorchAllocatedBytes, p.PeakTorchAllocatedBytes)
	l.PeakTorchReservedBytes = maxOf(l.PeakTorchReservedBytes, p.PeakTorchReservedBytes)
	l.PeakKVUsage = maxOf(l.PeakKVUsage, p.PeakKVUsage)
	l.MaxRunning = maxOf(l.MaxRunning, p.ObservedMaxRunning)
	l.MaxWaiting = maxOf(l.MaxWaiting, p.ObservedMaxWaiting)
	l.Preemptions = maxOf(l.Preemptions, p.Preemptions)
	b.ptps, b.ttps = appendF(b.ptps, p.PromptTokensPerS), appendF(b.ttps, p.TotalTokensPerS)
	l.EngineCaptures = sumOf(l.EngineCaptures, p.EngineCaptures)
	l.OutputsChanged = sumOf(l.OutputsChanged, p.OutputsChanged)
	l.VerdictsChanged = sumOf(l.VerdictsChanged, p.VerdictsChanged)
	b.offered, b.achieved = appendF(b.offered, p.OfferedRate), appendF(b.achieved, p.AchievedRate)
	b.late50, b.late99 = appendNS(b.late50, p.LatenessP50NS), appendNS(b.late99, p.LatenessP99NS)
	b.delay99, b.cpu = appendNS(b.delay99, p.ClientDelayP99NS), appendF(b.cpu, p.ClientCPUShare)
	if p.ClientBound != nil && *p.ClientBound {
		l.ClientBound++
	}
	b.ttftSched99, b.tpot90, b.tpot99 = appendNS(b.ttftSched99, p.TTFTSchedP99NS), appendNS(b.tpot90, p.TPOTP90NS), appendNS(b.tpot99, p.TPOTP99NS)
	if p.OnTime != nil {
		l.OnTime += *p.OnTime
	} else {
		l.OnTime += p.Docs // a row from before on-time was judged
	}
	l.OnTimeAccepted += p.GoodAccepted()
	b.goodput = appendF(b.goodput, p.Goodput)
	b.steady.add(p)
	b.cache.add(p)
}

func (b *levelBuilder) close() Level {
	out := b.leftOut()
	for i := range b.passes {
		if out[i] {
			b.l.ClientBoundLeftOut++
			continue
		}
		b.count(&b.passes[i])
	}
	l := b.l
	l.TTFTP50NS, l.TTFTP95NS = spreadOf(b.ttft50), spreadOf(b.ttft95)
	l.E2EP50NS, l.E2EP95NS = spreadOf(b.e2e50), spreadOf(b.e2e95)
	l.E2ESchedP95NS, l.ClientQueueP95NS, l.TPOTP50NS = spreadOf(b.sched), spreadOf(b.queue), spreadOf(b.tpot)
	l.DurationNS, l.OutputTokensPerS = spreadOf(b.dur), spreadOf(b.tps)
	l.AcceptedPerS, l.DocsPerHour = spreadOf(b.aps), spreadOf(b.dph)
	l.PromptTokensPerS, l.TotalTokensPerS = spreadOf(b.ptps), spreadOf(b.ttps)
	l.OfferedRate, l.AchievedRate = spreadOf(b.offered), spreadOf(b.achieved)
	l.LatenessP50NS, l.LatenessP99NS = spreadOf(b.late50), spreadOf(b.late99)
	l.ClientDelayP99NS, l.ClientCPUShare = spreadOf(b.delay99), spreadOf(b.cpu)
	l.TTFTSchedP99NS, l.TPOTP90NS, l.TPOTP99NS = spreadOf(b.ttftSched99), spreadOf(b.tpot90), spreadOf(b.tpot99)
	l.Goodput = spreadOf(b.goodput)
	l.NotSteady = b.steady.reason()
	b.cache.close(&l)
	return l
}

// Series is one (variant, mode): the unit a sweep grows and a verdict
// judges, with its levels ascending.
type Series struct {
	Variant        string            `json:"variant"`
	Mode           extractbench.Mode `json:"mode"`
	Levels         []Level           `json:"levels"`
	Recommendation Recommendation    `json:"recommendation"`
}

// Level returns the series' level n, or nil when it was not measured.
func (s *Series) Level(n int) *Level {
	for i := range s.Levels {
		if s.Levels[i].Level == n {
			return &s.Levels[i]
		}
	}
	return nil
}

// Recommended returns the recommended (interactive) level, or nil when no
// level is usable: every page's "recommended" reads it, so that none names
// a level (a rate sweep's sync) the recommendation did not.
func (s *Series) Recommended() *Level {
	if !s.Recommendation.Usable() {
		return nil
	}
	return s.Level(s.Recommendation.Recommended)
}

// Baseline returns the baseline level (phase baseline, else the lowest), or
// nil when the series has no complete pass.
func (s *Series) Baseline() *Level {
	if len(s.Levels) == 0 {
		return nil
	}
	for i := range s.Levels {
		if s.Levels[i].Phase == extractbench.PhaseBaseline {
			return &s.Levels[i]
		}
	}
	return &s.Levels[0]
}

// Planned is what the protocol planned for each series, so that a cut sweep
// is called partial. The zero Planned knows nothing and never flags.
type Planned struct {
	Levels      []int
	Repetitions int
	// ByVariant, when it names a variant, replaces Levels for its series:
	// an auto rate sweep chooses each variant's rates as it measures it.
	ByVariant map[string][]int
}

// levelsOf is the planned levels of a variant's series.
func (p Planned) levelsOf(variant string) []int {
	if l, ok := p.ByVariant[variant]; ok {
		return l
	}
	return p.Levels
}

// Aggregator makes levels from pass rows by the rule above and judges
// them: Add every pass of a run, then Close once.
type Aggregator struct {
	acc    extractbench.Acceptance
	plan   Planned
	series map[[2]string]map[int]*levelBuilder
	order  [][2]string
}

// NewAggregator returns an aggregator that judges with acc and checks the
// series against plan.
func NewAggregator(acc extractbench.Acceptance, plan Planned) *Aggregator {
	return &Aggregator{acc: acc, plan: plan, series: map[[2]string]map[int]*levelBuilder{}}
}

// Add counts one pass row.
func (a *Aggregator) Add(p *extractbench.Pass) {
	k := [2]string{p.Variant, string(p.Mode)}
	levels := a.series[k]
	if levels == nil {
		levels = map[int]*levelBuilder{}
		a.series[k] = levels
		a.order = append(a.order, k)
	}
	b := levels[p.Level]
	if b == nil {
		b = &levelBuilder{}
		levels[p.Level] = b
	}
	b.add(p)
}

// Close returns the series in the order their first pass was added, each
// with its levels ascending, judged, and its recommendation.
func (a *Aggregator) Close() []Series {
	out := make([]Series, 0, len(a.order))
	for _, k := range a.order {
		s := Series{Variant: k[0], Mode: extractbench.Mode(k[1])}
		builders := a.series[k]
		ns := make([]int, 0, len(builders))
		for n := range builders {
			ns = append(ns, n)
		}
		slices.Sort(ns)
		for _, n := range ns {
			l := builders[n].close()
			l.Planned = a.plan.Repetitions
			if l.Repetitions > 0 {
				s.Levels = append(s.Levels, l)
			}
		}
		labelCacheShares(&s)
		recommend(&s, a.acc)
		a.flagMissing(&s, builders)
		out = append(out, s)
	}
	return out
}

// flagMissing marks a recommendation partial when a planned level or
// repetition has no complete pass. A client-bound repetition left out of the
// level's figures was measured (its decision says why it is out), so it does
// not make the sweep partial.
func (a *Aggregator) flagMissing(s *Series, builders map[int]*levelBuilder) {
	r := &s.Recommendation
	stopAt := 0 // levels above a memory failure may be skipped on purpose (a recorded decision)
	for _, l := range s.Levels {
		if l.Failures.Of(extractbench.Memory) > 0 && l.Phase != extractbench.PhaseBaseline {
			stopAt = l.Level
			break
		}
	}
	for _, n := range a.plan.levelsOf(s.Variant) {
		if stopAt > 0 && n > stopAt {
			continue
		}
		got := 0
		if b := builders[n]; b != nil {
			got = b.l.Repetitions + b.l.ClientBoundLeftOut
		}
		if got < a.plan.Repetitions {
			r.Missing = append(r.Missing, fmt.Sprintf("level %s (%d of %d repetitions)", LevelName(s.Mode, n), got, a.plan.Repetitions))
		}
	}
	if len(r.Missing) > 0 {
		r.Partial = true
		r.Why = r.why()
	}
}

// AggregateLevels runs passes through one Aggregator.
func AggregateLevels(passes []extractbench.Pass, acc extractbench.Acceptance, plan Planned) []Series {
	a := NewAggregator(acc, plan)
	for i := range passes {
		a.Add(&passes[i])
	}
	return a.Close()
}

func appendNS(s []float64, v *int64) []float64 {
	if v == nil {
		return s
	}
	return append(s, float64(*v))
}

func appendF(s []float64, v *float64) []float64 {
	if v == nil {
		return s
	}
	return append(s, *v)
}

func maxOf[T int64 | float64](cur, v *T) *T {
	if v == nil || (cur != nil && *cur >= *v) {
		return cur
	}
	x := *v
	return &x
}

func sumOf(cur, v *int64) *int64 {
	if v == nil {
		return cur
	}
	x := *v
	if cur != nil {
		x += *cur
	}
	return &x
}

// PlannedOf is what m's protocol planned for every series, for the
// aggregator. An auto sweep's levels are each variant's chosen rates, once
// chosen.
func PlannedOf(m *extractbench.Manifest) Planned {
	p := Planned{Levels: m.PlannedLevels(), Repetitions: m.Sweep.Repetitions}
	for _, v := range m.Variants {
		if v.AutoLevels != nil {
			if p.ByVariant == nil {
				p.ByVariant = map[string][]int{}
			}
			p.ByVariant[v.Name] = append(slices.Clone(p.Levels), v.AutoLevels.Levels...)
		}
	}
	return p
}
