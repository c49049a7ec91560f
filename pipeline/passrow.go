package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline/protocol"
	"github.com/extractbench/extractbench/pipeline/telemetry"
	"github.com/extractbench/extractbench/results"
)

// passTally is what a pass's rows add up to, read one row at a time
// (results.Store.EachPassRecord) with the order statistics SQLite computes
// (results.Store.PassOrderStats): nothing grows with the pass's size but
// the handful of resume segments.
type passTally struct {
	acc                                                    eval.PassAccumulator
	order                                                  results.PassOrderStats
	docs, outTokens, promptTokens, usage, onTime, onTimeOK int64
	tokens                                                 tokenTally
	cache                                                  cacheTally               // prompt cache (promptcache.go)
	drift                                                  extractbench.PromptDrift // tokenizer drift (promptdrift.go), from SQLite
	sched, send                                            instantSpan
	segments                                               [][]segment      // activeSpan's: by shard (one for a run), one per resume boundary
	endpoints                                              map[string]int64 // requests per replica (a few keys); the variant's replicas start at 0
	trend                                                  eval.Trend       // early against late requests (eval/steady.go)
}

// segment is the first t_send and last t_done of the requests sent in
// [lo, hi) of one invocation of the run.
type segment struct{ lo, hi, first, last int64 }

// tallyPass reads the pass's rows back from the store; endpoints are the
// variant's replicas, so that one that answered nothing counts 0.
func (rs *passAccount) tallyPass(ctx context.Context, key extractbench.PassKey, endpoints []string) (*passTally, error) {
	t := rs.newTally(endpoints)
	err := rs.store.EachPassRecord(ctx, key, func(r *extractbench.Record) {
		t.add(r)
		if tallyRowHook != nil {
			tallyRowHook(t.docs)
		}
	})
	if err != nil {
		return nil, err
	}
	if t.order, err = rs.store.PassOrderStats(ctx, key); err != nil {
		return t, err
	}
	reference, _ := rs.driftReference(key.Variant)
	if t.drift, err = rs.store.PassPromptDrift(ctx, key, reference); err != nil {
		return t, err
	}
	// The trend test leaves out the ramp up and the drain: the first and
	// last sends of as many requests as were in flight at once.
	if rs.merged != nil {
		// A merged pass's requests come from shards that ran apart, each
		// with its own start: early and late are not one engine's.
		return t, nil
	}
	groups, err := rs.store.PassTrend(ctx, key, t.order.MaxInFlight)
	t.trend = eval.TrendOf(groups)
	return t, err
}

// newTally is an empty tally with the run's segments: one per invocation
// (the first, then each resume); in a merge, those of every shard.
func (rs *passAccount) newTally(endpoints []string) *passTally {
	t := &passTally{endpoints: make(map[string]int64, len(endpoints))}
	for _, e := range endpoints {
		t.endpoints[e] = 0
	}
	segments := func(resumes []int64) []segment {
		bounds := append([]int64{0}, resumes...)
		out := make([]segment, len(bounds))
		for i, lo := range bounds {
			hi := int64(1<<63 - 1)
			if i+1 < len(bounds) {
				hi = bounds[i+1]
			}
			out[i] = segment{lo: lo, hi: hi}
		}
		return out
	}
	if rs.merged == nil {
		t.segments = [][]segment{segments(rs.resumes)}
		return t
	}
	for i := range rs.merged.count { // each shard's process had its own resumes, shifted onto the merged clock
		t.segments = append(t.segments, segments(rs.merged.resumes[i]))
	}
	return t
}

// tallyRowHook, set by a test only, runs after each row tallyPass reads (to
// sample the live heap while a pass streams through).
var tallyRowHook func(rows int64)

// add counts one record.
func (t *passTally) add(r *extractbench.Record) {
	t.acc.Add(r)
	t.docs++
	if r.OnTime == nil || *r.OnTime {
		t.onTime++
		if r.Accepted {
			t.onTimeOK++
		}
	}
	// A record's usage was checked when it was made
	// (extractbench.Response.RefuseImpossibleUsage); one stored by an older build
	// may still hold an impossible count, which is not summed.
	// A prompt the engine refused (its n_prompt_tokens kept without usage)
	// was never prefilled: it is not the pass's prompt throughput.
	if r.UsageReported && eval.PlausibleTokens(r.PromptTokens) {
		t.promptTokens += int64(r.PromptTokens)
	}
	if eval.PlausibleTokens(r.CompletionTokens) {
		t.outTokens += int64(r.CompletionTokens)
	}
	if r.UsageReported {
		t.usage++
	}
	t.tokens.add(r)
	t.cache.add(r)
	t.sched.add(r.SchedNS)
	t.send.add(r.SendNS)
	if r.Endpoint != "" {
		t.endpoints[r.Endpoint]++
	}
	segs := t.segments[0]
	if len(t.segments) > 1 {
		segs = t.segments[extractbench.ShardOf(r.DocID, len(t.segments))]
	}
	for i := range segs {
		g := &segs[i]
		if r.SendNS <= 0 || r.SendNS < g.lo || r.SendNS >= g.hi {
			continue
		}
		if g.first == 0 || r.SendNS < g.first {
			g.first = r.SendNS
		}
		g.last = max(g.last, r.DoneNS)
	}
}

