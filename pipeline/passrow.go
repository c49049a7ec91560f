package pipeline

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
)

// passRow turns a pass's records and telemetry into its passes row. Every
// figure is computed from the stored records, so that a resumed pass gets
// the same figures as one that ran through.
func (rs *runState) passRow(key results.PassKey, phase string, retryOf, level int, recs []eval.Record, tel Telemetry, transport string, complete bool, self *clientSelf) results.Pass {
	agg := eval.Aggregate(recs)
	p := results.Pass{
		RunID: key.RunID, Variant: key.Variant, Mode: key.Mode, Level: key.Level, Repetition: key.Repetition,
		Phase: phase, Attempt: 1, BatchTransport: transport,
		Docs: int64(len(recs)), Accepted: int64(agg.Accepted), UniqueIDs: int64(agg.Recovered),
		Status: results.PassComplete,
	}
	for f, n := range agg.Failures {
		p.Failures.Add(f, int64(n))
	}
	if !complete {
		p.Status = results.PassInterrupted
	}
	if retryOf > 0 {
		p.Attempt, p.RetryOf = 2, ptr(int64(retryOf))
	}
	if key.Mode == "batch" {
		b := int64(level)
		p.RequestedBatch = &b
	}
	p.SentConcurrency = maxInFlight(recs)
	if key.Mode != results.ModeRate && key.Mode != results.ModeContext && (level < int(p.SentConcurrency) || key.Mode == results.ModeConcurrency) {
		p.SentConcurrency = min(p.SentConcurrency, int64(level))
	}
	if key.Mode == results.ModeContext {
		p.SentConcurrency = min(p.SentConcurrency, int64(rs.proto.Sweep.Concurrency))
	}
	p.DateF1, p.AmountF1, p.CategoryF1 = ptr(agg.Date.F1), ptr(agg.Amount.F1), ptr(agg.Category.F1)
	if b, err := json.Marshal(agg.Confusion); err == nil && len(agg.Confusion) > 0 {
		p.CategoryConfusion = string(b)
	}

	var ttft, ttftSched, e2e, e2eSched, queue, tpot []int64
	var outTokens, promptTokens, usage, onTime, onTimeAccepted int64
	for _, r := range recs {
		if r.OnTime == nil || *r.OnTime {
			onTime++
			if r.Accepted {
				onTimeAccepted++
			}
		}
		if r.FirstTokenNS > 0 && r.SchedNS > 0 {
			ttftSched = append(ttftSched, r.FirstTokenNS-r.SchedNS)
		}
		promptTokens += int64(r.PromptTokens)
		if r.FirstTokenNS > 0 && r.SendNS > 0 {
			ttft = append(ttft, r.FirstTokenNS-r.SendNS)
		}
		if r.DoneNS > 0 && r.SendNS > 0 {
			e2e = append(e2e, r.DoneNS-r.SendNS)
			e2eSched = append(e2eSched, r.DoneNS-r.SchedNS)
			queue = append(queue, r.SendNS-r.SchedNS)
		}
		if r.CompletionTokens > 1 && r.LastTokenNS > r.FirstTokenNS && r.FirstTokenNS > 0 {
			tpot = append(tpot, (r.LastTokenNS-r.FirstTokenNS)/int64(r.CompletionTokens-1))
		}
		outTokens += int64(r.CompletionTokens)
		if r.UsageReported {
			usage++
		}
	}
	p.OutputTokens, p.PromptTokens = outTokens, promptTokens
	p.TokenCountMismatches = tokenCountMismatches(recs)
	if len(recs) > 0 {
		p.UsageReportedShare = ptr(float64(usage) / float64(len(recs)))
	}
	if s := eval.DescribeNS(ttft); s.N > 0 {
		p.TTFTN = int64(s.N)
		p.TTFTP50NS, p.TTFTP90NS, p.TTFTP95NS, p.TTFTP99NS = ptr(int64(s.P50)), ptr(int64(s.P90)), ptr(int64(s.P95)), ptr(int64(s.P99))
		p.TTFTMinNS, p.TTFTMaxNS = ptr(int64(s.Min)), ptr(int64(s.Max))
	}
	if s := eval.DescribeNS(e2e); s.N > 0 {
		p.E2EN = int64(s.N)
		p.E2EP50NS, p.E2EP90NS, p.E2EP95NS, p.E2EP99NS = ptr(int64(s.P50)), ptr(int64(s.P90)), ptr(int64(s.P95)), ptr(int64(s.P99))
		p.E2EMinNS, p.E2EMaxNS = ptr(int64(s.Min)), ptr(int64(s.Max))
	}
	if s := eval.DescribeNS(e2eSched); s.N > 0 {
		p.E2ESchedP95NS = ptr(int64(s.P95))
	}
	if s := eval.DescribeNS(queue); s.N > 0 {
		p.ClientQueueP95NS = ptr(int64(s.P95))
		p.LatenessP50NS, p.LatenessP99NS = ptr(int64(s.P50)), ptr(int64(s.P99))
	}
	if s := eval.DescribeNS(tpot); s.N > 0 {
		p.TPOTP50NS, p.TPOTP90NS, p.TPOTP99NS = ptr(int64(s.P50)), ptr(int64(s.P90)), ptr(int64(s.P99))
	}
	if s := eval.DescribeNS(ttftSched); s.N > 0 {
		p.TTFTSchedP99NS = ptr(int64(s.P99))
	}
	p.OnTime, p.OnTimeAccepted = &onTime, &onTimeAccepted
	p.OfferedRate, p.AchievedRate = rates(key, recs)
	self.judge(&p)

	first, last, dur := rs.activeSpan(recs)
	if dur > 0 {
		p.StartedNS, p.EndedNS, p.DurationNS = &first, &last, dur
		secs := float64(dur) / 1e9
		p.OutputTokensPerS = ptr(float64(outTokens) / secs)
		p.PromptTokensPerS = ptr(float64(promptTokens) / secs)
		p.TotalTokensPerS = ptr(float64(promptTokens+outTokens) / secs)
		p.AcceptedPerS = ptr(float64(agg.Accepted) / secs)
		p.DocsPerHour = ptr(float64(agg.Accepted) / secs * 3600)
		p.Goodput = ptr(float64(onTimeAccepted) / secs)
	}

	p.ObservedMaxRunning = roundPtr(tel.MaxRunning)
	p.ObservedMaxWaiting = roundPtr(tel.MaxWaiting)
	p.Preemptions = roundPtr(tel.PreemptionsDelta)
	p.EngineCaptures = roundPtr(tel.CapturesDelta)
	p.OutputsChanged, p.VerdictsChanged = rs.invariance(key, recs)
	if tel.QueueTimeCountDelta != nil && *tel.QueueTimeCountDelta > 0 && tel.QueueTimeSumDelta != nil {
		p.EngineQueueMeanNS = ptr(int64(*tel.QueueTimeSumDelta / *tel.QueueTimeCountDelta * 1e9))
	}
	p.PeakGPUMemBytes = roundPtr(tel.PeakGPUMemUsed)
	p.PeakTorchAllocatedBytes = roundPtr(tel.PeakTorchAllocated)
	p.PeakTorchReservedBytes = roundPtr(tel.PeakTorchReserved)
	p.PeakKVUsage = tel.PeakKVUsage

	if complete {
		rs.judgePass(&p)
	}
	return p
}

