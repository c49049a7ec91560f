package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/pipeline/passrow"
	"github.com/extractbench/extractbench/pipeline/protocol"
	"github.com/extractbench/extractbench/pipeline/telemetry"
	"github.com/extractbench/extractbench/results"
)

// TestRun_PassRowsMatchRecords runs a sweep with every failure class and
// checks each stored passes row, made from streamed rows and SQLite's order
// statistics, against the same figures made in memory from the pass's
// records, as the row was made before it streamed: counts, F1, percentiles,
// rates, peak in flight, span and batch invariance, exactly.
func TestRun_PassRowsMatchRecords(t *testing.T) {
	dir := t.TempDir()
	proto := writeProtocol(t, dir, writeSmallCorpus(t, dir, 40), "{mode: concurrency, levels: [1, 4], repetitions: 2, warmup: 0, on_memory_failure: record}",
		"{time_scale: 0, faults: {oom: 0.05, truncate: 0.1, garbage: 0.1, wrong_value: 0.1, reset: 0.05}}")
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := results.Open(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run, err := s.LatestRun(ctx)
	if err != nil || run == nil {
		t.Fatalf("latest run: %v, %v", run, err)
	}
	passes, err := s.Passes(ctx, run.RunID)
	if err != nil || len(passes) != 4 {
		t.Fatalf("%d passes, %v; want 4", len(passes), err)
	}
	for _, p := range passes {
		key := extractbench.PassKey{RunID: p.RunID, Variant: p.Variant, Mode: p.Mode, Level: p.Level, Repetition: p.Repetition}
		recs, err := s.PassRecords(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		var base []extractbench.Record
		if p.Level != 1 {
			bk := key
			bk.Level = 1
			if base, err = s.PassRecords(ctx, bk); err != nil {
				t.Fatal(err)
			}
		}
		got, want := storedFigures(p), inMemoryFigures(recs, base, p.Level)
		for name, w := range want {
			if got[name] != w {
				t.Errorf("pass %s: %s = %s, from the records in memory %s", key, name, got[name], w)
			}
		}
	}
}

func str[T any](p *T) string {
	if p == nil {
		return "NULL"
	}
	return j(*p)
}

// storedFigures are the record-derived columns of a stored passes row.
func storedFigures(p extractbench.Pass) map[string]string {
	return map[string]string{
		"docs": j(p.Docs), "accepted": j(p.Accepted), "unique_ids": j(p.UniqueIDs),
		"failures": j(p.Failures), "sent_concurrency": j(p.SentConcurrency),
		"ttft":          j(p.TTFTN, str(p.TTFTP50NS), str(p.TTFTP90NS), str(p.TTFTP95NS), str(p.TTFTP99NS), str(p.TTFTMinNS), str(p.TTFTMaxNS)),
		"e2e":           j(p.E2EN, str(p.E2EP50NS), str(p.E2EP90NS), str(p.E2EP95NS), str(p.E2EP99NS), str(p.E2EMinNS), str(p.E2EMaxNS)),
		"e2e_sched_p95": str(p.E2ESchedP95NS), "queue": j(str(p.ClientQueueP95NS), str(p.LatenessP50NS), str(p.LatenessP99NS)),
		"tpot": j(str(p.TPOTP50NS), str(p.TPOTP90NS), str(p.TPOTP99NS)), "ttft_sched_p99": str(p.TTFTSchedP99NS),
		"tokens":  j(p.OutputTokens, p.PromptTokens, str(p.UsageReportedShare), str(p.TokenCountMismatches)),
		"on_time": j(str(p.OnTime), str(p.OnTimeAccepted)), "achieved_rate": str(p.AchievedRate),
		"span": j(str(p.StartedNS), str(p.EndedNS), p.DurationNS),
		"f1":   j(str(p.DateF1), str(p.AmountF1), str(p.CategoryF1)), "confusion": p.CategoryConfusion,
		"invariance": j(str(p.OutputsChanged), str(p.VerdictsChanged)),
	}
}

// inMemoryFigures makes the same columns from records held in memory.
func inMemoryFigures(recs, base []extractbench.Record, level int) map[string]string {
	agg := eval.Aggregate(recs)
	var failures extractbench.FailureCounts
	for f, n := range agg.Failures {
		failures.Add(f, int64(n))
	}
	var m memTally
	for i := range recs {
		m.add(&recs[i])
	}
	t, e, es, q, tp, ts := describe(m.ttft), describe(m.e2e), describe(m.e2eSched), describe(m.queue), describe(m.tpot), describe(m.ttftSched)
	share, mism := "NULL", "NULL"
	if len(recs) > 0 {
		share = j(float64(m.usage) / float64(len(recs)))
	}
	if m.compared > 0 {
		mism = j(m.mismatched)
	}
	inv := "NULL NULL"
	if level != 1 {
		c, v, _ := eval.Invariance(base, recs)
		inv = j(c, v)
	}
	return map[string]string{
		"docs": j(len(recs)), "accepted": j(agg.Accepted), "unique_ids": j(agg.Recovered),
		"failures": j(failures), "sent_concurrency": j(min(m.peakInFlight(), int64(level))),
		"ttft":          j(t.N, pct(t, t.P50), pct(t, t.P90), pct(t, t.P95), pct(t, t.P99), pct(t, t.Min), pct(t, t.Max)),
		"e2e":           j(e.N, pct(e, e.P50), pct(e, e.P90), pct(e, e.P95), pct(e, e.P99), pct(e, e.Min), pct(e, e.Max)),
		"e2e_sched_p95": pct(es, es.P95), "queue": j(pct(q, q.P95), pct(q, q.P50), pct(q, q.P99)),
		"tpot": j(pct(tp, tp.P50), pct(tp, tp.P90), pct(tp, tp.P99)), "ttft_sched_p99": pct(ts, ts.P99),
		"tokens":  j(m.out, m.prompt, share, mism),
		"on_time": j(m.onTime, m.onTimeOK), "achieved_rate": m.rate(), "span": m.span(),
		"f1":        j(agg.Date.F1, agg.Amount.F1, agg.Category.F1),
		"confusion": confusionJSON(agg.Confusion), "invariance": inv,
	}
}

// memTally is inMemoryFigures's count of the records, one at a time.
type memTally struct {
	ttft, ttftSched, e2e, e2eSched, queue, tpot, edges         [][2]int64
	out, prompt, usage, onTime, onTimeOK, compared, mismatched int64
	first, last, sends, lo, hi                                 int64
}

func (m *memTally) add(r *extractbench.Record) {
	m.addLatencies(r)
	m.out, m.prompt = m.out+int64(r.CompletionTokens), m.prompt+int64(r.PromptTokens)
	if r.UsageReported {
		m.usage++
		m.compared++
		tol := max(float64(passrow.TokenCountSlack), math.Ceil(passrow.TokenCountShare*float64(r.CompletionTokens)))
		if math.Abs(float64(r.CompletionTokens-r.ClientChunks)) > tol {
			m.mismatched++
		}
	}
	if r.OnTime == nil || *r.OnTime {
		m.onTime++
		if r.Accepted {
			m.onTimeOK++
		}
	}
	if r.SendNS > 0 {
		if m.first == 0 || r.SendNS < m.first {
			m.first = r.SendNS
		}
		m.last = max(m.last, r.DoneNS)
		if m.sends == 0 || r.SendNS < m.lo {
			m.lo = r.SendNS
		}
		m.hi = max(m.hi, r.SendNS)
		m.sends++
	}
}

func (m *memTally) addLatencies(r *extractbench.Record) {
	if r.FirstTokenNS > 0 && r.SchedNS > 0 {
		m.ttftSched = append(m.ttftSched, [2]int64{r.FirstTokenNS - r.SchedNS})
	}
	if r.FirstTokenNS > 0 && r.SendNS > 0 {
		m.ttft = append(m.ttft, [2]int64{r.FirstTokenNS - r.SendNS})
	}
	if r.DoneNS > 0 && r.SendNS > 0 {
		m.e2e = append(m.e2e, [2]int64{r.DoneNS - r.SendNS})
		m.e2eSched = append(m.e2eSched, [2]int64{r.DoneNS - r.SchedNS})
		m.queue = append(m.queue, [2]int64{r.SendNS - r.SchedNS})
	}
	if ns, ok := r.TPOT(); ok {
		m.tpot = append(m.tpot, [2]int64{ns})
	}
	if r.SendNS > 0 && r.DoneNS >= r.SendNS {
		m.edges = append(m.edges, [2]int64{r.SendNS, 1}, [2]int64{r.DoneNS, -1})
	}
}

// peakInFlight is the most requests in flight at once.
func (m *memTally) peakInFlight() int64 {
	slices.SortFunc(m.edges, func(a, b [2]int64) int {
		if a[0] != b[0] {
			return int(a[0] - b[0])
		}
		return int(a[1] - b[1])
	})
	var cur, peak int64
	for _, e := range m.edges {
		cur += e[1]
		peak = max(peak, cur)
	}
	return peak
}

// rate is the achieved send rate, per second between the first and last send.
func (m *memTally) rate() string {
	if m.sends >= 2 && m.hi > m.lo {
		return j(float64(m.sends-1) / (float64(m.hi-m.lo) / 1e9))
	}
	return "NULL"
}

// span is the first send, the last answer and the time between.
func (m *memTally) span() string {
	if m.last-m.first > 0 {
		return j(m.first, m.last, m.last-m.first)
	}
	return "NULL NULL 0"
}

// describe is the distribution of the first of each pair.
func describe(v [][2]int64) eval.Distribution {
	ns := make([]int64, len(v))
	for i := range v {
		ns[i] = v[i][0]
	}
	return eval.DescribeNS(ns)
}

// pct is a figure of s as the row prints it; NULL for an empty s.
func pct(s eval.Distribution, v float64) string {
	if s.N == 0 {
		return "NULL"
	}
	return j(int64(v))
}

func confusionJSON(m map[string]map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// j is fmt.Sprintln without the newline: operands always spaced.
func j(args ...any) string { return strings.TrimSuffix(fmt.Sprintln(args...), "\n") }

// TestRun_PassRowIsReadBack: the run tallies each pass as its records are
// stored, from several dispatch goroutines at once (passRun.keep); every
// stored passes row has the figures that reading the pass's rows back
// gives (passrow.Account.TallyPass, then Row): percentiles, peak in
// flight, drift, the steady-state test and the rest, exactly. The engine
// runs on its own clock, in lockstep, where sends tie: the steady-state
// test breaks those ties by the order the store received the records.
func TestRun_PassRowIsReadBack(t *testing.T) {
	dir := t.TempDir()
	protoPath := writeProtocol(t, dir, writeSmallCorpus(t, dir, 160), "{mode: concurrency, levels: [1, 8], repetitions: 2, warmup: 0, on_memory_failure: record}",
		"{time_scale: 0.02, faults: {oom: 0.05, truncate: 0.1, garbage: 0.1, wrong_value: 0.1, reset: 0.05}}")
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: protoPath, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	proto, err := protocol.Load(protoPath)
	if err != nil {
		t.Fatal(err)
	}
	s, err := results.Open(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run, err := s.LatestRun(ctx)
	if err != nil || run == nil {
		t.Fatalf("latest run: %v, %v", run, err)
	}
	passes, err := s.Passes(ctx, run.RunID)
	if err != nil || len(passes) != 4 {
		t.Fatalf("%d passes, %v; want 4", len(passes), err)
	}
	acct := &passrow.Account{Proto: proto, Store: s}
	steady := 0
	for _, p := range passes {
		key := extractbench.PassKey{RunID: p.RunID, Variant: p.Variant, Mode: p.Mode, Level: p.Level, Repetition: p.Repetition}
		tally, err := acct.TallyPass(ctx, key, nil)
		if err != nil {
			t.Fatal(err)
		}
		read := acct.Row(key, p.Phase, 0, p.Level, tally, telemetry.Telemetry{}, p.BatchTransport, p.Complete(), nil)
		got, want := recordFigures(p), recordFigures(read)
		for name, w := range want {
			if got[name] != w {
				t.Errorf("pass %s: %s = %s, read back %s", key, name, got[name], w)
			}
		}
		if p.SteadyBlocks != nil {
			steady++
		}
	}
	if steady == 0 {
		t.Errorf("no pass has a steady-state test: the comparison leaves it out")
	}
}

// recordFigures are storedFigures and the other columns made of the
// pass's records: drift, cached prompts, rates, the steady-state test.
func recordFigures(p extractbench.Pass) map[string]string {
	m := storedFigures(p)
	m["drift"] = j(p.PromptDrift.Reference, str(p.PromptDrift.Compared), str(p.PromptDrift.Docs), str(p.PromptDrift.Median), str(p.PromptDrift.Max))
	m["cached"] = j(str(p.CachedPromptTokens), str(p.CachedPromptShare))
	m["rates"] = j(str(p.OfferedRate), str(p.OutputTokensPerS), str(p.PromptTokensPerS), str(p.AcceptedPerS), str(p.Goodput), str(p.DocsPerHour))
	m["endpoints"] = j(str(p.Endpoints), str(p.EndpointRequestsMin), str(p.EndpointRequestsMax))
	m["steady"] = j(str(p.SteadyHead), str(p.SteadyTrendN), str(p.SteadyBlocks), str(p.SteadyTrendEffect), str(p.SteadySpread), str(p.Steady))
	return m
}