// passAccount builds pass rows from the store's records, for the run and
// for the merge alike (one tally: tallyPass, then passRow and judgePass):
// the protocol, the store, and the segments a pass's records fall into (the
// run's resumes, or the merged shards').
type passAccount struct {
	proto   *protocol.Protocol
	store   *results.Store
	resumes []int64 // run-clock instants at which this run was resumed (segment starts)
	// merged: the shards' segments when passRow computes a merged pass
	// (merge.go); nil in a run.
	merged *mergeSpans
}

// passRow turns a pass's tally and telemetry into its passes row. Every
// figure is computed from the stored records, so that a resumed pass gets
// the same figures as one that ran through.
func (rs *passAccount) passRow(key extractbench.PassKey, phase string, retryOf, level int, t *passTally, tel telemetry.Telemetry, transport string, complete bool, self *clientSelf) extractbench.Pass {
	agg := t.acc.Tally(t.order.UniqueDocs, t.order.Recovered, nil) // one row per (pass, document): no duplicate id
	p := extractbench.Pass{
		RunID: key.RunID, Variant: key.Variant, Mode: key.Mode, Level: key.Level, Repetition: key.Repetition,
		Phase: phase, Attempt: 1, BatchTransport: transport,
		Docs: t.docs, Accepted: int64(agg.Accepted), UniqueIDs: int64(agg.Recovered),
		Status: extractbench.PassComplete,
	}
	for f, n := range agg.Failures {
		p.Failures.Add(f, int64(n))
	}
	if !complete {
		p.Status = extractbench.PassInterrupted
	}
	if retryOf > 0 {
		p.Attempt, p.RetryOf = 2, ptr(int64(retryOf))
	}
	if key.Mode == extractbench.ModeBatch {
		b := int64(level)
		p.RequestedBatch = &b
	}
	endpointSpread(&p, t.endpoints)
	p.SentConcurrency = extractbench.SentConcurrency(key.Mode, level, rs.proto.Sweep.Concurrency, 1, t.order.MaxInFlight)
	p.DateF1, p.AmountF1, p.CategoryF1 = ptr(agg.Date.F1), ptr(agg.Amount.F1), ptr(agg.Category.F1)
	if b, err := json.Marshal(agg.Confusion); err == nil && len(agg.Confusion) > 0 {
		p.CategoryConfusion = string(b)
	}

	outTokens, promptTokens := t.outTokens, t.promptTokens
	p.OutputTokens, p.PromptTokens = outTokens, promptTokens
	p.TokenCountMismatches = t.tokens.figure()
	t.cache.fill(&p)
	p.PromptDrift = t.drift
	if t.docs > 0 {
		p.UsageReportedShare = ptr(float64(t.usage) / float64(t.docs))
	}
	o := &t.order
	if s := o.TTFT; s.N > 0 {
		p.TTFTN = int64(s.N)
		p.TTFTP50NS, p.TTFTP90NS, p.TTFTP95NS, p.TTFTP99NS = ptr(int64(s.P50)), ptr(int64(s.P90)), ptr(int64(s.P95)), ptr(int64(s.P99))
		p.TTFTMinNS, p.TTFTMaxNS = ptr(int64(s.Min)), ptr(int64(s.Max))
	}
	if s := o.E2E; s.N > 0 {
		p.E2EN = int64(s.N)
		p.E2EP50NS, p.E2EP90NS, p.E2EP95NS, p.E2EP99NS = ptr(int64(s.P50)), ptr(int64(s.P90)), ptr(int64(s.P95)), ptr(int64(s.P99))
		p.E2EMinNS, p.E2EMaxNS = ptr(int64(s.Min)), ptr(int64(s.Max))
	}
	if s := o.E2ESched; s.N > 0 {
		p.E2ESchedP95NS = ptr(int64(s.P95))
	}
	if s := o.Queue; s.N > 0 {
		p.ClientQueueP95NS = ptr(int64(s.P95))
		p.LatenessP50NS, p.LatenessP99NS = ptr(int64(s.P50)), ptr(int64(s.P99))
	}
	if s := o.TPOT; s.N > 0 {
		p.TPOTP50NS, p.TPOTP90NS, p.TPOTP99NS = ptr(int64(s.P50)), ptr(int64(s.P90)), ptr(int64(s.P99))
	}
	if s := o.TTFTSched; s.N > 0 {
		p.TTFTSchedP99NS = ptr(int64(s.P99))
	}
	onTime, onTimeAccepted := t.onTime, t.onTimeOK
	p.OnTime, p.OnTimeAccepted = &onTime, &onTimeAccepted
	if key.Mode == extractbench.ModeRate && key.Level != extractbench.SyncLevel {
		p.OfferedRate = t.sched.perSecond()
	}
	p.AchievedRate = t.send.perSecond()
	self.judge(&p)

	first, last, dur := t.activeSpan()
	if dur > 0 {
		p.StartedNS, p.EndedNS, p.DurationNS = &first, &last, dur
		secs := float64(dur) / 1e9
		p.OutputTokensPerS = ptr(float64(outTokens) / secs)
		p.PromptTokensPerS = ptr(float64(promptTokens) / secs)
		p.TotalTokensPerS = ptr(float64(promptTokens+outTokens) / secs)
		p.AcceptedPerS = ptr(float64(agg.Accepted) / secs)
		p.DocsPerHour = eval.PassAcceptedPerHour(&p) // the one definition (eval/throughput.go)
		p.Goodput = ptr(float64(onTimeAccepted) / secs)
	}

	p.ObservedMaxRunning = roundPtr(tel.MaxRunning)
	p.ObservedMaxWaiting = roundPtr(tel.MaxWaiting)
	p.Preemptions = roundPtr(tel.PreemptionsDelta)
	p.EngineCaptures = roundPtr(tel.CapturesDelta)
	p.OutputsChanged, p.VerdictsChanged = rs.invariance(key)
	if tel.QueueTimeCountDelta != nil && *tel.QueueTimeCountDelta > 0 && tel.QueueTimeSumDelta != nil {
		p.EngineQueueMeanNS = int64Of(math.Trunc(*tel.QueueTimeSumDelta / *tel.QueueTimeCountDelta * 1e9))
	}
	p.PeakGPUMemBytes = roundPtr(tel.PeakGPUMemUsed)
	p.PeakTorchAllocatedBytes = roundPtr(tel.PeakTorchAllocated)
	p.PeakTorchReservedBytes = roundPtr(tel.PeakTorchReserved)
	p.PeakKVUsage = tel.PeakKVUsage
	if tel.Configured {
		p.TelemetrySamples = ptr(int64(tel.ActiveScrapes))
	}

	if complete {
		tr := t.trend
		tr.FloorNS = eval.SteadyFloorNS(p.LatenessP50NS) // the client's own timing is no trend
		eval.FillTrend(&p, tr)
		rs.judgePass(&p)
	}
	return p
}

