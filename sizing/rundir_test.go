package sizing_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/sizing"
	"github.com/extractbench/extractbench/sizing/sizingtest"
)

// fixtureRun is a run of one variant on an H100 whose level 16 breaks on
// memory: levels 1–8 usable, 4 recommended.
func fixtureRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	const gib = 1 << 30
	passes := []results.Pass{
		sizingtest.WithPeaks(sizingtest.Pass("bf16", 1, 1, 300, 291, 600, 900), 70*gib, 17*gib, 18*gib, 0.01),
		sizingtest.WithPeaks(sizingtest.Pass("bf16", 2, 1, 300, 290, 320, 1000), 70*gib, 17*gib, 18*gib, 0.02),
		sizingtest.WithPeaks(sizingtest.Pass("bf16", 4, 1, 300, 291, 180, 1200), 71*gib, 18*gib, 19*gib, 0.05),
		sizingtest.WithPeaks(sizingtest.Pass("bf16", 4, 2, 300, 291, 170, 1100), 72*gib, 18*gib, 20*gib, 0.06),
		sizingtest.WithPeaks(sizingtest.Pass("bf16", 8, 1, 300, 290, 100, 2000), 72*gib, 19*gib, 20*gib, 0.1),
		sizingtest.Pass("bf16", 16, 1, 300, 250, 90, 4000),
	}
	passes[5].FailuresMemory, passes[5].FailuresQuality = 40, 10
	run := sizingtest.Run{RunID: "r1", StartedAt: 1_700_000_000_000, Passes: passes,
		// 1,460 s of passes + 120 s load + 20 s warm-up; wall 1,746 s: 146 s of overhead, 10%.
		EndedAt: 1_700_000_000_000 + 1_746_000,
		Events: []results.Event{
			{Variant: "bf16", AtMS: 1_700_000_000_000, Kind: results.EventEngineLoad, ValueNS: 120e9},
			{Variant: "bf16", AtMS: 1_700_000_120_000, Kind: results.EventWarmup, ValueNS: 20e9},
		}}
	sizingtest.Write(t, dir, run)
	return dir
}

func TestLoadRun(t *testing.T) {
	dir := fixtureRun(t)
	run, err := sizing.LoadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if run.RunID != "r1" || len(run.Passes) != 6 || len(run.Events) != 2 {
		t.Fatalf("got run %s with %d passes and %d events", run.RunID, len(run.Passes), len(run.Events))
	}
	if got := run.Manifest.Acceptance.MinAccepted; got != 0.95 {
		t.Errorf("acceptance: got %v, want 0.95", got)
	}
	if got := run.Manifest.Variant("bf16").GPU.MemoryTotalBytes; got != 85_520_809_984 {
		t.Errorf("gpu memory: got %d", got)
	}
	if p := run.Passes[5]; p.PeakGPUMemBytes != nil || p.FailuresMemory != 40 || p.E2EP95NS != 4000e6 {
		t.Errorf("level 16: got %+v", p)
	}
	if got, want := run.OverheadShare(), 146.0/1460; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("overhead share: got %v, want %v", got, want)
	}
	if _, err := sizing.LoadRun(context.Background(), t.TempDir()); err == nil {
		t.Error("an empty directory: got no error")
	}
}

func TestPlanRun(t *testing.T) {
	run, err := sizing.LoadRun(context.Background(), fixtureRun(t))
	if err != nil {
		t.Fatal(err)
	}
	plans, err := sizing.PlanRun(run, 3000, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != 1 {
		t.Fatalf("got %d plans", len(plans))
	}
	p := plans[0]
	// Level 4: 600 documents in 350 s, 582 accepted; load 120 s, warm-up 20 s.
	if p.Level != 4 || p.Docs != 600 || p.Accepted != 582 || p.DurationNS != 350e9 || p.LoadNS != 120e9 || p.WarmupNS != 20e9 {
		t.Fatalf("got inputs %+v", p.PlanInputs)
	}
	// 3,000 × 350/600 s = 1,750 s; evaluation 175 s; retries 3,000 × 0.03 × 350/600 × 1.1 = 57.75 s.
	if want := int64((140 + 1750 + 175 + 57.75) * 1e9); p.CorpusNS != want {
		t.Errorf("corpus time: got %d, want %d", p.CorpusNS, want)
	}
	var buf bytes.Buffer
	if err := p.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "concurrency 16 broke") {
		t.Errorf("the plan should say why: %s", buf.String())
	}
}

func TestCheckMeasured(t *testing.T) {
	run, err := sizing.LoadRun(context.Background(), fixtureRun(t))
	if err != nil {
		t.Fatal(err)
	}
	mc, err := sizing.CheckMeasured(run, sizing.Inputs{ContextTokens: 8192})
	if err != nil {
		t.Fatal(err)
	}
	if len(mc.Estimates) != 1 || mc.Estimates[0].Estimate.Model != "Llama-3.1-8B" {
		t.Fatalf("the manifest's meta-llama/Llama-3.1-8B-Instruct should find its preset: %+v", mc.Estimates)
	}
	if len(mc.Rows) != 5 {
		t.Fatalf("got %d rows, want one per level", len(mc.Rows))
	}
	e := mc.Estimates[0].Estimate
	four := mc.Rows[2]
	if four.Level != 4 || four.PredictedBytes != e.At(4) || *four.PeakGPUMemBytes != 72<<30 || *four.PeakKVUsage != 0.06 {
		t.Errorf("level 4: got %+v", four)
	}
	// The run's measured card (85,520,809,984 B) replaces the datasheet: usable 0.9 × that.
	usable := 0.9 * float64(85_520_809_984)
	pool := float64(int64(usable) - e.FixedBytes())
	if want := 4 * float64(e.KVBytesPerSeq) / pool; four.PredictedKVShare != want {
		t.Errorf("predicted KV share: got %v, want %v", four.PredictedKVShare, want)
	}
	if last := mc.Rows[4]; last.Level != 16 || last.PeakGPUMemBytes != nil {
		t.Errorf("level 16 has no peaks: got %+v", last)
	}
	var buf bytes.Buffer
	if err := mc.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"n/a", "72.00 GiB", "NVIDIA H100 80GB HBM3"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
}
