package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// screenLayout is report.js's data-screen: the window, the boxes of the
// elements marked data-check (CSS px, page coordinates) and whether each
// table marked data-fit scrolls.
type screenLayout struct {
	Width, Height, DocWidth float64
	Boxes                   []struct {
		Name       string
		Box        [4]float64 // left, top, right, bottom
		Background string
	}
	Tables []struct {
		ID          string
		Right       float64
		Width, Room float64
		Scrolls     bool
	}
}

var screenAttr = regexp.MustCompile(`data-screen="([^"]*)"`)

// firstScreenSizes are the windows the first screen must fit: a laptop and
// a narrow window.
var firstScreenSizes = [][2]int{{1400, 900}, {1000, 800}}

// TestChromium_FirstScreen opens the report of a two-variant run in
// headless Chromium at 1400×900 and 1000×800 and checks its first screen:
// per variant a card with the verdict (coloured), the paired verdict
// against the baseline variant, the interactive and offline
// recommendations and what failed, every box inside the window with no
// scrolling, no two boxes overlapping, and no verdict table wider than the
// window (no horizontal scrollbar). It saves the screenshots when
// EXTRACTBENCH_SCREENSHOTS names a directory.
func TestChromium_FirstScreen(t *testing.T) {
	bin := findChromium(t)
	f := defaultFixture
	f.Variants = []string{"bf16", "int8"}
	dir := t.TempDir()
	f.write(t, dir)
	if err := Write(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	page := "file://" + filepath.Join(dir, HTMLFile)
	for _, size := range firstScreenSizes {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			window := fmt.Sprintf("--window-size=%d,%d", size[0], size[1])
			dom := headless(t, bin, window, "--dump-dom", page)
			m := screenAttr.FindSubmatch(dom)
			if m == nil {
				t.Fatal("the page recorded no data-screen layout")
			}
			var l screenLayout
			if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &l); err != nil {
				t.Fatalf("data-screen is not JSON: %v", err)
			}
			checkFirstScreen(t, l, f.variants(), float64(size[0]), float64(size[1]))

			shot := filepath.Join(t.TempDir(), "shot.png")
			headless(t, bin, window, "--screenshot="+shot, page)
			b, err := os.ReadFile(shot)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil || img.Bounds().Dx() != size[0] || img.Bounds().Dy() != size[1] {
				t.Fatalf("screenshot: %v, %v; want %d×%d", err, img.Bounds(), size[0], size[1])
			}
			if out := os.Getenv("EXTRACTBENCH_SCREENSHOTS"); out != "" {
				if err := os.WriteFile(filepath.Join(out, fmt.Sprintf("first-screen-%dx%d.png", size[0], size[1])), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// checkFirstScreen checks one window's layout; see TestChromium_FirstScreen.
func checkFirstScreen(t *testing.T, l screenLayout, variants []string, width, height float64) {
	t.Helper()
	const slack = 0.5
	// The old headless mode lays the page out at the window's width but
	// reports a shorter innerHeight to --dump-dom than the --screenshot of
	// the same window shows: the boxes are checked against the window.
	if l.Width != width {
		t.Fatalf("window %.0f px wide, want %.0f", l.Width, width)
	}
	if l.DocWidth > width+slack {
		t.Errorf("the page is %.0f px wide in a %.0f px window: a horizontal scrollbar", l.DocWidth, width)
	}
	boxes := map[string][4]float64{}
	background := map[string]string{}
	for _, b := range l.Boxes {
		boxes[b.Name], background[b.Name] = b.Box, b.Background
	}
	var want []string
	for _, v := range variants {
		want = append(want, "card "+v, "verdict "+v, "paired "+v, "interactive "+v, "offline "+v, "failed "+v)
	}
	want = append(want, "title", "headline")
	for _, name := range want {
		b, ok := boxes[name]
		if !ok {
			t.Errorf("the first screen has no %q", name)
			continue
		}
		if b[0] < -slack || b[1] < -slack || b[2] > width+slack || b[3] > height+slack {
			t.Errorf("%q at %v is not inside the %.0f×%.0f window", name, b, width, height)
		}
		if b[2]-b[0] < 1 || b[3]-b[1] < 1 {
			t.Errorf("%q has an empty box %v", name, b)
		}
	}
	for _, v := range variants {
		if bg := background["verdict "+v]; bg == "" || bg == "rgba(0, 0, 0, 0)" || bg == "rgb(102, 102, 102)" {
			t.Errorf("verdict of %s is not coloured (background %q)", v, bg)
		}
	}
	checkNoOverlap(t, l, width)
	checked := checkVerdictTablesFit(t, l, width)
	if want := 1 + 2*len(variants); checked != want {
		t.Errorf("checked %d verdict tables, want %d", checked, want)
	}
}

// TestChromium_FirstScreenEveryKind opens the report of every kind of run
// (runKinds: each sweep mode, auto levels, a merged run, replicas, a failed
// and an interrupted variant) at both first-screen windows and checks what
// holds for all of them: no horizontal scrollbar, the title, headline and
// each variant's card and coloured verdict inside the window's width and
// on the first screen, no two boxes overlapping, and no verdict table
// scrolling; and, over the whole page (checkLayout), WCAG AA contrast, no
// header wrapping letter by letter, no table off the window without a
// visible hint to scroll, no series hidden under another, round ticks.
// TestChromium_FirstScreen checks the full card of a two-variant run.
func TestChromium_FirstScreenEveryKind(t *testing.T) {
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
			page := withLayoutCheck(t, dir)
			for _, size := range firstScreenSizes {
				dom := headless(t, bin, fmt.Sprintf("--window-size=%d,%d", size[0], size[1]), "--dump-dom", page)
				m := screenAttr.FindSubmatch(dom)
				if m == nil {
					t.Fatalf("%dx%d: the page recorded no data-screen layout", size[0], size[1])
				}
				var l screenLayout
				if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &l); err != nil {
					t.Fatalf("data-screen is not JSON: %v", err)
				}
				checkAnyFirstScreen(t, l, float64(size[0]), float64(size[1]))
				checkLayout(t, layoutOf(t, dom), p.Data.Charts, float64(size[0]))
			}
		})
	}
}

