package plan_test

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/plan"
	"github.com/extractbench/extractbench/results/plan/plantest"
	"github.com/extractbench/extractbench/sizing"
)

// planFixture is a run of one variant: a 60 s baseline and a 30 s level 2
// (300 documents each, 285 accepted), 1 s apart, with a 30 s engine load,
// a 4 s warm-up and 5 s of the run's own fixed costs (an engine stop, the
// run's end): a 130 s run.
func planFixture(t *testing.T) *results.RunData {
	t.Helper()
	dir := t.TempDir()
	m := plantest.Manifest(plantest.DefaultCorpusSHA, "m", "NVIDIA H100 80GB HBM3", 85_520_809_984, 0.9, 0)
	m["sweep"] = map[string]any{"mode": "concurrency", "levels": []int{1, 2}, "repetitions": 1}
	start := int64(1_700_000_000_000)
	run := plantest.Run{RunID: "r", Manifest: m, StartedAt: start, EndedAt: start + 130_000}
	at := int64(40e9) // after the load and the warm-up
	for _, l := range []struct {
		level int
		dur   float64
	}{{1, 60}, {2, 30}} {
		p := plantest.Pass("v", l.level, 1, 300, 285, l.dur, 100)
		s, e := at, at+p.DurationNS
		p.StartedNS, p.EndedNS = &s, &e
		run.Passes = append(run.Passes, p)
		at = e + 1e9
	}
	run.Events = []results.Event{
		{Variant: "v", AtMS: start + 30_000, Kind: results.EventEngineLoad, ValueNS: 30e9},
		{Variant: "v", AtMS: start + 34_000, Kind: results.EventWarmup, ValueNS: 4e9},
	}
	plantest.Write(t, dir, run)
	d, err := results.LoadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestPlanRun_FixedCostsOnce: the run's fixed costs (5 s: not passes, not
// the time between them, not load or warm-up) are added once to a plan of
// 1,000,000 documents, not scaled with it; only the time between passes
// (1 s for 90 s of passes) is a share of processing. No retry is planned
// unless assumed: the 5% not accepted are said, not re-sent.
func TestPlanRun_FixedCostsOnce(t *testing.T) {
	plans, err := plan.PlanRun(planFixture(t), 1_000_000, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := plans[0]
	if p.Level != 1 {
		t.Fatalf("planned at level %d, want 1", p.Level)
	}
	processing := 1_000_000 * 0.2e9 // 60 s for 300 documents
	if got, want := float64(p.ProcessingNS), processing; got != want {
		t.Errorf("processing %v, want %v", got, want)
	}
	if got, want := float64(p.EvaluationNS), processing/90; math.Abs(got-want) > 1 {
		t.Errorf("evaluation %v ns, want %v: the time between passes, 1 s in 90 s of passes", got, want)
	}
	if rest := p.CorpusNS - p.PreparationNS - p.ProcessingNS - p.EvaluationNS - p.RetriesNS; rest != 5e9 {
		t.Errorf("corpus time less preparation, processing, evaluation and retries = %d ns, want the run's 5 s fixed costs once", rest)
	}
	if p.RetriesNS != 0 {
		t.Errorf("retries %d ns planned with no retry measured or assumed", p.RetriesNS)
	}
	var buf bytes.Buffer
	if err := p.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"retries none assumed", "5.0% were not accepted"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("plan text lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestPlanRunWith_RetryShareAssumed: a retry share is planned only when
// assumed, and the text says it is an assumption, with its figure.
func TestPlanRunWith_RetryShareAssumed(t *testing.T) {
	share := 0.05
	plans, err := plan.PlanRunWith(planFixture(t), plan.PlanOptions{CorpusDocs: 1_000_000, RetryShare: &share})
	if err != nil {
		t.Fatal(err)
	}
	p := plans[0]
	if want := 1_000_000 * 0.05 * 0.2e9 * (1 + 1.0/90); math.Abs(float64(p.RetriesNS)-want) > 1 {
		t.Errorf("retries %d ns, want %v", p.RetriesNS, want)
	}
	var buf bytes.Buffer
	if err := p.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "assumed: 5.0% of documents sent again") {
		t.Errorf("plan text does not state the assumption:\n%s", buf.String())
	}
}

// TestPlanCost_SmallAmounts: a cost below one unit prints with two
// significant digits, never as 0.00.
func TestPlanCost_SmallAmounts(t *testing.T) {
	r, err := sizing.Plan(sizing.PlanInputs{Variant: "v", Mode: "concurrency", Level: 8, Docs: 300_000, Accepted: 300_000,
		DurationNS: 3600e9, CorpusDocs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	p := &sizing.Prices{Path: "p.yaml", Currency: "USD", PerHour: map[string]float64{"H100": 1.23}}
	r.AddCost(p, 1.23, 0)
	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	// 1,000 × 1.23 / 300,000 accepted an hour = 0.0041
	if !strings.Contains(buf.String(), "0.0041 USD (1,000 × price / 300,000 accepted/hour") {
		t.Errorf("the cost per 1,000 accepted does not read 0.0041 USD:\n%s", buf.String())
	}
	if strings.Contains(buf.String(), " 0.00 USD") {
		t.Errorf("a cost printed as 0.00:\n%s", buf.String())
	}
}
