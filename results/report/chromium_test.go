package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// chromiumNames are the binaries the browser test looks for, Debian's first.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// chromiumTimeout bounds one headless run; a healthy one takes a few seconds.
const chromiumTimeout = 90 * time.Second

func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range chromiumNames {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skip("chromium is not installed (apt-get install -y chromium): the report was not checked in a real browser")
	return ""
}

// headless runs the browser on a local file with the flags that keep it off
// the network and out of the user's profile, and returns its stdout. A run
// past chromiumTimeout (a page whose script never ends) fails the test: the
// browser's whole process group is killed and its pipes closed, so the test
// never waits on a renderer left behind.
func headless(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	// A browser that crashed (killed by a signal: Chromium 148 segfaults now
	// and then on a loaded 2-core machine, whatever the page) says nothing
	// about the report: it is tried again, twice at most, and the crash is
	// logged. A page that hangs, or a browser that exits with an error of
	// its own, fails at once.
	for attempt := 1; ; attempt++ {
		out, crash := headlessOnce(t, bin, args...)
		if crash == "" {
			return out
		}
		if attempt == 3 {
			t.Fatalf("%s %v crashed 3 times: %s", bin, args, crash)
		}
		t.Logf("%s crashed (%s); trying again", bin, crash)
	}
}

// headlessOnce runs Chromium once; crash says how it died when a signal
// ended it, with its stderr.
func headlessOnce(t *testing.T, bin string, args ...string) (out []byte, crash string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + t.TempDir(),
		// Let the page's scripts finish (uPlot commits its first draw in a
		// microtask) before the DOM or the picture is taken.
		"--virtual-time-budget=5000"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	killGroupOnCancel(cmd)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not finish within %v: the page hangs (a script that never ends?)\n%.2000s", bin, args, chromiumTimeout, stderr.String())
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return nil, fmt.Sprintf("%v\n%.1000s", ws.Signal(), stderr.String())
		}
	}
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, stderr.String())
	}
	return stdout.Bytes(), ""
}