// judgePass sets a complete pass's own verdict (eval.JudgePass) against
// the pooled share of its variant's complete baseline passes.
func (rs *passAccount) judgePass(p *extractbench.Pass) {
	baseline := -1.0
	if p.Phase != extractbench.PhaseBaseline {
		baseline = rs.baselineShare(extractbench.PassKey{RunID: p.RunID, Variant: p.Variant, Mode: p.Mode, Level: p.Level, Repetition: p.Repetition})
	}
	v := eval.JudgePass(p, baseline, rs.proto.Acceptance)
	p.Verdict, p.VerdictReason = v.Word(), v.Reason
}

// instantSpan is the earliest and latest of a pass's instants of one kind
// (planned arrivals, sends) and how many there were; 0 is never recorded.
type instantSpan struct{ lo, hi, n int64 }

func (s *instantSpan) add(t int64) {
	if t <= 0 {
		return
	}
	if s.n == 0 || t < s.lo {
		s.lo = t
	}
	s.hi = max(s.hi, t)
	s.n++
}

// perSecond is the span's rate, (instants − 1) over the span from the first
// to the last, since n instants hold n − 1 gaps; nil under 2 instants. It is
// a pass's offered rate (rate mode: its planned arrivals) or its achieved
// send rate.
func (s *instantSpan) perSecond() *float64 {
	if s.n < 2 || s.hi <= s.lo {
		return nil
	}
	return ptr(float64(s.n-1) / (float64(s.hi-s.lo) / 1e9))
}

