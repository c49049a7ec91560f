package report

import (
	_ "embed"
	"encoding/json"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// layoutCheckJS measures the page as a reader sees it; see its comment.
//
//go:embed testdata/layoutcheck.js
var layoutCheckJS string

// layoutFindings is layoutcheck.js's data-layoutcheck.
type layoutFindings struct {
	Width    float64
	Checked  int // text elements whose contrast was measured
	Contrast []struct {
		Text, Tag, Color, Background string
		Ratio, Need                  float64
		At                           [2]float64
	}
	Headers, Words []struct {
		Table, Word, Text string
		Room              float64
	}
	Tall []struct {
		Table, Text string
		Lines, Room float64
	}
	Tables []struct {
		Name             string
		Right, WrapRight float64
		Scrolls, Cue     bool
	}
	Charts []drawnChart
}

// drawnChart is how report.js drew one chart: each series' width and
// dash, each axis's ticks and their labels.
type drawnChart struct {
	ID     string
	Series []drawnSeries
	Axes   []struct {
		Axis   int
		Levels bool // ticks at the sweep's levels, named
		Splits []float64
		Values []string
	}
}

type drawnSeries struct {
	Label string
	Width float64
	Dash  bool
}

var layoutAttr = regexp.MustCompile(`data-layoutcheck="([^"]*)"`)

// withLayoutCheck writes a copy of the report in dir with layoutcheck.js
// run after report.js, and returns its file URL.
func withLayoutCheck(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(string(b), "</body>")
	if i < 0 {
		t.Fatal("report.html has no </body>")
	}
	page := string(b[:i]) + "<script>" + layoutCheckJS + "</script>\n" + string(b[i:])
	path := filepath.Join(t.TempDir(), "checked-"+HTMLFile)
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	return "file://" + path
}

// layoutOf reads layoutcheck.js's findings from a dumped DOM.
func layoutOf(t *testing.T, dom []byte) layoutFindings {
	t.Helper()
	m := layoutAttr.FindSubmatch(dom)
	if m == nil {
		t.Fatal("layoutcheck.js recorded nothing (did the page's scripts finish?)")
	}
	var f layoutFindings
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &f); err != nil {
		t.Fatalf("data-layoutcheck is not JSON: %v", err)
	}
	return f
}

// checkLayout fails on what a reader cannot read in one window: text below
// WCAG AA contrast (4.5:1, 3:1 for large text) against its effective
// background, a header's word broken across lines (letter by letter
// wrapping), a short word broken inside a cell, a cell of over 12 lines, a table whose columns leave
// the window with no visible way to scroll to them, two identical series
// drawn so that one hides the other, and axis ticks that are not round
// numbers printed exactly.
func checkLayout(t *testing.T, f layoutFindings, charts []chart, width float64) {
	t.Helper()
	if f.Checked == 0 {
		t.Error("no text measured for contrast")
	}
	for _, c := range f.Contrast {
		t.Errorf("%.0f px: %s %q at %v: contrast %.2f:1 (%s on %s), want ≥ %.1f:1", width, c.Tag, c.Text, c.At, c.Ratio, c.Color, c.Background, c.Need)
	}
	for _, h := range f.Headers {
		t.Errorf("%.0f px: table %s: header %q breaks the word %q (%.0f px of room)", width, h.Table, h.Text, h.Word, h.Room)
	}
	for _, w := range f.Words {
		t.Errorf("%.0f px: table %s: cell %q breaks the word %q (%.0f px of room)", width, w.Table, w.Text, w.Word, w.Room)
	}
	for _, c := range f.Tall {
		t.Errorf("%.0f px: table %s: cell %q wraps to %.0f lines in %.0f px", width, c.Table, c.Text, c.Lines, c.Room)
	}
	const slack = 0.5
	for _, tb := range f.Tables {
		switch {
		case tb.Scrolls && !tb.Cue:
			t.Errorf("%.0f px: table %s scrolls sideways with no visible hint that it does", width, tb.Name)
		case !tb.Scrolls && tb.Right > width+slack:
			t.Errorf("%.0f px: table %s ends at %.0f px, off the window", width, tb.Name, tb.Right)
		case tb.WrapRight > width+slack:
			t.Errorf("%.0f px: the box of table %s ends at %.0f px, off the window", width, tb.Name, tb.WrapRight)
		}
	}
	drawn := map[string]int{}
	for i, c := range f.Charts {
		drawn[c.ID] = i
	}
	for _, c := range charts {
		i, ok := drawn[c.ID]
		if !ok {
			t.Errorf("chart %s: no layout recorded", c.ID)
			continue
		}
		checkSeriesShow(t, c, f.Charts[i].Series)
		for _, a := range f.Charts[i].Axes {
			if !a.Levels {
				checkTicks(t, c, a.Axis, a.Splits, a.Values)
			}
		}
	}
}

// checkSeriesShow: of two series with the same points, the one drawn first
// must show past the one drawn over it: wider by 2 px or more, or the one
// over it dashed while it is not.
func checkSeriesShow(t *testing.T, c chart, drew []drawnSeries) {
	t.Helper()
	if len(drew) != len(c.Series) {
		t.Errorf("chart %s: drew %d series, want %d", c.ID, len(drew), len(c.Series))
		return
	}
	for i, a := range c.Series {
		for j := i + 1; j < len(c.Series); j++ {
			b := c.Series[j]
			if a.Axis != b.Axis || !sameLine(a.Values, b.Values) {
				continue
			}
			under, over := drew[i], drew[j]
			if under.Width < over.Width+2 && !(over.Dash && !under.Dash) {
				t.Errorf("chart %s: %q (%.1f px, dash %v) is drawn exactly under %q (%.1f px, dash %v): it cannot be seen", c.ID, a.Label, under.Width, under.Dash, b.Label, over.Width, over.Dash)
			}
		}
	}
}

