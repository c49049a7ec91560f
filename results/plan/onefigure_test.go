package plan_test

import (
	"context"
	"github.com/extractbench/extractbench/eval"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/plan"
	"github.com/extractbench/extractbench/results/plan/plantest"
)

// TestPlanAndSelect_OneAcceptedPerHour: a level of three repetitions whose
// durations differ (30 s, 60 s, 40 s) has one accepted/h figure in passes,
// the median of each pass's (eval's level rule, what stdout and the report
// show): plan and select quote it, not the pooled ratio of the sums
// (855 accepted in 130 s), and the sustained figure is labelled apart.
func TestPlanAndSelect_OneAcceptedPerHour(t *testing.T) {
	dir := t.TempDir()
	m := plantest.Manifest(plantest.DefaultCorpusSHA, "m", "NVIDIA H100 80GB HBM3", 85_520_809_984, 0.9, 0)
	m["sweep"] = map[string]any{"mode": "concurrency", "levels": []int{1}, "repetitions": 3}
	run := plantest.Run{RunID: "r", Manifest: m}
	for rep, dur := range []float64{30, 60, 40} { // not the first the slowest: that would be warming (eval/steady.go)
		run.Passes = append(run.Passes, plantest.Pass("v", 1, rep+1, 300, 285, dur, 100))
	}
	plantest.Write(t, dir, run)
	d, err := results.LoadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	l := d.Series()[0].Level(1)
	want := l.DocsPerHour.Median // the level's figure: 285 / 40 s × 3600
	if pooled := 3 * 285 / 130.0 * 3600; math.Abs(want-pooled) < 1 {
		t.Fatalf("fixture: the median %v should differ from the pooled %v", want, pooled)
	}
	plans, err := plan.PlanRun(d, 10000, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := plans[0]
	if math.Abs(p.AcceptedPerHour-want) > 1e-6 {
		t.Errorf("plan: %v accepted/h in passes; the level's figure (stdout, report) is %v", p.AcceptedPerHour, want)
	}
	if docs := 300 / 40.0 * 3600; math.Abs(p.PassDocsPerHour-docs) > 1e-6 {
		t.Errorf("plan: %v documents/h in passes, want the median over repetitions %v", p.PassDocsPerHour, docs)
	}
	var text strings.Builder
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if s := l.DocsPerHour.Rate() + " accepted/hour,"; !strings.Contains(text.String(), s) { // the digits its spread supports, as stdout
		t.Errorf("plan text does not quote %q:\n%s", s, text.String())
	}
	if s := eval.FormatRate(p.SustainedAcceptedPerHour) + " accepted/hour sustained"; !strings.Contains(text.String(), s) {
		t.Errorf("plan text does not label the sustained figure %q:\n%s", s, text.String())
	}
	rows, err := plan.Select(context.Background(), []string{dir}, plan.SelectCriteria{Docs: 10000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	header, cells := plan.SelectSheet(rows)
	thr := slices.Index(header, "throughput")
	if s := "in passes " + l.DocsPerHour.Rate() + " accepted/h"; thr < 0 || !strings.Contains(cells[0][thr], s) {
		t.Errorf("select's throughput (column %d of %q) does not quote %q: %q", thr, header, s, cells[0])
	}
}

// TestPlan_LeavesOutWhatTheLevelLeavesOut: a client-bound repetition that
// eval's aggregator leaves out of the level (two of three were not
// client-bound) is left out of plan's rates too.
func TestPlan_LeavesOutWhatTheLevelLeavesOut(t *testing.T) {
	dir := t.TempDir()
	m := plantest.Manifest(plantest.DefaultCorpusSHA, "m", "NVIDIA H100 80GB HBM3", 85_520_809_984, 0.9, 0)
	m["sweep"] = map[string]any{"mode": "concurrency", "levels": []int{1}, "repetitions": 3}
	run := plantest.Run{RunID: "r", Manifest: m}
	yes, no := true, false
	for rep, dur := range []float64{90, 30, 40} {
		p := plantest.Pass("v", 1, rep+1, 300, 285, dur, 100)
		p.ClientBound = &no
		if rep == 0 {
			p.ClientBound = &yes
		}
		run.Passes = append(run.Passes, p)
	}
	plantest.Write(t, dir, run)
	d, err := results.LoadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	l := d.Series()[0].Level(1)
	if l.ClientBoundLeftOut != 1 {
		t.Fatalf("fixture: %d left out", l.ClientBoundLeftOut)
	}
	plans, err := plan.PlanRun(d, 10000, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := plans[0]; math.Abs(p.AcceptedPerHour-l.DocsPerHour.Median) > 1e-6 || p.Docs != 600 {
		t.Errorf("plan: %v accepted/h over %d documents; the level: %v over its 2 kept repetitions", p.AcceptedPerHour, p.Docs, l.DocsPerHour.Median)
	}
}
