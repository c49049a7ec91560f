package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/numfmt"
)

// maxTimelinePoints bounds the telemetry chart: a pass sampled every 100 ms
// for an hour has 36,000 samples, more than a chart can show.
const maxTimelinePoints = 2000

// chart is what assets/report.js draws with uPlot: an x axis and series on a
// left (Axis 0) or right (Axis 1) y axis. Values are null where a figure was
// not measured, and the chart leaves a gap there.
type chart struct {
	ID     string    `json:"id"`
	Title  string    `json:"title"`
	XLabel string    `json:"xLabel"`
	XLog   bool      `json:"xLog"` // levels double, so the x axis is log2; never with an x ≤ 0 (levelAxis)
	YLabel [2]string `json:"yLabel"`
	X      []float64 `json:"x"`
	// XNames name each x of a sweep's chart as the tables do ("sync",
	// "10/s", "short", "565/s (probe)"): the axis ticks and the legends
	// read them. Nil on the timeline, whose x is seconds.
	XNames []string   `json:"xNames,omitempty"`
	levels []int      // the sweep level at each x (a baseline's x on a log axis is not its level)
	Series []line     `json:"series"`
	Bands  [][2]int   `json:"bands,omitempty"` // pairs of series indices (0-based) whose area between is filled
	Note   string     `json:"note,omitempty"`
	YRange [2]float64 `json:"yRange,omitempty"` // fixed left axis range when [1] > [0]
	// YCount marks an axis (left, right) of counts: its ticks are whole
	// numbers (a request or a document is not divided).
	YCount [2]bool `json:"yCount"`
	// HLines are labelled horizontal lines (an objective, the card's
	// memory) on the left axis, VLines labelled vertical lines at an x (the
	// recommended level). The axis range always takes them in.
	HLines []marker `json:"hLines,omitempty"`
	VLines []marker `json:"vLines,omitempty"`
}

// marker is one labelled reference line of a chart.
type marker struct {
	Value float64 `json:"value"`
	Label string  `json:"label"`
	Color string  `json:"color"`
}

// line is one series of a chart.
type line struct {
	Label  string     `json:"label"`
	Unit   string     `json:"unit"`
	Axis   int        `json:"axis"`
	Color  string     `json:"color"`
	Dash   bool       `json:"dash,omitempty"`
	Width  float64    `json:"width,omitempty"` // CSS px; set by separate
	Values []*float64 `json:"values"`
	// Legend is what the legend shows before any hover: the value at the
	// recommended level (or the last one measured) with its unit, so the
	// chart reads without a mouse.
	Legend string `json:"legend"`
}

// objectives are the protocol's acceptance figures the charts draw as lines.
type objectives struct {
	LatencyP95MS float64 // p95 E2E objective; 0 = none
	MinAccepted  float64 // share, 0–1
}

func objectivesOf(a extractbench.Acceptance) objectives {
	return objectives{LatencyP95MS: a.LatencyP95MS, MinAccepted: a.MinAccepted}
}

// recMarker is the vertical line at a series' recommended level.
func recMarker(s *series) []marker {
	if !s.Rec.Usable() {
		return nil
	}
	if _, ok := s.level(s.Rec.Recommended); !ok {
		return nil
	}
	return []marker{{Value: float64(s.Rec.Recommended), Label: "recommended (interactive): " + eval.LevelName(s.Mode, s.Rec.Recommended), Color: green}}
}

// offlineMarker is the vertical line at a series' offline level, when it
// is not the recommended (interactive) one.
func offlineMarker(s *series) []marker {
	o := s.Rec.Offline
	if o.Level <= 0 || o.Level == s.Rec.Recommended {
		return nil
	}
	if _, ok := s.level(o.Level); !ok {
		return nil
	}
	return []marker{{Value: float64(o.Level), Label: "offline: " + eval.LevelName(s.Mode, o.Level), Color: purple}}
}

// latencyObjective is the horizontal line of the p95 E2E objective.
func latencyObjective(o objectives) []marker {
	if o.LatencyP95MS <= 0 {
		return nil
	}
	return []marker{{Value: o.LatencyP95MS, Label: "objective: p95 E2E ≤ " + fmtNS(o.LatencyP95MS*1e6), Color: objectiveColor}}
}

// setLegends writes each line's static legend: its value at level rec when
// it has one there, else at the last x with a value.
func (c *chart) setLegends(rec int) {
	for i := range c.Series {
		l := &c.Series[i]
		at, isRec := -1, false
		for j, v := range l.Values {
			if v == nil {
				continue
			}
			if rec > 0 && j < len(c.levels) && c.levels[j] == rec {
				at, isRec = j, true
				break
			}
			at = j
		}
		if at < 0 {
			l.Legend = "not measured"
			continue
		}
		l.Legend = fmt.Sprintf("%s at %s %s", withUnit(*l.Values[at], l.Unit), c.XLabel, c.xName(at))
		if isRec {
			l.Legend += " (recommended)"
		}
	}
}

