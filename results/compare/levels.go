package compare

import (
	"slices"
	"strings"

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

// pairedLevel resolves the mode and level whose documents are paired: text
// as the pages name a level (eval.ParseLevel), "" for the baseline level
// (1, or a rate sweep's sync). With no mode, the modes A's variant ran are
// tried, concurrency first. A level that A and B did not both measure at
// repetition rep is refused with the levels they did: never another level
// in its place.
func pairedLevel(a, b *loaded, mode extractbench.Mode, text string, rep int) (extractbench.Mode, int, error) {
	modes := []extractbench.Mode{mode}
	if mode == "" {
		modes = a.modes()
	}
	for _, m := range modes {
		level, err := eval.ParseLevel(m, text)
		if text == "" {
			level, err = a.baselineLevel(m), nil
		}
		if err == nil && slices.Contains(commonLevels(a, b, m, rep), level) {
			return m, level, nil
		}
		if err != nil && mode != "" {
			return "", 0, results.Refused("%v", err)
		}
	}
	what := "the baseline level"
	if text != "" {
		what = "level " + text
	}
	if mode != "" {
		what += " in " + string(mode) + " mode"
	}
	var offered []string
	for _, m := range a.modes() {
		if common := commonLevels(a, b, m, rep); len(common) > 0 {
			offered = append(offered, string(m)+" "+eval.LevelNames(m, common))
		}
	}
	if len(offered) == 0 {
		return "", 0, results.Refused("%s: %s and %s measured no level in common at repetition %d", what, a.side, b.side, rep)
	}
	return "", 0, results.Refused("%s was not measured by both sides at repetition %d; both measured %s: choose one of them",
		what, rep, strings.Join(offered, "; "))
}

// modes are the modes the side's variant ran, concurrency first.
func (l *loaded) modes() []extractbench.Mode {
	var out []extractbench.Mode
	for _, s := range l.series {
		if s.Variant == l.variant && !slices.Contains(out, s.Mode) {
			out = append(out, s.Mode)
		}
	}
	slices.SortStableFunc(out, func(x, y extractbench.Mode) int {
		return cmpBool(x != extractbench.ModeConcurrency, y != extractbench.ModeConcurrency)
	})
	return out
}

func cmpBool(x, y bool) int {
	switch {
	case x == y:
		return 0
	case x:
		return 1
	}
	return -1
}

// baselineLevel is the level of the side's baseline pass in mode: its
// series' baseline, else the mode's (1, or a rate sweep's sync).
func (l *loaded) baselineLevel(mode extractbench.Mode) int {
	if s := l.seriesOf(mode); s != nil {
		if b := s.Baseline(); b != nil {
			return b.Level
		}
	}
	return extractbench.Sweep{Mode: mode}.BaselineLevel()
}

// commonLevels are the levels of mode at which both sides' variants have a
// complete pass of repetition rep, ascending.
func commonLevels(a, b *loaded, mode extractbench.Mode, rep int) []int {
	of := func(l *loaded) []int {
		var out []int
		for _, p := range l.run.Passes {
			if p.Variant == l.variant && p.Mode == mode && p.Repetition == rep && p.Complete() && !slices.Contains(out, p.Level) {
				out = append(out, p.Level)
			}
		}
		return out
	}
	lb := of(b)
	var out []int
	for _, l := range of(a) {
		if slices.Contains(lb, l) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}