// checkAnyFirstScreen is checkFirstScreen's part that every report kind
// must meet, whatever its variants and sweep.
func checkAnyFirstScreen(t *testing.T, l screenLayout, width, height float64) {
	t.Helper()
	const slack = 0.5
	if l.DocWidth > width+slack {
		t.Errorf("%.0f px window: the page is %.0f px wide (a horizontal scrollbar)", width, l.DocWidth)
	}
	seen := map[string]bool{}
	cards := 0
	for _, b := range l.Boxes {
		seen[b.Name] = true
		first := b.Name == "title" || b.Name == "headline" || strings.HasPrefix(b.Name, "verdict ")
		if strings.HasPrefix(b.Name, "card ") {
			cards++
		}
		if b.Box[0] < -slack || b.Box[2] > width+slack {
			t.Errorf("%.0f px window: %q at %v is outside its width", width, b.Name, b.Box)
		}
		if first && cards <= 1 && b.Box[3] > height+slack {
			t.Errorf("%.0f×%.0f window: %q at %v is below the first screen", width, height, b.Name, b.Box)
		}
		if strings.HasPrefix(b.Name, "verdict ") && (b.Background == "" || b.Background == "rgba(0, 0, 0, 0)") {
			t.Errorf("%q is not coloured", b.Name)
		}
	}
	for _, name := range []string{"title", "headline"} {
		if !seen[name] {
			t.Errorf("the first screen has no %q", name)
		}
	}
	if cards == 0 {
		t.Error("the first screen has no variant card")
	}
	checkNoOverlap(t, l, width)
	checkVerdictTablesFit(t, l, width)
}

// checkNoOverlap: two boxes may nest (a verdict inside its card) but never
// overlap.
func checkNoOverlap(t *testing.T, l screenLayout, width float64) {
	t.Helper()
	const slack = 0.5
	inside := func(a, b [4]float64) bool {
		return a[0] >= b[0]-slack && a[1] >= b[1]-slack && a[2] <= b[2]+slack && a[3] <= b[3]+slack
	}
	for i, a := range l.Boxes {
		for _, b := range l.Boxes[i+1:] {
			overlap := a.Box[0] < b.Box[2]-slack && b.Box[0] < a.Box[2]-slack && a.Box[1] < b.Box[3]-slack && b.Box[1] < a.Box[3]-slack
			if overlap && !inside(a.Box, b.Box) && !inside(b.Box, a.Box) {
				t.Errorf("%.0f px window: %q at %v and %q at %v overlap", width, a.Name, a.Box, b.Name, b.Box)
			}
		}
	}
}

// checkVerdictTablesFit: the verdict tables (the one per variant, and each
// variant's latency and throughput tables, whose last column is the
// verdict) never scroll; it returns how many it checked.
func checkVerdictTablesFit(t *testing.T, l screenLayout, width float64) int {
	t.Helper()
	const slack = 0.5
	checked := 0
	for _, tb := range l.Tables {
		if tb.ID != "outcomes" && !strings.HasSuffix(tb.ID, "-interactive") && !strings.HasSuffix(tb.ID, "-offline") {
			continue
		}
		checked++
		if tb.Scrolls || tb.Right > width+slack {
			t.Errorf("%.0f px window: verdict table %s is %.0f px wide in %.0f px of room (right edge %.0f): a horizontal scrollbar", width, tb.ID, tb.Width, tb.Room, tb.Right)
		}
	}
	return checked
}