// xName is how the chart names its i-th x: the level's name, else the
// number.
func (c *chart) xName(i int) string {
	if i < len(c.XNames) {
		return c.XNames[i]
	}
	return strconv.FormatFloat(c.X[i], 'f', -1, 64)
}

// levelAxis places a sweep's levels on the x axis. Levels that double read
// best on a log2 axis, which cannot take an x ≤ 0 (log(0) is -∞: uPlot
// then never finishes its ticks and the page hangs). A rate sweep's
// synchronous baseline (level 0) is not a rate: on a log axis it is drawn
// one doubling left of the lowest rate, named "sync" on the axis and in the
// legends. Any other level ≤ 0, a context sweep's classes (1, 2, 3) and a
// sweep of one level get a linear axis.
func levelAxis(mode extractbench.Mode, levels []int) (x []float64, log bool) {
	lowest, positive := 0, 0
	for _, l := range levels {
		if l > 0 {
			positive++
			if lowest == 0 || l < lowest {
				lowest = l
			}
		}
	}
	log = mode != extractbench.ModeContext && positive >= 2
	for _, l := range levels {
		if l <= 0 && !(mode == extractbench.ModeRate && l == extractbench.SyncLevel) {
			log = false
		}
	}
	x = make([]float64, len(levels))
	for i, l := range levels {
		x[i] = float64(l)
		if log && l <= 0 {
			x[i] = float64(lowest) / 2
		}
	}
	return x, log
}

// levelName names a level as the tables do; a probe pass says so.
func levelName(l eval.Level) string {
	name := eval.LevelName(l.Mode, l.Level)
	if l.Phase == extractbench.PhaseProbe {
		name += " (probe)"
	}
	return name
}

// withUnit prints a chart value as the tables do, with its unit.
func withUnit(v float64, unit string) string {
	s := fmtNum(v)
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e15: // a count, or a round figure
		s = numfmt.GroupDigits(int64(v))
	case math.Abs(v) < 10:
		s = strconv.FormatFloat(v, 'f', 2, 64)
	}
	switch unit {
	case "":
		return s
	case "%":
		return s + "%"
	}
	return s + " " + unit
}

// zoomShare is the accepted-share axis: from just below the lowest share
// (or the objective, if lower) to 100%, so 95.3% and 98% look apart.
func zoomShare(values []*float64, min float64) [2]float64 {
	lo := 100.0
	if min > 0 {
		lo = min * 100
	}
	for _, v := range values {
		if v != nil && *v < lo {
			lo = *v
		}
	}
	pad := math.Max(1, (100-lo)*0.1)
	return [2]float64{math.Max(0, math.Floor(lo-pad)), 100}
}

// axisRange says a zoomed axis's range in words.
func axisRange(r [2]float64) string {
	return fmt.Sprintf("axis %s–%s%%, zoomed", strconv.FormatFloat(r[0], 'f', -1, 64), strconv.FormatFloat(r[1], 'f', -1, 64))
}

// Colours chosen to stay distinct in print and for common colour blindness
// (Okabe–Ito palette).
const (
	blue   = "#0072B2"
	orange = "#E69F00"
	green  = "#009E73"
	red    = "#D55E00"
	purple = "#CC79A7"
	sky    = "#56B4E9"
	black  = "#000000"
	yellow = "#B8A000"
	// objectiveColor draws the protocol's objectives, apart from every line.
	objectiveColor = "#444444"
)

// failureColors follows extractbench.Failures order (cycled for a class added later).
var failureColors = []string{red, orange, purple, sky, black}

