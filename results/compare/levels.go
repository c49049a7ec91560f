package compare

import (
	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
)

// LevelRow sets A and B side by side at one level both measured: each is
// the level as eval's aggregator made it for its own run (median over
// repetitions with range, pooled share, highest peaks, the level's verdict),
// the same figures as that run's summary table and report.
type LevelRow struct {
	Level int        `json:"level"`
	A     eval.Level `json:"a"`
	B     eval.Level `json:"b"`
}

// levelRows builds a row for each level both sides measured in mode.
func levelRows(a, b *loaded, mode extractbench.Mode) []LevelRow {
	sa, sb := a.seriesOf(mode), b.seriesOf(mode)
	if sa == nil || sb == nil {
		return nil
	}
	var rows []LevelRow
	for _, la := range sa.Levels {
		if lb := sb.Level(la.Level); lb != nil {
			rows = append(rows, LevelRow{Level: la.Level, A: la, B: *lb})
		}
	}
	return rows
}

// SeriesOf returns a run's series of one variant and mode, nil when it has
// no complete pass.
func SeriesOf(run *results.RunData, variant string, mode extractbench.Mode) *eval.Series {
	for _, s := range run.Series() {
		if s.Variant == variant && s.Mode == mode {
			return &s
		}
	}
	return nil
}