// activeSpan is first t_send to last t_done; for a pass cut by an
// interruption it sums the spans of each segment, so that the time the
// tool was down is not counted as pass duration.
func (t *passTally) activeSpan() (first, last, dur int64) {
	var ivs [][2]int64
	for _, segs := range t.segments {
		for _, g := range segs {
			if g.first != 0 {
				ivs = append(ivs, [2]int64{g.first, g.last})
			}
		}
	}
	return unionSpan(ivs)
}

// unionSpan is the first start, the last end and the length of the union
// of intervals: one process's segments do not overlap (a resume starts
// after the interrupted attempt's last request ended), so their lengths add
// up; a merge's shards ran at the same time, so their common time counts
// once and their throughput adds up.
func unionSpan(ivs [][2]int64) (first, last, dur int64) {
	if len(ivs) == 0 {
		return 0, 0, 0
	}
	slices.SortFunc(ivs, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	first, last = ivs[0][0], ivs[0][1]
	lo, hi := ivs[0][0], ivs[0][1]
	for _, iv := range ivs[1:] {
		last = max(last, iv[1])
		if iv[0] > hi {
			dur += hi - lo
			lo, hi = iv[0], iv[1]
			continue
		}
		hi = max(hi, iv[1])
	}
	return first, last, dur + hi - lo
}

// baselineShare is the pooled accepted share of the variant's complete
// baseline passes (eval's rule: accepted over documents of every repetition).
func (rs *passAccount) baselineShare(key extractbench.PassKey) float64 {
	passes, err := rs.store.Passes(context.Background(), key.RunID)
	if err != nil {
		return -1
	}
	var docs, accepted int64
	for _, p := range passes {
		if p.Variant == key.Variant && p.Mode == key.Mode && p.Phase == extractbench.PhaseBaseline && p.Complete() {
			docs, accepted = docs+p.Docs, accepted+p.Accepted
		}
	}
	if docs == 0 {
		return -1
	}
	return float64(accepted) / float64(docs)
}

func toSamples(in []telemetry.Sample) []results.TelemetrySample {
	out := make([]results.TelemetrySample, len(in))
	for i, s := range in {
		out[i] = results.TelemetrySample{TNS: s.TNS, Metric: s.Metric, Value: s.Value, Endpoint: s.Endpoint}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// roundPtr is an engine figure rounded to the nearest integer, halves away
// from zero (math.Round); nil when there is none or it does not fit an
// int64 (NaN, infinite, beyond ±2^63), so that no conversion wraps it.
func roundPtr(v *float64) *int64 {
	if v == nil {
		return nil
	}
	return int64Of(math.Round(*v))
}

// int64Of converts an integral float64 that fits an int64; nil otherwise
// (float64 → int64 of a value out of range is implementation-defined in Go).
func int64Of(r float64) *int64 {
	if !(r >= -(1<<63) && r < 1<<63) { // false for NaN
		return nil
	}
	n := int64(r)
	return &n
}

// invariance compares the pass's outputs with the level-1 pass of the same
// variant, mode and repetition (eval.Invariance, computed in the store);
// nil for level 1 itself or when that pass is not complete.
func (rs *passAccount) invariance(key extractbench.PassKey) (changed, verdicts *int64) {
	base := rs.proto.Levels()[0]
	if key.Level == base || key.Mode == extractbench.ModeContext { // a context step's documents are not the baseline's
		return nil, nil
	}
	bk := key
	bk.Level = base
	ctx := context.Background()
	if bp, err := rs.store.Pass(ctx, bk); err != nil || bp == nil || !bp.Complete() {
		return nil, nil
	}
	c, v, err := rs.store.PassInvariance(ctx, key, base)
	if err != nil {
		return nil, nil
	}
	return ptr(int64(c)), ptr(int64(v))
}

// endpointSpread fills the pass's replica figures from its requests per
// endpoint (passTally.endpoints): how many endpoints the variant spreads its
// requests over, and the fewest and most requests one of them received (an
// endpoint that received none, a dead replica, counts 0).
func endpointSpread(p *extractbench.Pass, count map[string]int64) {
	if len(count) == 0 {
		return
	}
	lo, hi := int64(-1), int64(0)
	for _, n := range count {
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	p.Endpoints, p.EndpointRequestsMin, p.EndpointRequestsMax = ptr(int64(len(count))), &lo, &hi
}