// charts builds the charts of one series; prefix keeps element ids unique
// when a report holds several series. A chart with no measured value at all
// (an engine without metrics has no KV figures) is left out, and omitted
// says so, rather than drawn empty.
func charts(prefix string, s *series, telemetry []sampleRow, cardBytes int64, obj objectives) (out []chart, omitted []string) {
	unit := unitName(s.Mode)
	levels := make([]int, len(s.Levels))
	names := make([]string, len(s.Levels))
	for i, l := range s.Levels {
		levels[i], names[i] = l.Level, levelName(l)
	}
	x, xLog := levelAxis(s.Mode, levels)
	perLevel := func(f func(eval.Level) *float64) []*float64 {
		out := make([]*float64, len(s.Levels))
		for i, l := range s.Levels {
			out[i] = f(l)
		}
		return out
	}
	ms := func(f func(eval.Level) eval.Spread) []*float64 {
		return perLevel(func(l eval.Level) *float64 {
			if v := f(l); v.N > 0 {
				return num(v.Median / 1e6)
			}
			return nil
		})
	}
	latency := func(id, name string, p50, p95 func(eval.Level) eval.Spread) chart {
		return chart{ID: prefix + id, Title: name + " vs " + unit + " (median and p95 of each pass, median over repetitions; p95 band)",
			XLabel: unit, XLog: xLog, YLabel: [2]string{name + " (ms)", ""}, X: x,
			Series: []line{
				// Two colours, not one with a dash: the legend's marker shows only the colour.
				{Label: name + " median", Unit: "ms", Color: blue, Values: ms(p50)},
				{Label: name + " p95", Unit: "ms", Color: orange, Dash: true, Values: ms(p95)},
			},
			Bands: [][2]int{{1, 0}}, VLines: recMarker(s)}
	}
	e2e := latency("e2e", "E2E", func(l eval.Level) eval.Spread { return l.E2EP50NS }, func(l eval.Level) eval.Spread { return l.E2EP95NS })
	e2e.HLines = latencyObjective(obj)
	all := []chart{
		latency("ttft", "TTFT", func(l eval.Level) eval.Spread { return l.TTFTP50NS }, func(l eval.Level) eval.Spread { return l.TTFTP95NS }),
		e2e,
		// Documents/hour and tokens/s are two charts: on two auto-scaled axes
		// of one chart the two lines, nearly proportional, coincide.
		{ID: prefix + "throughput", Title: "Accepted documents/hour vs " + unit + " (median over repetitions)", XLabel: unit, XLog: xLog,
			VLines: append(recMarker(s), offlineMarker(s)...),
			YLabel: [2]string{"accepted documents/hour", ""}, X: x,
			Series: []line{
				{Label: "accepted documents/hour", Unit: "docs/h", Color: blue, Values: perLevel(func(l eval.Level) *float64 { return spreadPtr(l.DocsPerHour) })},
			}},
		{ID: prefix + "tokens", Title: "Output tokens/s vs " + unit + " (median over repetitions)", XLabel: unit, XLog: xLog, VLines: recMarker(s),
			YLabel: [2]string{"output tokens/s", ""}, X: x,
			Series: []line{
				{Label: "output tokens/s", Unit: "tok/s", Color: orange, Values: perLevel(func(l eval.Level) *float64 { return spreadPtr(l.OutputTokensPerS) })},
			}},
		acceptanceChart(prefix, unit, x, xLog, s, obj),
		failuresChart(prefix, unit, x, xLog, s),
		fieldChart(prefix, unit, x, xLog, s),
		// Memory in GiB and the KV cache in % are two charts: one unit per axis.
		{ID: prefix + "memory", Title: "Memory peaks vs " + unit + " (GiB = 2^30 bytes)", XLabel: unit, XLog: xLog,
			YLabel: [2]string{"memory peak (GiB)", ""}, X: x, VLines: recMarker(s),
			Series: []line{
				{Label: "device (NVML)", Unit: "GiB", Color: black, Values: perLevel(func(l eval.Level) *float64 { return gibPtr(l.PeakGPUMemBytes) })},
				{Label: "torch allocated", Unit: "GiB", Color: blue, Values: perLevel(func(l eval.Level) *float64 { return gibPtr(l.PeakTorchAllocatedBytes) })},
				{Label: "torch reserved", Unit: "GiB", Color: sky, Dash: true, Values: perLevel(func(l eval.Level) *float64 { return gibPtr(l.PeakTorchReservedBytes) })},
			}},
		{ID: prefix + "kv", Title: "KV cache usage peak vs " + unit + " (share of the engine's KV cache)", XLabel: unit, XLog: xLog,
			YLabel: [2]string{"KV cache usage peak (%)", ""}, X: x, YRange: [2]float64{0, 100}, VLines: recMarker(s),
			Series: []line{
				{Label: "KV cache usage peak", Unit: "%", Color: red, Values: perLevel(func(l eval.Level) *float64 { return pctPtr(l.PeakKVUsage) })},
			}},
	}
	for i := range all {
		all[i].XNames, all[i].levels = names, levels
		if all[i].VLines == nil {
			all[i].VLines = recMarker(s)
		}
		all[i].setLegends(s.Rec.Recommended)
	}
	if tl, ok := timeline(prefix, s, telemetry); ok {
		all = append(all, tl)
	} else {
		omitted = append(omitted, "KV cache usage and requests over time: no engine telemetry was recorded")
	}
	for _, c := range all {
		c.separate()
		if !c.hasData() {
			omitted = append(omitted, c.Title+": no value was measured")
			continue
		}
		if c.ID == prefix+"memory" && cardBytes > 0 {
			// The card's capacity, drawn after the data check so that it
			// never makes an empty chart look measured.
			card := float64(cardBytes) / gib
			c.HLines = append(c.HLines, marker{Value: card, Label: "card memory: " + withUnit(card, "GiB"), Color: purple})
		}
		out = append(out, c)
	}
	return out, omitted
}

