package compare

import (
	"context"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/plan/plantest"
)

// writeRateRun writes a rate sweep of bf16 and int4: a sync baseline (level
// 0) and 10/s, 300 documents each. At sync int4 fails 8 documents bf16
// accepts; at 10/s both fail the same 8 plus bf16 one more. Two sync
// repetitions, so that level 0's rows are not all of the variant's rows.
func writeRateRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	m := plantest.Manifest("c0ffee", "m", "NVIDIA L4", 24<<30, 0.9, 0)
	m["sweep"] = map[string]any{"mode": "rate", "levels": []int{10}, "repetitions": 1}
	m["variants"] = []map[string]any{{"name": "bf16"}, {"name": "int4"}}
	run := plantest.Run{RunID: "rate", Manifest: m}
	add := func(variant string, level int, fails []int) {
		recs := plantest.Records(variant, level, 1, 300, failSet(fails...))
		p := plantest.Pass(variant, level, 1, 300, 300-len(fails), 60, 100)
		p.Mode, p.Phase = extractbench.ModeRate, extractbench.PhaseSweep
		if level == extractbench.SyncLevel {
			p.Phase = extractbench.PhaseBaseline
		}
		for i := range recs {
			recs[i].Mode = extractbench.ModeRate
		}
		run.Records, run.Passes = append(run.Records, recs...), append(run.Passes, p)
	}
	add("bf16", extractbench.SyncLevel, nil)
	add("int4", extractbench.SyncLevel, span(0, 8))
	add("bf16", 10, span(0, 9))
	add("int4", 10, span(0, 8))
	plantest.Write(t, dir, run)
	return dir
}

// TestRun_rateSweepPairsAtSync: a rate sweep pairs on its sync baseline by
// default (the old code paired "concurrency 1" and refused), reads "sync",
// "0", "10" and "10/s" as the levels they name, and refuses a level neither
// measured with the ones both did, in the pages' names.
func TestRun_rateSweepPairsAtSync(t *testing.T) {
	dir := writeRateRun(t)
	sides := Options{A: Side{Dir: dir, Variant: "bf16"}, B: Side{Dir: dir, Variant: "int4"}}
	for _, tt := range []struct {
		level     string
		wantLevel int
		wantN     int // discordant pairs: 8 lost at sync, 1 won at 10/s
	}{{"", 0, 8}, {"sync", 0, 8}, {"0", 0, 8}, {"10", 10, 1}, {"10/s", 10, 1}} {
		opt := sides
		opt.Level = tt.level
		r, err := Run(context.Background(), opt)
		if err != nil {
			t.Errorf("level %q: %v", tt.level, err)
			continue
		}
		if r.Mode != extractbench.ModeRate || r.Level != tt.wantLevel || r.Equivalence.N != 300 || r.Equivalence.B+r.Equivalence.C != tt.wantN {
			t.Errorf("level %q: paired %s %d, n %d, %d discordant; want rate %d, n 300, %d discordant",
				tt.level, r.Mode, r.Level, r.Equivalence.N, r.Equivalence.B+r.Equivalence.C, tt.wantLevel, tt.wantN)
		}
	}
	r, _ := Run(context.Background(), sides)
	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "(the reference), rate sync repetition 1") {
		t.Errorf("text does not name the paired level rate sync:\n%s", text.String())
	}
	for _, tt := range []struct{ mode, level, want string }{
		{"", "1", "level 1 was not measured by both sides at repetition 1; both measured rate sync, 10/s: choose one of them"},
		{"rate", "20/s", "level 20/s in rate mode was not measured by both sides at repetition 1; both measured rate sync, 10/s"},
		{"concurrency", "", "the baseline level in concurrency mode was not measured by both sides"},
		{"rate", "fast", `level "fast": want sync or a rate (10 or 10/s)`},
	} {
		opt := sides
		opt.Mode, opt.Level = extractbench.Mode(tt.mode), tt.level
		if _, err := Run(context.Background(), opt); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("-mode %q -level %q: got %v, want %q", tt.mode, tt.level, err, tt.want)
		}
	}
}

// TestPairedVerdicts_rateSweep: the run's paired verdict of a rate sweep
// is at sync, not NO VERDICT.
func TestPairedVerdicts_rateSweep(t *testing.T) {
	dir := writeRateRun(t)
	run := loadRun(t, dir)
	ps, err := PairedVerdicts(context.Background(), dir, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].NoVerdict != "" || ps[0].Mode != extractbench.ModeRate || ps[0].Level != extractbench.SyncLevel || ps[0].Lost != 8 {
		t.Fatalf("paired = %+v, want int4 at rate sync with 8 lost", ps)
	}
	if got := ps[0].Text(); !strings.Contains(got, "of 300 at rate sync,") {
		t.Errorf("Text() = %q, want it to name rate sync", got)
	}
}

func loadRun(t *testing.T, dir string) *results.RunData {
	t.Helper()
	rd, err := results.OpenReadOnly(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	run, err := rd.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return run
}
