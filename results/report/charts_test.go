package report

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

// chartByID finds a chart of the page by id.
func chartByID(t *testing.T, p *page, id string) chart {
	t.Helper()
	for _, c := range p.Data.Charts {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no chart %s", id)
	return chart{}
}

// TestCharts_MarkersZoomUnits: the E2E chart has the protocol's p95
// objective across and the recommended level upright; the accepted-share
// axis is zoomed and says so; memory is in GiB alone with the card's
// memory as a labelled line, and the KV cache has its own % chart; every
// line's legend reads without a hover, from eval's figures.
func TestCharts_MarkersZoomUnits(t *testing.T) {
	dir := mustWriteFixture(t, defaultFixture)
	p, err := build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := buildSeriesOf(t, dir)
	rec := s.Rec.Recommended
	if rec == 0 {
		t.Fatal("fixture has no recommended level")
	}

	e2e := chartByID(t, p, "s0-e2e")
	if len(e2e.HLines) != 1 || e2e.HLines[0].Value != 60000 || !strings.Contains(e2e.HLines[0].Label, "objective") {
		t.Errorf("E2E objective lines = %+v, want one at 60000 ms (latency_p95_ms) labelled objective", e2e.HLines)
	}
	for _, id := range []string{"s0-ttft", "s0-e2e", "s0-tokens", "s0-acceptance", "s0-failures"} {
		c := chartByID(t, p, id)
		if len(c.VLines) != 1 || c.VLines[0].Value != float64(rec) || !strings.Contains(c.VLines[0].Label, "recommended") {
			t.Errorf("%s: vertical lines = %+v, want the recommended level %d", id, c.VLines, rec)
		}
	}
	// The throughput chart also marks the offline objective's level when it
	// is another one.
	thr := chartByID(t, p, "s0-throughput")
	wantV := 1
	if off := s.Rec.Offline.Level; off != rec && off > 0 {
		wantV = 2
	}
	if len(thr.VLines) != wantV || thr.VLines[0].Value != float64(rec) ||
		(wantV == 2 && (thr.VLines[1].Value != float64(s.Rec.Offline.Level) || !strings.HasPrefix(thr.VLines[1].Label, "offline"))) {
		t.Errorf("throughput: vertical lines = %+v, want the recommended level %d and the offline level %d", thr.VLines, rec, s.Rec.Offline.Level)
	}
	if ttft := chartByID(t, p, "s0-ttft"); len(ttft.HLines) != 0 {
		t.Errorf("TTFT chart has objective lines %+v; the protocol sets none for TTFT", ttft.HLines)
	}

	acc := chartByID(t, p, "s0-acceptance")
	lowest := 100.0
	for i, l := range s.Levels {
		v := acc.Series[0].Values[i]
		if v == nil || *v != l.Share()*100 {
			t.Errorf("accepted share at %d = %v, want eval's pooled %v", l.Level, v, l.Share()*100)
			continue
		}
		lowest = min(lowest, *v)
	}
	if acc.YRange[0] <= 0 || acc.YRange[0] >= lowest || acc.YRange[0] >= 90 || acc.YRange[1] != 100 {
		t.Errorf("accepted axis = %v, want from just below min(%.1f%%, the 90%% objective) to 100", acc.YRange, lowest)
	}
	if !strings.Contains(acc.YLabel[0], "zoomed") || !strings.Contains(acc.Note, "not from 0") {
		t.Errorf("accepted axis range not stated: label %q, note %q", acc.YLabel[0], acc.Note)
	}

	mem := chartByID(t, p, "s0-memory")
	for _, l := range mem.Series {
		if l.Unit != "GiB" || l.Axis != 0 {
			t.Errorf("memory chart line %q in %s on axis %d: want GiB only, one axis", l.Label, l.Unit, l.Axis)
		}
	}
	if mem.YLabel[1] != "" || len(mem.HLines) != 1 || !strings.Contains(mem.HLines[0].Label, "card memory") {
		t.Errorf("memory chart: right axis %q, lines %+v: want no right axis and the card's memory as a labelled line", mem.YLabel[1], mem.HLines)
	}
	kv := chartByID(t, p, "s0-kv")
	if len(kv.Series) != 1 || kv.Series[0].Unit != "%" {
		t.Errorf("KV chart series = %+v, want the KV peak in %% alone", kv.Series)
	}

	for _, c := range p.Data.Charts {
		for _, l := range c.Series {
			if l.Legend == "" || l.Legend == "–" {
				t.Errorf("%s %q: empty static legend", c.ID, l.Label)
			}
		}
	}
	if got := e2e.Series[1].Legend; !strings.HasSuffix(got, "(recommended)") || !strings.Contains(got, " ms at concurrency ") {
		t.Errorf("E2E p95 legend = %q, want its value in ms at the recommended level", got)
	}
	if len(p.Overlays) != 0 {
		t.Errorf("one variant: got %d overlays, want none", len(p.Overlays))
	}
}

// TestCharts_OneReadingEach: each chart reads one way (issue 28): the
// failure counts have their own chart counted from 0, apart from the zoomed
// accepted share; documents/hour and tokens/s are two charts, not two lines
// that coincide on two auto-scaled axes; a median and its p95 have two
// colours, so their legend markers differ; the F1 axis is zoomed and says so.
func TestCharts_OneReadingEach(t *testing.T) {
	dir := mustWriteFixture(t, defaultFixture)
	p, err := build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	acc := chartByID(t, p, "s0-acceptance")
	if len(acc.Series) != 1 || acc.YLabel[1] != "" {
		t.Errorf("acceptance chart: %d lines, right axis %q; want the accepted share alone", len(acc.Series), acc.YLabel[1])
	}
	fail := chartByID(t, p, "s0-failures")
	if len(fail.Series) == 0 || fail.YRange != [2]float64{} || fail.YLabel[1] != "" {
		t.Errorf("failures chart: %d lines, range %v, right axis %q; want the classes on one auto axis from the data", len(fail.Series), fail.YRange, fail.YLabel[1])
	}
	for _, l := range fail.Series {
		if l.Unit != "docs" || l.Axis != 0 {
			t.Errorf("failures chart line %q in %q on axis %d", l.Label, l.Unit, l.Axis)
		}
	}
	for _, id := range []string{"s0-throughput", "s0-tokens"} {
		if c := chartByID(t, p, id); len(c.Series) != 1 || c.YLabel[1] != "" {
			t.Errorf("%s: %d lines, right axis %q: want one figure per chart", id, len(c.Series), c.YLabel[1])
		}
	}
	for _, id := range []string{"s0-ttft", "s0-e2e"} {
		c := chartByID(t, p, id)
		if c.Series[0].Color == c.Series[1].Color {
			t.Errorf("%s: median and p95 share the colour %s, so one legend marker", id, c.Series[0].Color)
		}
	}
	f1 := chartByID(t, p, "s0-fields")
	if f1.YRange[0] <= 0 || f1.YRange[1] != 100 || !strings.Contains(f1.YLabel[0], "zoomed") || !strings.Contains(f1.Note, "not from 0") {
		t.Errorf("F1 axis = %v, label %q, note %q: want it zoomed below the lowest F1, and said", f1.YRange, f1.YLabel[0], f1.Note)
	}
}

// TestCharts_Overlays: with two variants, one chart per figure carries both
// lines, each the variant's eval figure at every level, above the
// per-variant charts.
func TestCharts_Overlays(t *testing.T) {
	f := defaultFixture
	f.Variants = []string{"bf16", "int8"}
	dir := t.TempDir()
	f.write(t, dir)
	p, err := build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range p.Overlays {
		ids = append(ids, c.ID)
	}
	if got, want := strings.Join(ids, " "), "overlay0-e2e overlay0-acceptance overlay0-throughput"; got != want {
		t.Fatalf("overlays = %q, want %q", got, want)
	}
	if p.Data.Charts[0].ID != "overlay0-e2e" {
		t.Errorf("first chart is %s: the overlays come first", p.Data.Charts[0].ID)
	}
	d, err := load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	all := buildSeries(d)
	for _, c := range p.Overlays {
		if len(c.Series) != 2 {
			t.Fatalf("%s: %d lines, want one per variant", c.ID, len(c.Series))
		}
		for si, s := range all {
			if c.Series[si].Label != s.Variant {
				t.Errorf("%s line %d = %q, want %q", c.ID, si, c.Series[si].Label, s.Variant)
			}
			for _, l := range s.Levels {
				i := -1
				for j, x := range c.X {
					if x == float64(l.Level) {
						i = j
					}
				}
				v := c.Series[si].Values[i]
				var want float64
				switch c.ID {
				case "overlay0-e2e":
					want = l.E2EP95NS.Median / 1e6
				case "overlay0-acceptance":
					want = l.Share() * 100
				case "overlay0-throughput":
					want = l.DocsPerHour.Median
				}
				if v == nil || *v != want {
					t.Errorf("%s %s at %d = %v, want eval's %v", c.ID, s.Variant, l.Level, v, want)
				}
			}
		}
	}
	acc := p.Overlays[1]
	if a, b := acc.Series[0].Legend, acc.Series[1].Legend; a == b {
		t.Errorf("both variants' legends read %q", a)
	}
	if acc.YRange[0] <= 0 || acc.YRange[1] != 100 || len(acc.HLines) != 1 {
		t.Errorf("accepted overlay: axis %v, lines %+v: want zoomed to 100 with the objective", acc.YRange, acc.HLines)
	}
	if len(p.Overlays[0].HLines) != 1 {
		t.Errorf("E2E overlay: lines %+v, want the p95 objective", p.Overlays[0].HLines)
	}
}

func buildSeriesOf(t *testing.T, dir string) *series {
	t.Helper()
	d, err := load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return buildSeries(d)[0]
}

// TestLevelAxis: levels go on a log2 axis only when every x is above 0: a
// rate sweep's sync baseline (level 0) moves one doubling left of the
// lowest rate; context classes, another level ≤ 0 and a single level get a
// linear axis at the levels themselves.
func TestLevelAxis(t *testing.T) {
	for _, c := range []struct {
		mode   extractbench.Mode
		levels []int
		x      []float64
		log    bool
	}{
		{"concurrency", []int{1, 2, 4, 8}, []float64{1, 2, 4, 8}, true},
		{"rate", []int{0, 10, 20, 40}, []float64{5, 10, 20, 40}, true},
		{"rate", []int{0, 30, 37, 44, 565}, []float64{15, 30, 37, 44, 565}, true},
		{"rate", []int{0, 10}, []float64{0, 10}, false},
		{"rate", []int{0}, []float64{0}, false},
		{"context", []int{1, 2, 3}, []float64{1, 2, 3}, false},
		{"concurrency", []int{0, 1, 2}, []float64{0, 1, 2}, false},
		{"batch", []int{4}, []float64{4}, false},
	} {
		x, log := levelAxis(c.mode, c.levels)
		if !slices.Equal(x, c.x) || log != c.log {
			t.Errorf("levelAxis(%s, %v) = %v, log %v; want %v, log %v", c.mode, c.levels, x, log, c.x, c.log)
		}
		for _, v := range x {
			if log && v <= 0 {
				t.Errorf("levelAxis(%s, %v): x %v on a log axis", c.mode, c.levels, v)
			}
		}
	}
}