// judgePass sets a complete pass's own verdict (eval.JudgePass) against
// the pooled share of its variant's complete baseline passes.
func (rs *runState) judgePass(p *results.Pass) {
	baseline := -1.0
	if p.Phase != results.PhaseBaseline {
		baseline = rs.baselineShare(results.PassKey{RunID: p.RunID, Variant: p.Variant, Mode: p.Mode, Level: p.Level, Repetition: p.Repetition})
	}
	v := eval.JudgePass(p, baseline, rs.proto.Acceptance)
	p.Verdict, p.VerdictReason = v.Word(), v.Reason
}

// rates are a pass's offered rate (rate mode: its planned arrivals) and
// achieved send rate, each (requests − 1) over the span from the first to
// the last instant, since n instants hold n − 1 gaps; nil under 2 instants
// or for a pass without a schedule.
func rates(key results.PassKey, recs []eval.Record) (offered, achieved *float64) {
	perSecond := func(instants func(r *eval.Record) int64) *float64 {
		var lo, hi, n int64
		for i := range recs {
			t := instants(&recs[i])
			if t <= 0 {
				continue
			}
			if n == 0 || t < lo {
				lo = t
			}
			hi = max(hi, t)
			n++
		}
		if n < 2 || hi <= lo {
			return nil
		}
		return ptr(float64(n-1) / (float64(hi-lo) / 1e9))
	}
	if key.Mode == results.ModeRate && key.Level != results.SyncLevel {
		offered = perSecond(func(r *eval.Record) int64 { return r.SchedNS })
	}
	return offered, perSecond(func(r *eval.Record) int64 { return r.SendNS })
}

// activeSpan is first t_send to last t_done; for a pass cut by an
// interruption it sums the spans of each segment, so that the time the
// tool was down is not counted as pass duration.
func (rs *runState) activeSpan(recs []eval.Record) (first, last, dur int64) {
	if rs.merged != nil {
		return rs.merged.span(recs)
	}
	return segmentSpan(recs, rs.resumes)
}