// sameLine reports whether two series have values at the same points and
// the same values there (at least one).
func sameLine(a, b []*float64) bool {
	n := 0
	for k := range a {
		if (a[k] == nil) != (b[k] == nil) || a[k] != nil && *a[k] != *b[k] {
			return false
		}
		if a[k] != nil {
			n++
		}
	}
	return n > 0
}

// checkTicks: a numeric axis's ticks are evenly spaced by a round step
// (1, 2, 2.5 or 5 × 10^k; whole on an axis of counts), and each label
// prints its tick exactly: not 0.3 for 0.25.
func checkTicks(t *testing.T, c chart, axis int, splits []float64, values []string) {
	t.Helper()
	if len(splits) != len(values) {
		t.Errorf("chart %s axis %d: %d ticks, %d labels", c.ID, axis, len(splits), len(values))
		return
	}
	for i, v := range values {
		got, err := strconv.ParseFloat(strings.ReplaceAll(v, ",", ""), 64)
		if err != nil {
			t.Errorf("chart %s axis %d: tick label %q is not a number", c.ID, axis, v)
			continue
		}
		if math.Abs(got-splits[i]) > 1e-9*math.Max(1, math.Abs(splits[i])) {
			t.Errorf("chart %s axis %d: the tick at %v reads %q (labels %q)", c.ID, axis, splits[i], v, values)
		}
	}
	if len(splits) < 2 {
		return
	}
	step := splits[1] - splits[0]
	if !niceNumber(step) {
		t.Errorf("chart %s axis %d: tick step %v is not 1, 2, 2.5 or 5 × 10^k (labels %q)", c.ID, axis, step, values)
	}
	for i := 2; i < len(splits); i++ {
		if d := splits[i] - splits[i-1]; math.Abs(d-step) > 1e-9*step {
			t.Errorf("chart %s axis %d: ticks unevenly spaced: %v", c.ID, axis, splits)
			break
		}
	}
	if y := axis - 1; y >= 0 && y < 2 && c.YCount[y] && step != math.Trunc(step) {
		t.Errorf("chart %s axis %d counts, yet its ticks step by %v: %q", c.ID, axis, step, values)
	}
}

// niceNumber reports whether v > 0 is 1, 2, 2.5 or 5 times a power of 10.
func niceNumber(v float64) bool {
	if !(v > 0) {
		return false
	}
	m := v / math.Pow(10, math.Floor(math.Log10(v)))
	for _, n := range []float64{1, 2, 2.5, 5, 10} {
		if math.Abs(m-n) < 1e-6 {
			return true
		}
	}
	return false
}

// TestChromium_Ticks draws charts whose axes call for steps of 0.25 (fixed
// ranges of 1.5, 1.75 and 2 on a 300 px chart, seconds 0 to 1 across) and
// an axis of counts up to 1, and checks every numeric axis with
// checkTicks: round steps, each label its tick exactly. The old page
// printed 0.25 steps with one decimal: 0.0, 0.3, 0.5, 0.8, 1.0; and a count
// axis of requests ticked 0.25 requests.
func TestChromium_Ticks(t *testing.T) {
	bin := findChromium(t)
	var charts []chart
	for i, top := range []float64{1.5, 1.75, 2} {
		charts = append(charts, chart{ID: "fixed-" + strconv.Itoa(i), Title: "fixed", XLabel: "seconds", YLabel: [2]string{"share", ""},
			X: []float64{0, 0.5, 1}, YRange: [2]float64{0, top},
			Series: []line{{Label: "share", Color: blue, Values: vals(0.2, 0.9, 1.1), Legend: "a share"}}})
	}
	charts = append(charts, chart{ID: "counts", Title: "counts", XLabel: "seconds", YLabel: [2]string{"KV (%)", "requests"},
		X: []float64{0, 0.4, 0.8}, YRange: [2]float64{0, 100}, YCount: [2]bool{false, true},
		Series: []line{{Label: "KV", Unit: "%", Color: red, Values: vals(10, 40, 30), Legend: "peak 40%"},
			{Label: "running", Unit: "requests", Axis: 1, Color: blue, Values: vals(0, 1, 1), Legend: "peak 1"}}})
	p := &page{Title: "ticks", Overlays: charts, Data: pageData{Charts: charts}}
	out, _, err := render(p)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, HTMLFile), out, 0o644); err != nil {
		t.Fatal(err)
	}
	f := layoutOf(t, headless(t, bin, "--window-size=1400,900", "--dump-dom", withLayoutCheck(t, dir)))
	quarters := 0
	for _, c := range charts {
		i := slices.IndexFunc(f.Charts, func(d drawnChart) bool { return d.ID == c.ID })
		if i < 0 {
			t.Errorf("chart %s: not drawn", c.ID)
			continue
		}
		for _, a := range f.Charts[i].Axes {
			checkTicks(t, c, a.Axis, a.Splits, a.Values)
			if len(a.Splits) > 1 && math.Abs(a.Splits[1]-a.Splits[0]-0.25) < 1e-9 {
				quarters++
			}
		}
	}
	if quarters == 0 {
		t.Error("no axis stepped by 0.25: the test no longer draws the case it is for")
	}
}
