package eval

import (
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

// offlinePass is a complete pass of 300 documents with its accepted
// documents per hour and duration.
func offlinePass(level, accepted, memFail int, p95ms int64, docsPerHour float64) extractbench.Pass {
	p := pass(level, 1, accepted, memFail, p95ms)
	p.DocsPerHour = &docsPerHour
	p.DurationNS = int64(float64(accepted) / docsPerHour * 3600e9)
	return p
}

// TestOfflineObjective checks the two objectives apart on a sweep shaped as
// the default run's bf16: 32 meets the latency objective and gives the most
// accepted documents per hour, so the interactive recommendation steps back
// to 16 while the offline one is 32; 64 breaks latency only and gets fewer
// documents out, 128 runs out of memory.
func TestOfflineObjective(t *testing.T) {
	passes := []extractbench.Pass{
		offlinePass(1, 291, 0, 50, 60000), offlinePass(2, 291, 0, 55, 120000), offlinePass(4, 291, 0, 60, 230000),
		offlinePass(8, 291, 0, 80, 450000), offlinePass(16, 291, 0, 120, 874324), offlinePass(32, 291, 0, 190, 958857),
		offlinePass(64, 291, 0, 400, 940000), offlinePass(128, 200, 50, 900, 990000),
	}
	acc := extractbench.Acceptance{MinAccepted: 0.95, LatencyP95MS: 200}
	r := recommendOne(passes, acc).Recommendation
	if r.Recommended != 16 || r.HighestUsable != 32 {
		t.Fatalf("interactive: recommended %d highest %d, want 16 and 32 (%s)", r.Recommended, r.HighestUsable, r.Why)
	}
	o := r.Offline
	if !o.Asked || o.Level != 32 || o.DocsPerHour != 958857 || o.MarginLevel != 16 || o.StoppedAt != 128 {
		t.Fatalf("offline: %+v, want level 32 at 958857/h, margin 16, stopped at 128", o)
	}
	if want := offlinePass(32, 291, 0, 190, 958857).DurationNS; o.CorpusTimeNS != want || o.Docs != 300 {
		t.Errorf("offline corpus time %d ns for %d docs, want %d ns for 300", o.CorpusTimeNS, o.Docs, want)
	}
	for _, want := range []string{"concurrency 32: most accepted documents/hour (959,000)", "with margin, concurrency 16: 874,000/h", "concurrency 128 failed the gate (50 memory failure(s)"} {
		if !strings.Contains(o.Why, want) {
			t.Errorf("offline why %q lacks %q", o.Why, want)
		}
	}

	t.Run("only interactive asked", func(t *testing.T) {
		acc := acc
		acc.Objective = extractbench.ObjectiveInteractive
		r := recommendOne(passes, acc).Recommendation
		if r.Offline.Asked || r.Offline.Level != 0 || !strings.Contains(r.Offline.Why, "not asked") {
			t.Errorf("offline answered though not asked: %+v", r.Offline)
		}
		if !r.InteractiveAsked() || r.Interactive() != r.Why {
			t.Errorf("interactive: %q", r.Interactive())
		}
	})
	t.Run("only offline asked", func(t *testing.T) {
		acc := acc
		acc.Objective = extractbench.ObjectiveOffline
		r := recommendOne(passes, acc).Recommendation
		if r.InteractiveAsked() || !strings.Contains(r.Interactive(), "not asked: the protocol's objective is offline") {
			t.Errorf("interactive: %q", r.Interactive())
		}
		if r.Offline.Level != 32 {
			t.Errorf("offline level %d, want 32", r.Offline.Level)
		}
	})
	t.Run("quality breaks first", func(t *testing.T) {
		ps := []extractbench.Pass{offlinePass(1, 291, 0, 50, 60000), offlinePass(2, 200, 0, 50, 900000)}
		o := recommendOne(ps, acc).Recommendation.Offline
		if o.Level != 1 || o.MarginLevel != 1 || o.StoppedAt != 2 || !strings.Contains(o.Why, "no margin step below it") {
			t.Errorf("offline %+v: want level 1, no margin, stopped at 2", o)
		}
	})
}