// hasData reports whether any series of the chart has a value.
func (c chart) hasData() bool {
	for _, l := range c.Series {
		for _, v := range l.Values {
			if v != nil {
				return true
			}
		}
	}
	return false
}

func acceptanceChart(prefix, unit string, x []float64, xLog bool, s *series, obj objectives) chart {
	c := chart{ID: prefix + "acceptance", Title: "Accepted share (pooled over repetitions) vs " + unit, XLabel: unit, XLog: xLog,
		X: x, VLines: recMarker(s), HLines: shareObjective(obj)}
	acc := make([]*float64, len(s.Levels))
	for i, l := range s.Levels {
		if l.Docs > 0 {
			acc[i] = num(l.Share() * 100)
		}
	}
	c.YRange = zoomShare(acc, obj.MinAccepted)
	c.YLabel = [2]string{"accepted (%, " + axisRange(c.YRange) + ")", ""}
	c.Note = "The accepted-share axis runs from " + strconv.FormatFloat(c.YRange[0], 'f', -1, 64) + "% to 100%, not from 0; the failed documents by class are on their own chart, counted from 0."
	c.Series = append(c.Series, line{Label: "accepted", Unit: "%", Color: blue, Values: acc})
	return c
}

// failuresChart counts the failed documents of each class per level, on
// an axis from 0: beside a zoomed share axis, a count reads as a share. A
// class that failed no document at any level is named in the note, not
// drawn: five lines at 0 would lie on one another.
func failuresChart(prefix, unit string, x []float64, xLog bool, s *series) chart {
	c := chart{ID: prefix + "failures", Title: "Failed documents by class vs " + unit + " (summed over repetitions)", XLabel: unit, XLog: xLog,
		X: x, VLines: recMarker(s), YLabel: [2]string{"failed documents (all repetitions)", ""}, YCount: [2]bool{true, false}}
	var never []string
	for i, f := range extractbench.Failures {
		v := make([]*float64, len(s.Levels))
		var total int64
		for j, l := range s.Levels {
			n := l.Failures.Of(f)
			v[j] = num(float64(n))
			total += n
		}
		if total == 0 {
			never = append(never, string(f))
			continue
		}
		c.Series = append(c.Series, line{Label: string(f), Unit: "docs", Color: failureColors[i%len(failureColors)], Dash: i%2 == 1, Values: v})
	}
	if len(c.Series) == 0 {
		// Nothing failed: one line at 0 says so on the chart.
		v := make([]*float64, len(s.Levels))
		for j := range v {
			v[j] = num(0)
		}
		c.Series = []line{{Label: "any class", Unit: "docs", Color: failureColors[0], Values: v}}
		c.Note = "No document failed at any " + unit + "."
	} else if len(never) > 0 {
		c.Note = "No failure at any " + unit + ": " + andList(never) + "."
	}
	return c
}

// shareObjective is the horizontal line of the protocol's minimum share.
func shareObjective(o objectives) []marker {
	if o.MinAccepted <= 0 {
		return nil
	}
	return []marker{{Value: o.MinAccepted * 100, Label: "objective: ≥ " + fmtShare(o.MinAccepted) + " accepted", Color: objectiveColor}}
}

// timelineMetrics are the engine metrics the timeline draws, each under
// the names engines use for it, with the scale to the chart's unit.
var timelineMetrics = []struct {
	names []string
	line  line
	scale float64
}{
	{[]string{extractbench.MetricKVUsage, "vllm:gpu_cache_usage_perc"}, line{Label: "KV cache usage", Unit: "%", Color: red}, 100},
	{[]string{extractbench.MetricRunning}, line{Label: "running requests", Unit: "requests", Axis: 1, Color: blue}, 1},
	{[]string{"vllm:num_requests_waiting"}, line{Label: "waiting requests", Unit: "requests", Axis: 1, Color: orange, Dash: true}, 1},
}

// timelineMetricNames lists every metric name the timeline reads.
func timelineMetricNames() []string {
	var out []string
	for _, m := range timelineMetrics {
		out = append(out, m.names...)
	}
	return out
}

