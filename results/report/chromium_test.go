package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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
// the network and out of the user's profile, and returns its stdout.
func headless(t *testing.T, bin string, args ...string) []byte {
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
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", bin, args, err, stderr.String())
	}
	return stdout.Bytes()
}

// TestChromium_ChartsDraw opens report.html from disk in headless Chromium:
// every chart must have drawn (report.js counts a chart once uPlot has drawn
// a series with data and its canvas holds ink), and nothing from the hostile
// document may have run. It also takes a screenshot and checks it is a
// picture of the window (testdata/screenshot.png, of a real run, comes from
// screenshot.sh).
func TestChromium_ChartsDraw(t *testing.T) {
	bin := findChromium(t)
	dir := mustWriteFixture(t, defaultFixture)
	page := "file://" + filepath.Join(dir, HTMLFile)

	dom := headless(t, bin, "--dump-dom", page)
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
	if total != 7 || drawn != total {
		t.Errorf("charts drawn %d of %d, want 7 of 7 (body: %s)", drawn, total, body)
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
