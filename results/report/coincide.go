package report

import (
	"math"
	"strings"
)

// lineWidth is a chart line's width in CSS px; widthStep is how much wider
// a line drawn under an identical one is, so that it shows as a rim on each
// side of it.
const (
	lineWidth = 2.0
	widthStep = 2.5
)

// identical reports whether two series draw the same line: they have a
// value at the same points, and there the same value.
func identical(a, b []*float64) bool {
	if len(a) != len(b) {
		return false
	}
	shared := 0
	for i := range a {
		switch {
		case a[i] == nil && b[i] == nil:
		case a[i] == nil || b[i] == nil:
			return false
		case math.Abs(*a[i]-*b[i]) > 1e-9*math.Max(1, math.Abs(*a[i])):
			return false
		default:
			shared++
		}
	}
	return shared > 0
}

// separate keeps every line of a chart visible where lines coincide: the
// page draws the series in order, so a line identical to one drawn after it
// is drawn wider (by widthStep per identical line after it) and shows as a
// rim around it; the chart's note names the lines that coincide. Without
// it a field chart drew category exactly over date, and date was gone.
func (c *chart) separate() {
	var groups [][]string
	grouped := make([]bool, len(c.Series))
	for i := range c.Series {
		above := 0
		for j := i + 1; j < len(c.Series); j++ {
			if c.Series[j].Axis == c.Series[i].Axis && identical(c.Series[i].Values, c.Series[j].Values) {
				above++
			}
		}
		c.Series[i].Width = lineWidth + widthStep*float64(above)
		if grouped[i] || above == 0 {
			continue
		}
		group := []string{c.Series[i].Label}
		for j := i + 1; j < len(c.Series); j++ {
			if !grouped[j] && c.Series[j].Axis == c.Series[i].Axis && identical(c.Series[i].Values, c.Series[j].Values) {
				grouped[j] = true
				group = append(group, c.Series[j].Label)
			}
		}
		groups = append(groups, group)
	}
	for _, g := range groups {
		c.Note = strings.TrimSpace(c.Note + " " + "Same values, so one line, the wider under the narrower: " + andList(g) + ".")
	}
}

// andList joins names as a sentence does: "a", "a and b", "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
