package results

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// TestChooseAutoLevels: N rates evenly from the synchronous rate up to the
// saturated throughput (the last at it), whole requests per second, at least
// 1, below the probe, without duplicates.
func TestChooseAutoLevels(t *testing.T) {
	for _, tc := range []struct {
		sync, sat float64
		n, probe  int
		want      []int
	}{
		{10, 40, 3, 400, []int{20, 30, 40}},
		{27, 58.5, 6, 8100, []int{32, 38, 43, 48, 53, 59}},
		{0.2, 0.9, 4, 6, []int{1}},    // slower than a request a second: one rate
		{5, 5, 3, 50, []int{5}},       // no headroom: the synchronous rate once
		{10, 400, 2, 300, []int{205}}, // the probe's own rate is never chosen
		{2, 3.4, 6, 20, []int{2, 3}},  // rounding merges neighbours
	} {
		if got := extractbench.ChooseAutoLevels(tc.sync, tc.sat, tc.n, tc.probe); !slices.Equal(got, tc.want) {
			t.Errorf("ChooseAutoLevels(%v, %v, %d, %d) = %v, want %v", tc.sync, tc.sat, tc.n, tc.probe, got, tc.want)
		}
	}
}

// TestSweepJSON_Auto: levels is written back as "auto" and read again; a
// list stays a list, and the canonical form of a listed sweep is unchanged
// (no auto_levels key), so that fingerprints of other sweeps stay as they were.
func TestSweepJSON_Auto(t *testing.T) {
	b, err := json.Marshal(extractbench.Sweep{Mode: extractbench.ModeRate, Auto: true, AutoLevels: 6, Repetitions: 3})
	if err != nil || !strings.Contains(string(b), `"levels":"auto"`) {
		t.Fatalf("auto sweep marshals as %s (%v)", b, err)
	}
	var s extractbench.Sweep
	if err := json.Unmarshal(b, &s); err != nil || !s.Auto || s.AutoLevels != 6 || s.Levels != nil {
		t.Errorf("read back %+v (%v)", s, err)
	}
	b, _ = json.Marshal(extractbench.Sweep{Mode: extractbench.ModeConcurrency, Levels: []int{1, 2}, Repetitions: 3, OnMemoryFailure: "record"})
	if want := `{"mode":"concurrency","levels":[1,2],"repetitions":3,"warmup":0,"on_memory_failure":"record"}`; string(b) != want {
		t.Errorf("listed sweep marshals as %s, want %s", b, want)
	}
	if err := json.Unmarshal([]byte(`{"mode":"rate","levels":"some"}`), &s); err == nil {
		t.Error(`levels "some" accepted`)
	}
	m := &extractbench.Manifest{Sweep: extractbench.Sweep{Mode: extractbench.ModeRate, Auto: true, AutoLevels: 6, Repetitions: 2}, Variants: []extractbench.VariantManifest{{Name: "a"}, {Name: "b", AutoLevels: &extractbench.AutoLevels{Levels: []int{3, 5}}}}}
	if a, b := m.PlannedPasses("a"), m.PlannedPasses("b"); a != 2+1+12 || b != 2+1+4 {
		t.Errorf("planned passes %d and %d, want 15 (6 rates to choose) and 7 (2 chosen)", a, b)
	}
	if p := eval.PlannedOf(m); !slices.Equal(p.ByVariant["b"], []int{extractbench.SyncLevel, 3, 5}) || p.ByVariant["a"] != nil {
		t.Errorf("plan %+v", p)
	}
}

// TestManifestPlan_ContextClasses: a context sweep plans the length classes
// the corpus has, in order, and reads them by name.
func TestManifestPlan_ContextClasses(t *testing.T) {
	m := &extractbench.Manifest{Sweep: extractbench.Sweep{Mode: extractbench.ModeContext, Classes: true, Concurrency: 4, Repetitions: 2},
		Corpus: extractbench.CorpusInfo{Classes: map[string]int{"short": 10, "long": 3}}}
	if got := eval.PlannedOf(m).Levels; !slices.Equal(got, []int{1, 3}) {
		t.Errorf("planned levels %v, want short (1) and long (3): the corpus has no usual document", got)
	}
	if n := m.PlannedPasses("a"); n != 4 {
		t.Errorf("planned passes %d, want 2 classes × 2 repetitions", n)
	}
	if got := eval.LevelName(extractbench.ModeContext, 3); got != "long" {
		t.Errorf("level 3 of a context sweep reads %q", got)
	}
}
