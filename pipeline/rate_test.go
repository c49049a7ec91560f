package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// runRate runs a protocol over docs documents of the small corpus on the
// built-in engine, with the sweep, acceptance and builtin options given,
// and returns the results directory and the run's summary.
func runRate(t *testing.T, docs int, sweep, acceptance, builtinOpts string, before func()) (string, *pipeline.RunReport) {
	t.Helper()
	dir := t.TempDir()
	p := fmt.Sprintf(`name: rate
corpus: %s
prompt:
  system: "You extract fields from business documents. Answer with JSON only."
  user: "Extract date, amount and category.\n\n{{document}}"
generation: {max_tokens: 128, temperature: 0, seed: 7}
acceptance: %s
sweep: %s
variants:
  - name: bf16
    engine: {url: builtin, model: sim-8b, builtin: %s}
`, writeSmallCorpus(t, dir, docs), acceptance, sweep, builtinOpts)
	proto := filepath.Join(dir, "rate.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	sum, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true, BeforeSend: before})
	if err != nil {
		t.Fatal(err)
	}
	return out, sum
}

func passAt(t *testing.T, sum *pipeline.RunReport, level int) extractbench.Pass {
	t.Helper()
	for _, p := range sum.Passes {
		if p.Level == level {
			return p
		}
	}
	t.Fatalf("no pass at level %d", level)
	return extractbench.Pass{}
}

// schedOffsets reads a pass's planned instants back, relative to its first.
func schedOffsets(t *testing.T, out string, level int) []int64 {
	t.Helper()
	var at []int64
	for _, r := range resultstest.Requests(t, out) {
		if r.Level == level {
			if r.SchedNS == 0 {
				t.Fatalf("a request at level %d has no sched_ns", level)
			}
			at = append(at, r.SchedNS)
		}
	}
	slices.Sort(at)
	for i := len(at) - 1; i >= 0; i-- {
		at[i] -= at[0]
	}
	return at
}

// TestRun_RateScheduleIsTheSeeds: t_sched of a rate pass is its planned
// arrival, so two runs with one seed store the same schedule, request for
// request, and another seed another one; the offered rate is the level.
func TestRun_RateScheduleIsTheSeeds(t *testing.T) {
	const docs = 24
	sweep := "{mode: rate, levels: [200], repetitions: 1, warmup: 0}"
	// A request takes modelled time, so that the baseline's one is in flight
	// on the engine clock.
	out1, sum := runRate(t, docs, sweep, "{min_accepted: 0}", "{time_scale: 0.001}", nil)
	out2, _ := runRate(t, docs, sweep, "{min_accepted: 0}", "{time_scale: 0.001}", nil)
	a, b := schedOffsets(t, out1, 200), schedOffsets(t, out2, 200)
	if len(a) != docs || !slices.Equal(a, b) {
		t.Errorf("two runs with seed 7 stored different schedules:\n%v\n%v", a, b)
	}
	if p := passAt(t, sum, extractbench.SyncLevel); p.Phase != extractbench.PhaseBaseline || p.OfferedRate != nil || p.SentConcurrency != 1 {
		t.Errorf("the synchronous baseline: phase %s, offered %v, in flight %d; want baseline, NULL, 1", p.Phase, p.OfferedRate, p.SentConcurrency)
	}
	p := passAt(t, sum, 200)
	if p.OfferedRate == nil || p.AchievedRate == nil || p.LatenessP99NS == nil || p.ClientBound == nil {
		t.Fatalf("rate pass without offered %v, achieved %v, lateness %v or client_bound %v", p.OfferedRate, p.AchievedRate, p.LatenessP99NS, p.ClientBound)
	}
	if *p.ClientBound {
		t.Errorf("client_bound at 200/s against an instant engine (client delay p99 %dns)", *p.ClientDelayP99NS)
	}
	if *p.OfferedRate < 80 || *p.OfferedRate > 400 {
		t.Errorf("offered rate %.1f/s at level 200/s over %d Poisson arrivals", *p.OfferedRate, docs)
	}
}

// TestRun_RateBeyondCapacity: past the engine's capacity, requests wait:
// uncapped, in the engine (waiting requests, E2E from t_sched grows, the
// client stays on schedule); capped by max_in_flight, in the client's queue,
// which is the engine's saturation and not the client's fault.
func TestRun_RateBeyondCapacity(t *testing.T) {
	engine := "{time_scale: 0.1, max_running: 2}" // ~90 ms a request, 2 at a time: ~20 requests/s
	_, sum := runRate(t, 20, "{mode: rate, arrival: constant, levels: [4, 100], repetitions: 1, warmup: 0}", "{min_accepted: 0}", engine, nil)
	low, high := passAt(t, sum, 4), passAt(t, sum, 100)
	if *low.OfferedRate < 3.9 || *low.OfferedRate > 4.1 {
		t.Errorf("constant arrivals at 4/s: offered %.3f/s", *low.OfferedRate)
	}
	if *high.E2ESchedP95NS < 3**low.E2ESchedP95NS {
		t.Errorf("E2E from t_sched p95 %s at 100/s, %s at 4/s: queueing past saturation does not show",
			eval.FormatDuration(*high.E2ESchedP95NS), eval.FormatDuration(*low.E2ESchedP95NS))
	}
	if high.ObservedMaxWaiting == nil || *high.ObservedMaxWaiting == 0 {
		t.Errorf("no request waited in the engine at 100/s (observed_max_waiting %v)", high.ObservedMaxWaiting)
	}
	if *high.ClientBound {
		t.Errorf("client_bound at 100/s: the engine, not the client, was saturated")
	}

	_, capped := runRate(t, 20, "{mode: rate, arrival: constant, levels: [100], repetitions: 1, warmup: 0, max_in_flight: 2}", "{min_accepted: 0}", engine, nil)
	c := passAt(t, capped, 100)
	if c.SentConcurrency > 2 {
		t.Errorf("max_in_flight 2: %d requests in flight", c.SentConcurrency)
	}
	if *c.LatenessP99NS < int64(200*time.Millisecond) || *c.ClientQueueP95NS < int64(200*time.Millisecond) {
		t.Errorf("max_in_flight 2 at 100/s: lateness p99 %s, client queue p95 %s; the held requests' wait does not show",
			eval.FormatDuration(*c.LatenessP99NS), eval.FormatDuration(*c.ClientQueueP95NS))
	}
	if *c.AchievedRate > 0.5**c.OfferedRate {
		t.Errorf("achieved %.1f/s of offered %.1f/s through 2 slots", *c.AchievedRate, *c.OfferedRate)
	}
	if *c.ClientBound {
		t.Errorf("client_bound when requests waited for a max_in_flight slot (client delay p99 %s)", eval.FormatDuration(*c.ClientDelayP99NS))
	}
}

// TestRun_SlowClient: a client slowed on purpose (the BeforeSend hook) is
// seen: in concurrency mode its delay shows in client_queue_ns (t_sched is
// the instant the slot freed), in rate mode as growing lateness; both
// passes are client_bound, and a client-bound level is never recommended.
func TestRun_SlowClient(t *testing.T) {
	slow := func() { time.Sleep(15 * time.Millisecond) }
	engine := "{time_scale: 0.02, clock: wall}" // ~20 ms a request; on the engine clock a slow client is not on the figures
	queue := func(sum *pipeline.RunReport, level int) int64 { return *passAt(t, sum, level).LatenessP50NS }

	_, fast := runRate(t, 12, "{mode: concurrency, levels: [2], repetitions: 1, warmup: 0}", "{min_accepted: 0}", engine, nil)
	_, slowed := runRate(t, 12, "{mode: concurrency, levels: [2], repetitions: 1, warmup: 0}", "{min_accepted: 0}", engine, slow)
	if q := queue(fast, 2); q > int64(5*time.Millisecond) {
		t.Errorf("concurrency 2, no hook: client queue p50 %s", eval.FormatDuration(q))
	}
	if q := queue(slowed, 2); q < int64(15*time.Millisecond) {
		t.Errorf("concurrency 2, client slowed 15 ms a request: client queue p50 %s, want ≥ 15ms", eval.FormatDuration(q))
	}
	if p := passAt(t, fast, 2); *p.ClientBound {
		t.Errorf("concurrency 2, no hook: flagged client_bound")
	}
	if p := passAt(t, slowed, 2); !*p.ClientBound {
		t.Errorf("concurrency 2, client slowed: not flagged client_bound (client delay p99 %s)", eval.FormatDuration(*p.ClientDelayP99NS))
	}

	_, rate := runRate(t, 12, "{mode: rate, arrival: constant, levels: [5, 200], repetitions: 1, warmup: 0}", "{min_accepted: 0}", engine, slow)
	p := passAt(t, rate, 200)
	if !*p.ClientBound || *p.LatenessP99NS < int64(50*time.Millisecond) {
		t.Errorf("rate 200/s with a client that needs 15 ms a request: client_bound %v, lateness p99 %s", *p.ClientBound, eval.FormatDuration(*p.LatenessP99NS))
	}
	rec := rate.Variants[0].Series[0].Recommendation
	if rec.HighestUsable == 200 || rec.Recommended == 200 || !slices.Contains(rec.BrokeBy, eval.CauseClient) {
		t.Errorf("a client-bound level is the basis of a recommendation: %+v", rec)
	}

}

// TestRun_RateAutoLevels: levels: auto measures the synchronous rate (the
// baseline) and the saturated throughput (one recorded probe pass far above
// capacity) first, then spaces auto_levels rates between them: the choice is
// a decision naming both rates and in the variant's manifest, every level a
// recorded pass, the plan complete, and the probe never recommended.
func TestRun_RateAutoLevels(t *testing.T) {
	engine := "{time_scale: 0.05, max_running: 3}" // ~45 ms a request, 3 at a time
	out, sum := runRate(t, 18, "{mode: rate, arrival: constant, levels: auto, auto_levels: 3, repetitions: 1, warmup: 0}", "{min_accepted: 0}", engine, nil)
	data, err := results.LoadRun(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	auto := data.Manifest.Variant("bf16").AutoLevels
	if auto == nil {
		t.Fatal("no auto_levels in the variant's manifest")
	}
	if auto.SaturatedRate < 1.5*auto.SyncRate {
		t.Errorf("saturated throughput %.1f/s, synchronous rate %.1f/s: 3 slots should give about 3×", auto.SaturatedRate, auto.SyncRate)
	}
	if want := extractbench.ChooseAutoLevels(auto.SyncRate, auto.SaturatedRate, 3, auto.ProbeLevel); !slices.Equal(auto.Levels, want) || len(want) == 0 {
		t.Errorf("levels %v, want %v", auto.Levels, want)
	}
	t.Run("passes", func(t *testing.T) { autoPasses(t, sum, auto) })
	t.Run("decision", func(t *testing.T) { autoDecision(t, out, auto) })
	t.Run("plan and recommendation", func(t *testing.T) { autoOutcome(t, sum, auto) })
}

// autoPasses: one probe pass far above capacity, then a sweep pass at each
// chosen rate.
func autoPasses(t *testing.T, sum *pipeline.RunReport, auto *extractbench.AutoLevels) {
	probe := passAt(t, sum, auto.ProbeLevel)
	if probe.Phase != extractbench.PhaseProbe || probe.Repetition != 1 || probe.Docs != 18 {
		t.Errorf("probe pass: phase %s, repetition %d, %d documents", probe.Phase, probe.Repetition, probe.Docs)
	}
	if float64(auto.ProbeLevel) < 10*auto.SyncRate {
		t.Errorf("probe at %d/s, synchronous rate %.1f/s: not far above capacity", auto.ProbeLevel, auto.SyncRate)
	}
	var sweepLevels []int
	for _, p := range sum.Passes {
		if p.Phase == extractbench.PhaseSweep {
			sweepLevels = append(sweepLevels, p.Level)
		}
	}
	if !slices.Equal(sweepLevels, auto.Levels) {
		t.Errorf("sweep passes at %v, chosen %v", sweepLevels, auto.Levels)
	}
}

// autoDecision: the choice is a decision naming both rates.
func autoDecision(t *testing.T, out string, auto *extractbench.AutoLevels) {
	ds := resultstest.Where(resultstest.Decisions(t, out), func(d *results.Decision) bool { return d.Kind == results.DecisionAutoLevels })
	if len(ds) == 0 {
		t.Fatal("no auto_levels decision")
	}
	kind, from, to, reason := ds[0].Kind, ds[0].FromLevel, ds[0].ToLevel, ds[0].Reason
	if from != auto.ProbeLevel || to != slices.Max(auto.Levels) || !strings.Contains(reason, "synchronous rate") || !strings.Contains(reason, "saturated throughput") {
		t.Errorf("decision %s %d → %d: %s", kind, from, to, reason)
	}
}

// autoOutcome: the plan is complete, and the probe is never recommended.
func autoOutcome(t *testing.T, sum *pipeline.RunReport, auto *extractbench.AutoLevels) {
	o := sum.Variants[0]
	if o.PassesDone != o.PassesPlanned || o.PassesPlanned != 2+len(auto.Levels) {
		t.Errorf("passes %d of %d planned; want sync + probe + %d rates", o.PassesDone, o.PassesPlanned, len(auto.Levels))
	}
	rec := o.Series[0].Recommendation
	// Which rate is usable depends on the machine (a busy one may flag a
	// level client_bound); the probe is never a step of the walk.
	if rec.Partial || rec.Recommended == auto.ProbeLevel || rec.HighestUsable == auto.ProbeLevel || rec.FirstBroken == auto.ProbeLevel ||
		(rec.Recommended != 0 && !slices.Contains(auto.Levels, rec.Recommended)) {
		t.Errorf("recommendation %+v: want a chosen rate (or none), never the probe, complete", rec)
	}
}

// TestRun_ContextSweep: mode context at a fixed concurrency sends each
// length class in turn, each pass only that class's documents: the pass is
// complete against that subset, its requests are all of the class, memory
// is recorded per step, the levels read as the classes, and the planned
// passes are the classes the corpus has.
func TestRun_ContextSweep(t *testing.T) {
	out, sum := runRate(t, 12, "{mode: context, levels: classes, concurrency: 3, repetitions: 1, warmup: 0}", "{min_accepted: 0}", "{time_scale: 0.2}", nil)
	data, err := results.LoadRun(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	classes := data.Manifest.Corpus.Classes
	reqs := resultstest.Requests(t, out)
	var levels []int
	for _, p := range sum.Passes {
		levels = append(levels, p.Level)
		contextStep(t, p, classes, reqs)
	}
	want := []int{}
	for i, c := range extractbench.LengthClasses {
		if classes[c] > 0 {
			want = append(want, i+1)
		}
	}
	if !slices.Equal(levels, want) || len(want) < 2 {
		t.Errorf("context steps %v, want the corpus's classes in order %v (%v)", levels, want, classes)
	}
	o := sum.Variants[0]
	if o.PassesDone != o.PassesPlanned || o.PassesPlanned != len(want) || o.Series[0].Recommendation.Partial {
		t.Errorf("passes %d of %d planned, partial %v; want one per class present", o.PassesDone, o.PassesPlanned, o.Series[0].Recommendation.Partial)
	}
	short, long := sum.Passes[0], sum.Passes[len(sum.Passes)-1]
	if short.PeakKVUsage != nil && long.PeakKVUsage != nil && *long.PeakKVUsage <= *short.PeakKVUsage {
		t.Errorf("KV cache peak %.3f for long documents, %.3f for short ones: memory does not grow with context", *long.PeakKVUsage, *short.PeakKVUsage)
	}
	if got := eval.LevelName(extractbench.ModeContext, want[len(want)-1]); got != "long" {
		t.Errorf("the longest step reads %q", got)
	}
}

// contextStep: the step's pass is complete against its class's documents,
// at concurrency 3, its requests all of the class, memory recorded.
func contextStep(t *testing.T, p extractbench.Pass, classes map[string]int, reqs []extractbench.Record) {
	class := extractbench.LengthClassOf(p.Level)
	if int(p.Docs) != classes[class] || !p.Complete() {
		t.Errorf("context %s: %d documents (complete %v), the corpus has %d of that class", class, p.Docs, p.Complete(), classes[class])
	}
	if p.SentConcurrency > 3 || (classes[class] >= 3 && p.SentConcurrency < 2) {
		t.Errorf("context %s: %d in flight at concurrency 3", class, p.SentConcurrency)
	}
	if p.PeakTorchAllocatedBytes == nil || p.PeakKVUsage == nil {
		t.Errorf("context %s: no memory peak recorded", class)
	}
	if n := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Level == p.Level && r.LengthClass != class }); n != 0 {
		t.Errorf("context %s: %d requests of another class", class, n)
	}
}

// TestRun_ContextSweepResume: a context sweep cut mid-way (the run's
// context cancelled during a step) resumes against each step's subset:
// every pass ends complete with its class's documents, none sent twice.
func TestRun_ContextSweepResume(t *testing.T) {
	dir := t.TempDir()
	p := fmt.Sprintf(`name: context
corpus: %s
prompt:
  user: "Extract date, amount and category.\n\n{{document}}"
generation: {max_tokens: 128, temperature: 0, seed: 7}
acceptance: {min_accepted: 0}
sweep: {mode: context, levels: classes, concurrency: 2, repetitions: 1, warmup: 0}
variants:
  - name: bf16
    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0.02}}
`, writeCorpus(t, dir, 16, 3))
	proto := filepath.Join(dir, "context.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sent := 0
	first, err := pipeline.Run(ctx, pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true,
		BeforeSend: func() {
			if sent++; sent == 9 {
				cancel()
			}
		}})
	if err != nil || !first.Interrupted {
		t.Fatalf("first attempt: interrupted %v, %v", first != nil && first.Interrupted, err)
	}
	if o := first.Variants[0]; o.PassesDone >= o.PassesPlanned {
		t.Fatalf("the first attempt measured %d of %d passes: nothing left to resume", o.PassesDone, o.PassesPlanned)
	}
	sum, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), OutDir: out, Resume: true, Quiet: true})
	if err != nil || sum.Status != "complete" {
		t.Fatalf("resume: %v (%v)", err, sum)
	}
	data, err := results.LoadRun(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	reqs := resultstest.Requests(t, out)
	for _, ps := range sum.Passes {
		class := extractbench.LengthClassOf(ps.Level)
		want := data.Manifest.Corpus.Classes[class]
		if !ps.Complete() || int(ps.Docs) != want {
			t.Errorf("context %s after resume: complete %v, %d documents, want %d", class, ps.Complete(), ps.Docs, want)
		}
		atLevel := resultstest.Where(reqs, func(r *extractbench.Record) bool { return r.Level == ps.Level })
		if n := resultstest.Distinct(atLevel, func(r *extractbench.Record) string { return r.DocID }); n != want {
			t.Errorf("context %s: %d documents recorded, want %d", class, n, want)
		}
	}
	if o := sum.Variants[0]; o.PassesDone != o.PassesPlanned || o.Series[0].Recommendation.Partial {
		t.Errorf("after resume: %d of %d passes, partial %v", o.PassesDone, o.PassesPlanned, o.Series[0].Recommendation.Partial)
	}
}
