package eval

import (
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

// TestAggregate_CacheShare: a level whose cached prompt share strays from
// the baseline's by more than CacheShareTolerance, or whose repetitions'
// shares differ by more, is labelled; one within it is not; what became of
// the cache is summarised unless every pass was reset.
func TestAggregate_CacheShare(t *testing.T) {
	pass := func(level, rep int, share float64, reset string) extractbench.Pass {
		p := extractbench.Pass{RunID: "r", Variant: "v", Mode: extractbench.ModeConcurrency, Level: level, Repetition: rep,
			Phase: extractbench.PhaseSweep, Status: extractbench.PassComplete, Docs: 10, Accepted: 10, CacheReset: reset}
		if level == 1 {
			p.Phase = extractbench.PhaseBaseline
		}
		if share >= 0 {
			p.CachedPromptShare = &share
		}
		return p
	}
	tol := CacheShareTolerance
	tests := []struct {
		name   string
		passes []extractbench.Pass
		level  int
		note   string // "" = no label; else a part of it
		reset  string
	}{
		{"same share", []extractbench.Pass{pass(1, 1, 0.06, "reset"), pass(8, 1, 0.07, "reset")}, 8, "", ""},
		{"just within", []extractbench.Pass{pass(1, 1, 0.06, "reset"), pass(8, 1, 0.06+tol-0.001, "reset")}, 8, "", ""},
		{"beyond, above", []extractbench.Pass{pass(1, 1, 0.06, "kept"), pass(8, 1, 0.43, "kept")}, 8, "43.0% against the baseline's 6.0% (level 1): +37 points", "kept ×1"},
		{"beyond, below", []extractbench.Pass{pass(1, 1, 0.97, "kept"), pass(8, 1, 0.06, "kept")}, 8, "-91 points", "kept ×1"},
		{"repetitions apart", []extractbench.Pass{pass(1, 1, 0.06, "kept"), pass(1, 2, 0.97, "kept"), pass(1, 3, 0.97, "kept")}, 1, "6.0% to 97.0% across its repetitions", "kept ×3"},
		{"no share reported", []extractbench.Pass{pass(1, 1, -1, "unsupported"), pass(8, 1, 0.5, "unsupported")}, 8, "", "unsupported ×1"},
		{"a failed reset", []extractbench.Pass{pass(1, 1, 0.06, "reset"), pass(8, 1, 0.06, "reset"), pass(8, 2, 0.06, "failed: POST /flush_cache: 400")}, 8, "", "reset ×1, failed: POST /flush_cache: 400 ×1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			series := AggregateLevels(tt.passes, extractbench.Acceptance{MinAccepted: 0.5}, Planned{})
			l := series[0].Level(tt.level)
			if l == nil {
				t.Fatalf("no level %d", tt.level)
			}
			if tt.note == "" && l.CacheNote != "" || tt.note != "" && !strings.Contains(l.CacheNote, tt.note) {
				t.Errorf("CacheNote = %q, want %q", l.CacheNote, tt.note)
			}
			if l.CacheReset != tt.reset {
				t.Errorf("CacheReset = %q, want %q", l.CacheReset, tt.reset)
			}
			if base := series[0].Baseline(); tt.level != 1 && base.CacheNote != "" {
				t.Errorf("baseline labelled %q, want only the level that strays", base.CacheNote)
			}
		})
	}
}