// TestChromium_ChartsDraw opens report.html of a two-variant run from disk
// in headless Chromium: every chart (the overlays and each variant's) must
// have drawn (report.js counts a chart once uPlot has drawn a series with
// data and its canvas holds ink), every legend must read without a hover,
// no axis title may overlap its tick labels, no reference label may overlap
// another or leave the plot, and nothing from the hostile document may have
// run; every reference label sits above its plot, off the lines. It also takes a screenshot and checks it is a picture of the window
// (testdata/screenshot.png, of a real run, comes from screenshot.sh).
func TestChromium_ChartsDraw(t *testing.T) {
	bin := findChromium(t)
	f := defaultFixture
	f.Variants = []string{"bf16", "int8"}
	dir := t.TempDir()
	f.write(t, dir)
	if err := Write(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	p, err := build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := len(p.Data.Charts)
	if len(p.Overlays) != 3 || want != 3+2*10 {
		t.Fatalf("built %d charts, %d of them overlays: want 3 overlays and 10 per variant", want, len(p.Overlays))
	}
	page := "file://" + filepath.Join(dir, HTMLFile)
	dom := headless(t, bin, "--dump-dom", page)
	checkPage(t, dom, want)
	if i := bytes.Index(dom, []byte(`id="overlays"`)); i < 0 || i > bytes.Index(dom, []byte(`id="s0-series"`)) {
		t.Errorf("the overlay section is missing or not above the per-variant sections")
	}

	shot := filepath.Join(t.TempDir(), "screenshot.png")
	headless(t, bin, "--screenshot="+shot, "--window-size=1400,2600", page)
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if got := img.Bounds().Dx(); got < 1000 {
		t.Errorf("screenshot is %d pixels wide, want the window's 1400", got)
	}
}

// TestChromium_EveryKindOfRun opens in headless Chromium the report of each
// kind of run (runKinds: every sweep mode, auto levels, a merged run,
// replicas, a failed variant, an interrupted run) and checks it as
// TestChromium_ChartsDraw does. A rate sweep's synchronous baseline is
// level 0: on a log x axis it once made the page hang for good.
func TestChromium_EveryKindOfRun(t *testing.T) {
	bin := findChromium(t)
	for _, k := range runKinds {
		t.Run(k.name, func(t *testing.T) {
			dir := k.build(t)
			if err := Write(context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			p, err := build(context.Background(), dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Series) > 0 && len(p.Data.Charts) == 0 {
				t.Fatalf("%d series and no chart", len(p.Series))
			}
			for _, c := range p.Data.Charts {
				for i, x := range c.X {
					if c.XLog && x <= 0 {
						t.Errorf("chart %s: x[%d] = %v on a log axis", c.ID, i, x)
					}
				}
			}
			checkPage(t, headless(t, bin, "--dump-dom", "file://"+filepath.Join(dir, HTMLFile)), len(p.Data.Charts))
		})
	}
}

// TestChromium_OddChartData draws charts whose data no run makes but the
// page must survive: a log axis asked for with x ≤ 0, one point, values of
// 1e300, a range that doubles cannot split (1e20 to 1e20 + 1e5), all
// zeros, an upside-down fixed range, an x that is not a number. The page must finish (a tick loop that never ends hangs
// the browser and fails the test by its timeout); each chart with a value
// to draw is drawn, and a chart that cannot be drawn says so.
func TestChromium_OddChartData(t *testing.T) {
	bin := findChromium(t)
	v := func(fs ...float64) []*float64 {
		out := make([]*float64, len(fs))
		for i := range fs {
			out[i] = &fs[i]
		}
		return out
	}
	one := func(id string, xLog bool, x []float64, values []*float64) chart {
		return chart{ID: id, Title: id, XLabel: "level", XLog: xLog, YLabel: [2]string{"figure", ""}, X: x,
			Series: []line{{Label: "figure", Unit: "ms", Color: blue, Values: values, Legend: "a figure"}}}
	}
	withRange := func(c chart, lo, hi float64) chart { c.YRange = [2]float64{lo, hi}; return c }
	charts := []chart{
		one("log-with-zero", true, []float64{0, 10, 20, 40}, v(1, 2, 3, 4)),
		// A fixed y range (as the KV and field charts have) with x = 0 on
		// a log axis: the old page never finished.
		withRange(one("log-with-zero-fixed-y", true, []float64{0, 10, 20, 40}, v(1, 2, 3, 4)), 0, 100),
		one("log-with-negative", true, []float64{-4, -1, 2, 8}, v(1, 2, 3, 4)),
		one("one-point", true, []float64{8}, v(5)),
		one("huge", true, []float64{1, 2, 4}, v(1e300, -1e300, 1e300)),
		one("no-split", false, []float64{1, 2, 3}, v(1e20, 1e20+1e5, 1e20)),
		one("huge-x", true, []float64{1, 1e300}, v(1, 2)),
		one("same-x", true, []float64{4, 4, 4}, v(1, 2, 3)),
		one("flat", true, []float64{1, 2, 4}, v(0, 0, 0)),
		{ID: "named", Title: "named", XLabel: "rate", XLog: true, X: []float64{5, 10, 20}, XNames: []string{"sync", "10/s", "20/s"},
			YLabel: [2]string{"figure", "other"}, YRange: [2]float64{7, 5}, // upside down
			HLines: []marker{{Value: 1e308, Label: "far", Color: red}},
			Series: []line{{Label: "a", Values: v(1, 2, 3), Legend: "a"}, {Label: "b", Axis: 1, Values: v(0, 0, 0), Legend: "b"}}},
	}
	drawable := len(charts)
	// JSON cannot carry NaN: an x the page cannot place comes as a string.
	notNumber := one("x-not-a-number", false, []float64{1, 2}, v(1, 2))
	charts = append(charts, notNumber)
	p := &page{Title: "odd charts", Overlays: charts, Data: pageData{Charts: charts}}
	html, _, err := render(p)
	if err != nil {
		t.Fatal(err)
	}
	html = bytes.Replace(html, []byte(`"id":"x-not-a-number","title":"x-not-a-number","xLabel":"level","xLog":false,"yLabel":["figure",""],"x":[1,2]`),
		[]byte(`"id":"x-not-a-number","title":"x-not-a-number","xLabel":"level","xLog":false,"yLabel":["figure",""],"x":[1,"two"]`), 1)
	if !bytes.Contains(html, []byte(`"x":[1,"two"]`)) {
		t.Fatal("could not plant the x that is not a number: the chart JSON changed shape")
	}
	path := filepath.Join(t.TempDir(), HTMLFile)
	if err := os.WriteFile(path, html, 0o644); err != nil {
		t.Fatal(err)
	}
	dom := headless(t, bin, "--dump-dom", "file://"+path)
	if !bytes.Contains(dom, []byte(fmt.Sprintf("(%d of %d charts drawn)", drawable, len(charts)))) {
		t.Errorf("the page did not report %d of %d charts drawn: %.300s", drawable, len(charts), regexp.MustCompile(`<title>[^<]*</title>`).Find(dom))
	}
	for _, c := range chartElements(t, dom) {
		if c.ID == notNumber.ID {
			continue
		}
		if !c.Drawn {
			i := bytes.Index(dom, []byte(`id="`+c.ID+`"`))
			t.Errorf("chart %s was not drawn: %.400s", c.ID, dom[max(0, i-40):])
		}
	}
	if !bytes.Contains(dom, []byte(`class="chart chart-error" id="x-not-a-number"`)) {
		t.Errorf("the chart whose x is not a number does not say it could not be drawn")
	}
}

// checkPage checks a report's dumped DOM: all want charts drawn and
// counted, none failed, each checked by checkChart, and nothing from the
// run's documents ran as a script.
func checkPage(t *testing.T, dom []byte, want int) {
	t.Helper()
	body := regexp.MustCompile(`<body[^>]*>`).Find(dom)
	if body == nil {
		t.Fatalf("no <body> in the dumped DOM:\n%.2000s", dom)
	}
	attr := func(name string) (int, bool) {
		m := regexp.MustCompile(name + `="(\d+)"`).FindSubmatch(body)
		if m == nil {
			return 0, false
		}
		n, _ := strconv.Atoi(string(m[1]))
		return n, true
	}
	drawn, ok1 := attr("data-charts-drawn")
	total, ok2 := attr("data-charts-total")
	if !ok1 || !ok2 {
		t.Fatalf("body lacks the chart counters: %s", body)
	}
	if total != want || drawn != total {
		t.Errorf("charts drawn %d of %d, want %d of %d (body: %s)", drawn, total, want, want, body)
	}
	if bytes.Contains(body, []byte("data-pwned")) {
		t.Errorf("a script from the document ran: %s", body)
	}
	if n := bytes.Count(dom, []byte(`class="uplot`)); n != total {
		t.Errorf("found %d uPlot elements in the DOM, want %d", n, total)
	}
	if i := bytes.Index(dom, []byte(`class="chart chart-error"`)); i >= 0 {
		t.Errorf("report.js reported a chart failure: %.300s", dom[i:])
	}
	charts := chartElements(t, dom)
	if len(charts) != want {
		t.Fatalf("found %d chart elements, want %d", len(charts), want)
	}
	for _, c := range charts {
		checkChart(t, c)
	}
}

// chartDOM is one chart element of the dumped page: its id, the attributes
// report.js set and the text of its legend values.
type chartDOM struct {
	ID      string
	Drawn   bool
	Layout  chartLayout
	Legends []string
}

// chartLayout is report.js's data-layout: boxes in CSS pixels of the chart.
type chartLayout struct {
	Width, Height float64
	Plot          [4]float64 // left, top, right, bottom
	Axes          []struct {
		Axis, Side int
		Label      string
		Ticks      [2]float64  // the tick labels' extent across the axis
		Title      *[2]float64 // the axis title's extent across the axis
	}
	Markers []struct {
		Text string
		Box  [4]float64 // left, top, right, bottom
	}
}

var (
	chartOpen = regexp.MustCompile(`<div class="chart[^"]*" id="([^"]+)"([^>]*)>`)
	legendVal = regexp.MustCompile(`<td class="u-value">([^<]*)</td>`)
	layoutArg = regexp.MustCompile(`data-layout="([^"]*)"`)
)

// chartElements splits the dumped DOM at each chart element.
func chartElements(t *testing.T, dom []byte) []chartDOM {
	t.Helper()
	locs := chartOpen.FindAllSubmatchIndex(dom, -1)
	var out []chartDOM
	for i, loc := range locs {
		end := len(dom)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		c := chartDOM{ID: string(dom[loc[2]:loc[3]])}
		attrs := dom[loc[4]:loc[5]]
		c.Drawn = bytes.Contains(attrs, []byte(`data-drawn="1"`))
		if m := layoutArg.FindSubmatch(attrs); m != nil {
			if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &c.Layout); err != nil {
				t.Errorf("chart %s: data-layout is not JSON: %v", c.ID, err)
			}
		}
		for _, m := range legendVal.FindAllSubmatch(dom[loc[1]:end], -1) {
			c.Legends = append(c.Legends, html.UnescapeString(string(m[1])))
		}
		out = append(out, c)
	}
	return out
}

// checkChart fails on an empty chart, a legend that needs a hover to say
// anything, an axis title over its tick labels or outside the chart, and
// reference labels that overlap or leave the plot.
func checkChart(t *testing.T, c chartDOM) {
	t.Helper()
	if !c.Drawn {
		t.Errorf("chart %s: no data drawn", c.ID)
	}
	if len(c.Legends) < 2 {
		t.Errorf("chart %s: legend has %d values, want the x and at least one series", c.ID, len(c.Legends))
	}
	for _, v := range c.Legends {
		if s := strings.TrimSpace(v); s == "" || s == "–" || s == "--" {
			t.Errorf("chart %s: a legend value reads %q before any hover (legends %q)", c.ID, v, c.Legends)
		}
	}
	l := c.Layout
	if len(l.Axes) < 2 {
		t.Errorf("chart %s: layout has %d axes, want at least 2", c.ID, len(l.Axes))
	}
	const slack = 0.5 // px: rounding of the canvas
	for _, a := range l.Axes {
		if a.Title == nil {
			continue
		}
		if a.Ticks[1]-a.Ticks[0] <= 0 {
			t.Errorf("chart %s: axis %d (%q) drew no tick label", c.ID, a.Axis, a.Label)
		}
		if a.Title[0] < a.Ticks[1]-slack && a.Ticks[0] < a.Title[1]-slack {
			t.Errorf("chart %s: axis %d title %q at %.1f–%.1f px overlaps its tick labels at %.1f–%.1f px",
				c.ID, a.Axis, a.Label, a.Title[0], a.Title[1], a.Ticks[0], a.Ticks[1])
		}
		limit := l.Width
		if a.Side == 0 || a.Side == 2 {
			limit = l.Height
		}
		if a.Title[0] < -slack || a.Title[1] > limit+slack {
			t.Errorf("chart %s: axis %d title %q at %.1f–%.1f px leaves the chart (0–%.0f)", c.ID, a.Axis, a.Label, a.Title[0], a.Title[1], limit)
		}
	}
	for i, m := range l.Markers {
		b := m.Box
		if b[0] < -slack || b[1] < -slack || b[2] > l.Width+slack || b[3] > l.Height+slack {
			t.Errorf("chart %s: label %q at %v leaves the chart (%.0f×%.0f)", c.ID, m.Text, b, l.Width, l.Height)
		}
		// Above the plot, never on it: a label on the plot covers a line.
		if b[0] < l.Plot[2]-slack && l.Plot[0] < b[2]-slack && b[1] < l.Plot[3]-slack && l.Plot[1] < b[3]-slack {
			t.Errorf("chart %s: label %q at %v lies on the plot %v, over its lines", c.ID, m.Text, b, l.Plot)
		}
		for _, o := range l.Markers[i+1:] {
			if b[0] < o.Box[2] && o.Box[0] < b[2] && b[1] < o.Box[3] && o.Box[1] < b[3] {
				t.Errorf("chart %s: labels %q and %q overlap", c.ID, m.Text, o.Text)
			}
		}
	}
}
