package report

import (
	"slices"
	"strconv"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// variantColors tell the variants apart on an overlay (Okabe–Ito, cycled).
var variantColors = []string{blue, orange, green, red, purple, sky, black, yellow}

// overlays draws every variant's line on one chart per figure (p95 E2E,
// accepted share, accepted documents/hour), one set per sweep mode, when
// the run has two series or more of that mode. The figures are the same
// eval levels the per-variant charts and tables show; a variant without a
// level has no point there.
func overlays(all []*series, obj objectives) []chart {
	var modes []extractbench.Mode
	byMode := map[extractbench.Mode][]*series{}
	for _, s := range all {
		if byMode[s.Mode] == nil {
			modes = append(modes, s.Mode)
		}
		byMode[s.Mode] = append(byMode[s.Mode], s)
	}
	var out []chart
	for mi, mode := range modes {
		ss := byMode[mode]
		if len(ss) < 2 {
			continue
		}
		var levels []int
		named := map[int]string{}
		for _, s := range ss {
			for _, l := range s.Levels {
				levels = append(levels, l.Level)
				if _, ok := named[l.Level]; !ok || l.Phase != extractbench.PhaseProbe {
					named[l.Level] = levelName(l) // a probe of one variant is a steady rate of another
				}
			}
		}
		slices.Sort(levels)
		levels = slices.Compact(levels)
		x, xLog := levelAxis(mode, levels)
		names := make([]string, len(levels))
		for i, l := range levels {
			names[i] = named[l]
		}
		unit := unitName(mode)
		prefix := "overlay" + strconv.Itoa(mi) + "-"
		figure := func(id, title, ylabel, lineUnit string, f func(eval.Level) *float64) chart {
			c := chart{ID: prefix + id, Title: title + " vs " + unit + ", every variant", XLabel: unit, XLog: xLog,
				YLabel: [2]string{ylabel, ""}, X: x, XNames: names, levels: levels}
			for i, s := range ss {
				v := make([]*float64, len(levels))
				for _, l := range s.Levels {
					v[slices.Index(levels, l.Level)] = f(l)
				}
				// Every other variant dashed, so lines that coincide both show.
				ln := line{Label: s.Variant, Unit: lineUnit, Color: variantColors[i%len(variantColors)], Dash: i%2 == 1, Values: v}
				one := chart{X: x, XLabel: unit, XNames: names, levels: levels, Series: []line{ln}}
				one.setLegends(s.Rec.Recommended)
				ln.Legend = one.Series[0].Legend
				c.Series = append(c.Series, ln)
			}
			return c
		}
		e2e := figure("e2e", "p95 E2E (each pass's p95, median over repetitions)", "p95 E2E (ms)", "ms", func(l eval.Level) *float64 {
			if l.E2EP95NS.N == 0 {
				return nil
			}
			return num(l.E2EP95NS.Median / 1e6)
		})
		e2e.HLines = latencyObjective(obj)
		acc := figure("acceptance", "Accepted share (pooled over repetitions)", "", "%", func(l eval.Level) *float64 {
			if l.Docs == 0 {
				return nil
			}
			return num(l.Share() * 100)
		})
		var shares []*float64
		for _, ln := range acc.Series {
			shares = append(shares, ln.Values...)
		}
		acc.YRange = zoomShare(shares, obj.MinAccepted)
		acc.YLabel[0] = "accepted (%, " + axisRange(acc.YRange) + ")"
		acc.Note = "The accepted-share axis runs from " + strconv.FormatFloat(acc.YRange[0], 'f', -1, 64) + "% to 100%, not from 0."
		acc.HLines = shareObjective(obj)
		rate := figure("throughput", "Accepted documents/hour (median over repetitions)", "accepted documents/hour", "docs/h", func(l eval.Level) *float64 {
			return spreadPtr(l.DocsPerHour)
		})
		for _, c := range []chart{e2e, acc, rate} {
			c.separate()
			if c.hasData() {
				out = append(out, c)
			}
		}
	}
	return out
}
