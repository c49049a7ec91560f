package plan

import (
	"testing"

	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/sizing"
)

// TestRankDispersion: two configurations whose accepted/h ranges over
// repetitions overlap, or that rest on one repetition, share a rank; ranges
// apart give two ranks (the dispersion rule).
func TestRankDispersion(t *testing.T) {
	row := func(dir string, med, lo, hi float64, n int) SelectRow {
		return SelectRow{Dir: dir, Meets: true, Plan: &sizing.PlanResult{AcceptedPerHour: med},
			perHour: eval.Spread{N: n, Median: med, Min: lo, Max: hi}}
	}
	tests := []struct {
		name  string
		a, b  SelectRow
		ranks [2]int
	}{
		{"apart", row("a", 4200, 4100, 4300, 3), row("b", 3300, 3200, 3400, 3), [2]int{1, 2}},
		{"overlapping", row("a", 4200, 3000, 4300, 3), row("b", 3300, 3200, 3400, 3), [2]int{1, 1}},
		{"one repetition", row("a", 4200, 4200, 4200, 1), row("b", 3300, 3300, 3300, 1), [2]int{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := []SelectRow{tt.b, tt.a}
			rank(rows)
			if rows[0].Dir != "a" || rows[0].Rank != tt.ranks[0] || rows[1].Rank != tt.ranks[1] || rows[1].Tied != (tt.ranks[1] == 1) {
				t.Errorf("ranks %s %d, %s %d (tied %v), want %v", rows[0].Dir, rows[0].Rank, rows[1].Dir, rows[1].Rank, rows[1].Tied, tt.ranks)
			}
		})
	}
}
