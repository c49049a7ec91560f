package eval

import (
	"testing"

	"github.com/extractbench/extractbench"
)

// TestParseLevel_readsLevelName: every level a page names reads back as
// the same level, in every mode, and what is no level of the mode is
// refused (a rate sweep's "sync" is its level 0, never level 1).
func TestParseLevel_readsLevelName(t *testing.T) {
	modes := []extractbench.Mode{extractbench.ModeConcurrency, extractbench.ModeBatch, extractbench.ModeRate, extractbench.ModeContext}
	for _, mode := range modes {
		levels := []int{1, 2, 16, 160}
		if mode == extractbench.ModeRate {
			levels = append(levels, extractbench.SyncLevel)
		}
		if mode == extractbench.ModeContext {
			levels = []int{1, 2, 3}
		}
		for _, l := range levels {
			name := LevelName(mode, l)
			got, err := ParseLevel(mode, name)
			if err != nil || got != l {
				t.Errorf("ParseLevel(%s, %q) = %d, %v; want %d", mode, name, got, err, l)
			}
		}
	}
	tests := []struct {
		mode extractbench.Mode
		text string
		want int
	}{
		{extractbench.ModeRate, "sync", extractbench.SyncLevel},
		{extractbench.ModeRate, "SYNC", extractbench.SyncLevel},
		{extractbench.ModeRate, "0", extractbench.SyncLevel},
		{extractbench.ModeRate, "10", 10},
		{extractbench.ModeRate, "10/s", 10},
		{extractbench.ModeConcurrency, "8", 8},
		{extractbench.ModeContext, "long", 3},
	}
	for _, tt := range tests {
		if got, err := ParseLevel(tt.mode, tt.text); err != nil || got != tt.want {
			t.Errorf("ParseLevel(%s, %q) = %d, %v; want %d", tt.mode, tt.text, got, err, tt.want)
		}
	}
	for _, bad := range []struct {
		mode extractbench.Mode
		text string
	}{{extractbench.ModeConcurrency, "sync"}, {extractbench.ModeRate, "fast"}, {extractbench.ModeBatch, "-1"}, {extractbench.ModeRate, "10/h"}} {
		if got, err := ParseLevel(bad.mode, bad.text); err == nil {
			t.Errorf("ParseLevel(%s, %q) = %d, want an error", bad.mode, bad.text, got)
		}
	}
}

// TestRecommendation_syncIsNeverRecommended: a rate sweep whose every rate
// broke recommends nothing, and its sync baseline (level 0, the zero of
// Recommended) is not "the recommended level" to any page.
func TestRecommendation_syncIsNeverRecommended(t *testing.T) {
	s := Series{Mode: extractbench.ModeRate, Levels: []Level{{Mode: extractbench.ModeRate, Level: extractbench.SyncLevel}, {Mode: extractbench.ModeRate, Level: 10}},
		Recommendation: Recommendation{Mode: extractbench.ModeRate, FirstBroken: 10}}
	if s.Recommendation.Is(extractbench.SyncLevel) {
		t.Error("Is(sync) = true for a sweep that recommends nothing")
	}
	if l := s.Recommended(); l != nil {
		t.Errorf("Recommended() = level %d, want nil", l.Level)
	}
	s.Recommendation.Recommended, s.Recommendation.HighestUsable, s.Recommendation.FirstBroken = 10, 10, 0
	if l := s.Recommended(); l == nil || l.Level != 10 || !s.Recommendation.Is(10) || s.Recommendation.Is(extractbench.SyncLevel) {
		t.Errorf("Recommended() = %v, want level 10", l)
	}
	if got, want := LevelLabel(extractbench.ModeRate, extractbench.SyncLevel), "rate sync"; got != want {
		t.Errorf("LevelLabel = %q, want %q", got, want)
	}
}
