package plan_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/results/plan"
	"github.com/extractbench/extractbench/results/plan/plantest"
	"github.com/extractbench/extractbench/sizing"
)

// reference decompresses a committed H200 reference's results.db.xz into a
// temporary directory.
func reference(t *testing.T, name string) string {
	t.Helper()
	if _, err := exec.LookPath("xz"); err != nil {
		t.Skip("xz not installed: cannot read the committed references")
	}
	dir := t.TempDir()
	out, err := exec.Command("xz", "-dc", filepath.Join("..", "..", "reference", "h200", name, "results.db.xz")).Output()
	if err != nil {
		t.Fatalf("decompress reference %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.db"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// simulated writes a run of the built-in engine's kind: two variants on an
// H100, bf16 usable up to 4 (recommended 2), int4 broken at its baseline.
func simulated(t *testing.T) string {
	dir := t.TempDir()
	const docs = 300
	run := plantest.Run{RunID: "sim", Simulated: true, EndedAt: 1_700_000_000_000 + 2_000_000}
	for _, l := range []struct {
		variant string
		level   int
		acc     int
		dur     float64
	}{{"bf16", 1, 297, 600}, {"bf16", 2, 297, 320}, {"bf16", 4, 297, 180}, {"bf16", 8, 297, 150}, {"int4", 1, 250, 500}} {
		p := plantest.WithPeaks(plantest.Pass(l.variant, l.level, 1, docs, l.acc, l.dur, int64(500*l.level)),
			int64(20e9+float64(l.level)*4e9), int64(17e9+float64(l.level)*4e9), int64(18e9+float64(l.level)*4e9), 0.1*float64(l.level))
		run.Passes = append(run.Passes, p)
	}
	plantest.Write(t, dir, run)
	return dir
}

func TestSelectReferencesAndSimulated(t *testing.T) {
	ctx := context.Background()
	dirs := []string{reference(t, "1b"), reference(t, "8b"), simulated(t)}
	prices, err := sizing.LoadPrices("../../prices.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := plan.SelectCriteria{Docs: 1_000_000, DeadlineDays: 3}
	rows, err := plan.Select(ctx, dirs, c, prices)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("got %d rows, want 4 (1b bf16, 8b bf16, sim bf16, sim int4)", len(rows))
	}
	// The references' recommendations are eval's (README: 32 for 1b, 8 for 8b).
	want := map[string]int{dirs[0]: 32, dirs[1]: 8, dirs[2]: 4}
	for _, r := range rows {
		if r.Variant != "bf16" {
			continue
		}
		if r.Recommended != want[r.Dir] {
			t.Errorf("%s: recommended %d, want %d", r.Dir, r.Recommended, want[r.Dir])
		}
	}
	// The references are PASS with random weights, priced at the H200's placeholder 5.00.
	for _, r := range rows[:2] {
		if !r.Meets || r.Rank == 0 || r.Plan == nil || r.Plan.Cost == nil {
			t.Fatalf("row %s %s: want it ranked and priced, got %+v", r.Dir, r.Variant, r)
		}
	}
	for _, r := range rows {
		if r.Dir == dirs[0] || r.Dir == dirs[1] {
			if !r.RandomWeights || r.GPU != "NVIDIA H200" || r.Plan.Cost.PerCardHour != 5 || len(r.Env.Problems) != 0 {
				t.Errorf("reference %s: got random %v gpu %q price %v env %v", r.Dir, r.RandomWeights, r.GPU, r.Plan.Cost.PerCardHour, r.Env.Problems)
			}
			if r.Phases == nil || r.Phases.AfterLoadBytes == nil || r.Phases.GenerationPeak == nil {
				t.Errorf("reference %s: phases %+v, want after-load and generation figures from its telemetry", r.Dir, r.Phases)
			}
		}
		if r.Dir == dirs[2] && r.Variant == "int4" && (r.Meets || r.Rank != 0 || !strings.Contains(strings.Join(r.Why, ";"), "state FAIL")) {
			t.Errorf("simulated int4 failed its baseline: got meets %v rank %d why %v", r.Meets, r.Rank, r.Why)
		}
		if r.Dir == dirs[2] && (!r.Simulated || r.Phases != nil) {
			t.Errorf("simulated run: got simulated %v phases %+v (a fixture without telemetry has none)", r.Simulated, r.Phases)
		}
	}
	// Ranked by cost per 1,000 accepted: cheapest first among those that meet.
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		if a.Meets && b.Meets && b.Plan.Cost.PerThousandAccepted > 0 && a.Plan.Cost.PerThousandAccepted > b.Plan.Cost.PerThousandAccepted {
			t.Errorf("rank %d costs %v > rank %d's %v", a.Rank, a.Plan.Cost.PerThousandAccepted, b.Rank, b.Plan.Cost.PerThousandAccepted)
		}
	}
	// A quality floor removes the references (accepted 0%: random weights).
	floor, err := plan.Select(ctx, dirs, plan.SelectCriteria{Docs: 1000, MinAccepted: 0.95}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if floor[0].Dir != dirs[2] || floor[0].Rank != 1 || floor[1].Meets {
		t.Errorf("with a 95%% floor only the simulated bf16 meets: got %s rank %d, next meets %v", floor[0].Dir, floor[0].Rank, floor[1].Meets)
	}
	var md, html bytes.Buffer
	if err := plan.WriteSelectMarkdown(&md, rows, c); err != nil {
		t.Fatal(err)
	}
	if err := plan.WriteSelectHTML(&html, rows, c); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"PLACEHOLDER", "random weights", "SIMULATED", "NVIDIA H200", "none accepted"} {
		if !strings.Contains(md.String(), w) || !strings.Contains(html.String(), w) {
			t.Errorf("sheet lacks %q", w)
		}
	}
	if !strings.Contains(md.String(), "| rank | configuration |") || !strings.Contains(html.String(), "<th>rank</th>") {
		t.Error("sheet lacks its header")
	}
	if testing.Verbose() {
		t.Log(md.String())
	}
}
