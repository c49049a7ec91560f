package report

import (
	"context"
	"reflect"
	"testing"

	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
)

// TestScanSeries_LatenciesAsSQLite: the latencies the report sums up in Go
// from its one scan of each complete pass (each level's E2E, each level
// and length class's TTFT and E2E) are SQLite's sorted reads
// (results.Reader.LatencyGroups) bit for bit, on a run of several
// repetitions per level, length classes and failures without a first
// token, with a level's passes apart in the run's order.
func TestScanSeries_LatenciesAsSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fixture{Docs: 90, Levels: []int{1, 2, 4}, Reps: 3, OOMAt: 2, Version: "0.1.0", Bare: true, Variants: []string{"bf16", "fp8"}}.write(t, dir)
	rd, err := results.OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	run, err := rd.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	series := run.Series()
	if len(series) < 2 {
		t.Fatalf("%d series, want 2", len(series))
	}
	for _, es := range series {
		got, err := scanSeries(ctx, rd, run, es)
		if err != nil {
			t.Fatal(err)
		}
		sel := results.Selection{RunID: run.Run.RunID, Variant: es.Variant, Mode: es.Mode, Passes: [][2]int{}}
		for _, p := range run.Passes {
			if p.Variant == es.Variant && p.Mode == es.Mode && p.Complete() {
				sel.Passes = append(sel.Passes, [2]int{p.Level, p.Repetition})
			}
		}
		if len(sel.Passes) != 9 {
			t.Fatalf("%s: %d complete passes, want 9", es.Variant, len(sel.Passes))
		}
		by := results.GroupLevel | results.GroupLengthClass
		e2e, pooled, err := rd.LatencyGroupsPooled(ctx, sel, results.LatencyE2E, by, results.GroupLevel)
		if err != nil {
			t.Fatal(err)
		}
		ttft, err := rd.LatencyGroups(ctx, sel, results.LatencyTTFT, by)
		if err != nil {
			t.Fatal(err)
		}
		wantPooled := map[int]eval.Distribution{}
		for g, d := range pooled {
			wantPooled[g.Level] = d
		}
		if !reflect.DeepEqual(got.PooledE2E, wantPooled) {
			t.Errorf("%s: pooled E2E\n got %v\nwant %v", es.Variant, got.PooledE2E, wantPooled)
		}
		if len(got.Classes) < 6 {
			t.Errorf("%s: %d class rows, want levels × length classes", es.Variant, len(got.Classes))
		}
		for _, row := range got.Classes {
			g := results.Group{Level: row.Level, LengthClass: row.Class}
			if row.E2E != e2e[g] || row.TTFT != ttft[g] {
				t.Errorf("%s level %d %s: E2E %v TTFT %v, SQLite's %v %v", es.Variant, row.Level, row.Class, row.E2E, row.TTFT, e2e[g], ttft[g])
			}
		}
	}
}