// heaviest picks the pass of one variant and mode whose telemetry the
// timeline shows: the highest level with telemetry, and there the
// repetition with the highest KV peak (the first on a tie).
func heaviest(passes []extractbench.Pass, variant string, mode extractbench.Mode, has map[extractbench.PassKey]bool) (extractbench.PassKey, bool) {
	var best *extractbench.Pass
	for i := range passes {
		p := &passes[i]
		if p.Variant != variant || p.Mode != mode || !has[keyOf(*p)] || !p.Complete() {
			continue
		}
		switch {
		case best == nil, p.Level > best.Level:
			best = p
		case p.Level == best.Level && p.PeakKVUsage != nil && (best.PeakKVUsage == nil || *p.PeakKVUsage > *best.PeakKVUsage):
			best = p
		}
	}
	if best == nil {
		return extractbench.PassKey{}, false
	}
	return keyOf(*best), true
}

// timeline charts KV usage and the engine's running and waiting requests
// over the heaviest pass (the only one whose samples load reads), on the
// pass's own clock.
func timeline(prefix string, s *series, telemetry []sampleRow) (chart, bool) {
	var key extractbench.PassKey
	found := false
	for _, t := range telemetry {
		if t.Variant == s.Variant && t.Mode == s.Mode {
			key, found = t.PassKey, true
			break
		}
	}
	if !found {
		return chart{}, false
	}
	lv, rep := key.Level, key.Repetition
	metrics := timelineMetrics
	var ts []int64
	values := make([]map[int64]float64, len(metrics))
	for i := range values {
		values[i] = map[int64]float64{}
	}
	for _, t := range telemetry {
		if t.Variant != s.Variant || t.Mode != s.Mode || t.Level != lv || t.Repetition != rep {
			continue
		}
		for i, m := range metrics {
			if slices.Contains(m.names, t.Metric) {
				if _, dup := values[i][t.TNS]; !dup {
					ts = append(ts, t.TNS)
				}
				values[i][t.TNS] = t.Value * m.scale
			}
		}
	}
	slices.Sort(ts)
	ts = slices.Compact(ts)
	if len(ts) == 0 {
		return chart{}, false
	}
	stride := (len(ts) + maxTimelinePoints - 1) / maxTimelinePoints
	origin := ts[0]
	for _, p := range s.Passes {
		if p.Level == lv && p.Repetition == rep && p.StartedNS != nil && *p.StartedNS <= origin {
			origin = *p.StartedNS
		}
	}
	c := chart{ID: prefix + "timeline", XLabel: "seconds since the pass started",
		Title:  fmt.Sprintf("KV cache usage and requests over time, heaviest pass (%s, repetition %d)", eval.LevelLabel(s.Mode, lv), rep),
		YLabel: [2]string{"KV cache usage (%)", "requests"}, YRange: [2]float64{0, 100}}
	var kept []int64
	for i := 0; i < len(ts); i += stride {
		kept = append(kept, ts[i])
		c.X = append(c.X, float64(ts[i]-origin)/1e9)
	}
	c.YCount[1] = true // requests, running or waiting, are whole
	var missing []string
	for i, m := range metrics {
		l := m.line
		l.Values = make([]*float64, len(kept))
		for j, t := range kept {
			if v, ok := values[i][t]; ok {
				l.Values[j] = num(v)
			}
		}
		if len(values[i]) == 0 {
			missing = append(missing, m.names[0])
		}
		c.Series = append(c.Series, l)
	}
	if stride > 1 {
		c.Note = fmt.Sprintf("every %d-th of %d samples shown. ", stride, len(ts))
	}
	if len(missing) > 0 {
		c.Note += "not reported by the engine: " + strings.Join(missing, ", ") + "."
	}
	for i := range c.Series {
		l := &c.Series[i]
		peak := math.Inf(-1)
		for _, v := range l.Values {
			if v != nil {
				peak = math.Max(peak, *v)
			}
		}
		l.Legend = "not reported"
		if !math.IsInf(peak, -1) {
			l.Legend = "peak " + withUnit(peak, l.Unit)
		}
	}
	return c, true
}

// num boxes a chart value; NaN and ±Inf become null, which JSON (and so the
// page) could not carry otherwise.
func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func spreadPtr(s eval.Spread) *float64 {
	if s.N == 0 {
		return nil
	}
	return num(s.Median)
}

func gibPtr(b *int64) *float64 {
	if b == nil {
		return nil
	}
	return num(float64(*b) / gib)
}

func pctPtr(v *float64) *float64 {
	if v == nil {
		return nil
	}
	return num(*v * 100)
}
