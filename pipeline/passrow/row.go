package passrow

import (
	"context"
	"math"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline/protocol"
	"github.com/extractbench/extractbench/pipeline/telemetry"
	"github.com/extractbench/extractbench/results"
)

// Account builds pass rows from the store's records, for the run and for
// the merge alike (one tally: TallyPass, then Row and Judge): the protocol,
// the store, and the segments a pass's records fall into (the run's
// resumes, or the merged shards').
type Account struct {
	Proto   *protocol.Protocol
	Store   *results.Store
	Resumes []int64 // run-clock instants at which this run was resumed (segment starts)
	// Merged: the shards' segments when Row computes a merged pass
	// (pipeline/merge); nil in a run.
	Merged *Shards
}

// Shards is what activeSpan needs to time a merged pass: which shard each
// record came from (extractbench.ShardOf over Count) and each shard's
// resume instants, shifted onto the merged clock.
type Shards struct {
	Count   int
	Resumes map[int][]int64 // by shard index
}

// ClientCheck fills a pass's client self-check columns (client delay,
// CPU, client_bound: MEASUREMENT.md section 3) from what the dispatcher
// measured of itself during the pass; Row calls it before the pass is
// timed and judged.
type ClientCheck interface {
	Judge(p *extractbench.Pass)
}

// Row turns a pass's tally and telemetry into its passes row. Every
// figure is computed from the stored records, so that a resumed pass gets
// the same figures as one that ran through.
func (a *Account) Row(key extractbench.PassKey, phase string, retryOf, level int, t *Tally, tel telemetry.Telemetry, transport string, complete bool, self ClientCheck) extractbench.Pass {
	agg := t.acc.Tally(t.order.UniqueDocs, t.order.Recovered, nil) // one row per (pass, document): no duplicate id
	p := extractbench.Pass{
		RunID: key.RunID, Variant: key.Variant, Mode: key.Mode, Level: key.Level, Repetition: key.Repetition,
		Phase: phase, Attempt: 1, BatchTransport: transport,
		Docs: t.docs, Status: extractbench.PassComplete,
	}
	agg.Fill(&p)
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
	p.SentConcurrency = extractbench.SentConcurrency(key.Mode, level, a.Proto.Sweep.Concurrency, 1, t.order.MaxInFlight)

	p.OutputTokens, p.PromptTokens = t.outTokens, t.promptTokens
	p.TokenCountMismatches = t.tokens.figure()
	t.cache.fill(&p)
	p.PromptDrift = t.drift
	if t.docs > 0 {
		p.UsageReportedShare = ptr(float64(t.usage) / float64(t.docs))
	}
	fillLatencies(&p, &t.order)
	onTime, onTimeAccepted := t.onTime, t.onTimeOK
	p.OnTime, p.OnTimeAccepted = &onTime, &onTimeAccepted
	if key.Mode == extractbench.ModeRate && key.Level != extractbench.SyncLevel {
		p.OfferedRate = t.sched.perSecond()
	}
	p.AchievedRate = t.send.perSecond()
	if self != nil {
		self.Judge(&p)
	}

	fillThroughput(&p, t, agg.Accepted)
	fillEngine(&p, tel)
	p.OutputsChanged, p.VerdictsChanged = a.invariance(key)

	if complete {
		tr := t.trend
		tr.FloorNS = eval.SteadyFloorNS(p.LatenessP50NS) // the client's own timing is no trend
		eval.FillTrend(&p, tr)
		a.Judge(&p)
	}
	return p
}

// fillLatencies sets the pass's latency percentiles from its requests in
// send order (o); a latency no request had stays NULL.
func fillLatencies(p *extractbench.Pass, o *results.PassOrderStats) {
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
}

// fillThroughput sets the pass's active span and the rates over it.
func fillThroughput(p *extractbench.Pass, t *Tally, accepted int) {
	first, last, dur := t.activeSpan()
	if dur > 0 {
		p.StartedNS, p.EndedNS, p.DurationNS = &first, &last, dur
		secs := float64(dur) / 1e9
		p.OutputTokensPerS = ptr(float64(t.outTokens) / secs)
		p.PromptTokensPerS = ptr(float64(t.promptTokens) / secs)
		p.TotalTokensPerS = ptr(float64(t.promptTokens+t.outTokens) / secs)
		p.AcceptedPerS = ptr(float64(accepted) / secs)
		p.DocsPerHour = eval.PassAcceptedPerHour(p) // the one definition (eval/throughput.go)
		p.Goodput = ptr(float64(t.onTimeOK) / secs)
	}
}

// fillEngine sets the figures the engine's telemetry gave during the pass.
func fillEngine(p *extractbench.Pass, tel telemetry.Telemetry) {
	p.ObservedMaxRunning = roundPtr(tel.MaxRunning)
	p.ObservedMaxWaiting = roundPtr(tel.MaxWaiting)
	p.Preemptions = roundPtr(tel.PreemptionsDelta)
	p.EngineCaptures = roundPtr(tel.CapturesDelta)
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
}

// Judge sets a complete pass's own verdict (eval.JudgePass) against
// the pooled share of its variant's complete baseline passes.
func (a *Account) Judge(p *extractbench.Pass) {
	baseline := -1.0
	if p.Phase != extractbench.PhaseBaseline {
		baseline = a.baselineShare(extractbench.PassKey{RunID: p.RunID, Variant: p.Variant, Mode: p.Mode, Level: p.Level, Repetition: p.Repetition})
	}
	v := eval.JudgePass(p, baseline, a.Proto.Acceptance)
	p.Verdict, p.VerdictReason = v.Word(), v.Reason
}

// baselineShare is the pooled accepted share of the variant's complete
// baseline passes (eval's rule: accepted over documents of every repetition).
func (a *Account) baselineShare(key extractbench.PassKey) float64 {
	passes, err := a.Store.Passes(context.Background(), key.RunID)
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
func (a *Account) invariance(key extractbench.PassKey) (changed, verdicts *int64) {
	base := a.Proto.Levels()[0]
	if key.Level == base || key.Mode == extractbench.ModeContext { // a context step's documents are not the baseline's
		return nil, nil
	}
	bk := key
	bk.Level = base
	ctx := context.Background()
	if bp, err := a.Store.Pass(ctx, bk); err != nil || bp == nil || !bp.Complete() {
		return nil, nil
	}
	c, v, err := a.Store.PassInvariance(ctx, key, base)
	if err != nil {
		return nil, nil
	}
	return ptr(int64(c)), ptr(int64(v))
}

// endpointSpread fills the pass's replica figures from its requests per
// endpoint (Tally.endpoints): how many endpoints the variant spreads its
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