// segmentSpan is activeSpan for one process's records: resumes are the
// run-clock instants its segments start at. The segments do not overlap
// (a resume starts after the interrupted attempt's last request ended), so
// their lengths add up.
func segmentSpan(recs []eval.Record, resumes []int64) (first, last, dur int64) {
	for _, iv := range segmentIntervals(recs, resumes) {
		if first == 0 {
			first = iv[0]
		}
		last = max(last, iv[1])
		dur += iv[1] - iv[0]
	}
	return first, last, dur
}

// segmentIntervals are, per segment of a process (from 0, then from each
// resume instant), the span from its first t_send to the last t_done of
// the requests sent in it; segments that sent nothing are left out.
func segmentIntervals(recs []eval.Record, resumes []int64) [][2]int64 {
	bounds := append([]int64{0}, resumes...)
	var out [][2]int64
	for i, lo := range bounds {
		hi := int64(1<<63 - 1)
		if i+1 < len(bounds) {
			hi = bounds[i+1]
		}
		var f, l int64
		for _, r := range recs {
			if r.SendNS <= 0 || r.SendNS < lo || r.SendNS >= hi {
				continue
			}
			if f == 0 || r.SendNS < f {
				f = r.SendNS
			}
			l = max(l, r.DoneNS)
		}
		if f != 0 {
			out = append(out, [2]int64{f, l})
		}
	}
	return out
}

// baselineShare is the pooled accepted share of the variant's complete
// baseline passes (eval's rule: accepted over documents of every repetition).
func (rs *runState) baselineShare(key results.PassKey) float64 {
	passes, err := rs.store.Passes(context.Background(), key.RunID)
	if err != nil {
		return -1
	}
	var docs, accepted int64
	for _, p := range passes {
		if p.Variant == key.Variant && p.Mode == key.Mode && p.Phase == results.PhaseBaseline && p.Complete() {
			docs, accepted = docs+p.Docs, accepted+p.Accepted
		}
	}
	if docs == 0 {
		return -1
	}
	return float64(accepted) / float64(docs)
}

// maxInFlight is the most requests the client had in flight at once.
func maxInFlight(recs []eval.Record) int64 {
	type edge struct {
		t     int64
		delta int
	}
	var edges []edge
	for _, r := range recs {
		if r.SendNS > 0 && r.DoneNS >= r.SendNS {
			edges = append(edges, edge{r.SendNS, 1}, edge{r.DoneNS, -1})
		}
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.t != b.t {
			if a.t < b.t {
				return -1
			}
			return 1
		}
		return a.delta - b.delta // a request done at t frees its slot before one sent at t
	})
	cur, peak := 0, 0
	for _, e := range edges {
		cur += e.delta
		peak = max(peak, cur)
	}
	return int64(peak)
}

func toSamples(in []Sample) []results.TelemetrySample {
	out := make([]results.TelemetrySample, len(in))
	for i, s := range in {
		out[i] = results.TelemetrySample{TNS: s.TNS, Metric: s.Metric, Value: s.Value, Endpoint: s.Endpoint}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func roundPtr(v *float64) *int64 {
	if v == nil {
		return nil
	}
	r := int64(*v + 0.5)
	return &r
}

// invariance compares the pass's outputs with the level-1 pass of the same
// variant, mode and repetition (eval.Invariance); nil for level 1 itself or
// when that pass is not complete.
func (rs *runState) invariance(key results.PassKey, recs []eval.Record) (changed, verdicts *int64) {
	base := rs.proto.Levels()[0]
	if key.Level == base || key.Mode == results.ModeContext { // a context step's documents are not the baseline's
		return nil, nil
	}
	bk := key
	bk.Level = base
	ctx := context.Background()
	if bp, err := rs.store.Pass(ctx, bk); err != nil || bp == nil || !bp.Complete() {
		return nil, nil
	}
	baseRecs, ok := rs.merged.baseline(bk)
	if !ok {
		var err error
		if baseRecs, err = rs.store.PassFigures(ctx, bk); err != nil { // digests compare as the outputs do
			return nil, nil
		}
	}
	c, v, _ := eval.Invariance(baseRecs, recs)
	return ptr(int64(c)), ptr(int64(v))
}

// endpointSpread fills the pass's replica figures from its records: how
// many endpoints the variant spreads its requests over, and the fewest and
// most requests one of them received (an endpoint that received none, a
// dead replica, counts 0).
func endpointSpread(p *results.Pass, endpoints []string, recs []eval.Record) {
	count := make(map[string]int64, len(endpoints))
	for _, e := range endpoints {
		count[e] = 0
	}
	for _, r := range recs {
		if r.Endpoint != "" {
			count[r.Endpoint]++
		}
	}
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
