package results_test

import (
	"context"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/plan/plantest"
)

// TestOutcomes_InterruptedMidPass is issue 24's variant interrupted after
// 53 measured requests: no pass of it is whole, yet it measured something,
// so it is INTERRUPTED (with the count), not NOT RUN; a variant that never
// sent a request is still NOT RUN. Both from the database (the measured
// requests are counted) and from pass rows alone (an interrupted pass's
// documents), as a RunData built without the database has them.
func TestOutcomes_InterruptedMidPass(t *testing.T) {
	m := plantest.Manifest(plantest.DefaultCorpusSHA, "m", "NVIDIA H100 80GB HBM3", 85_520_809_984, 0.9, 0)
	m["variants"] = []map[string]any{{"name": "bf16", "engine": map[string]any{"model": "m"}}, {"name": "int4", "engine": map[string]any{"model": "m"}}}
	dir := t.TempDir()
	plantest.Write(t, dir, plantest.Run{RunID: "cut", Manifest: m, Status: results.RunInterrupted,
		Records: plantest.Records("bf16", 1, 1, 53, func(int) bool { return true })})
	run, err := results.LoadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, run *results.RunData) {
		t.Helper()
		got := map[string]results.Outcome{}
		for _, o := range run.Outcomes() {
			got[o.Variant] = o
		}
		if o := got["bf16"]; o.State != results.OutcomeInterrupted || !strings.Contains(o.Reason, "53 measured requests") {
			t.Errorf("%s: bf16 %s %q, want INTERRUPTED after 53 measured requests", name, o.State, o.Reason)
		}
		if o := got["int4"]; o.State != results.OutcomeNotRun {
			t.Errorf("%s: int4 %s %q, want NOT RUN: it sent nothing", name, o.State, o.Reason)
		}
	}
	check("from the database", run)

	byHand := *run
	byHand.Measured = nil
	p := plantest.Pass("bf16", 1, 1, 53, 53, 10, 500)
	p.Status = extractbench.PassInterrupted
	byHand.Passes = []extractbench.Pass{p}
	check("from an interrupted pass row", &byHand)
}
