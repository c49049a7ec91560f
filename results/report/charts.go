package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
)

// maxTimelinePoints bounds the telemetry chart: a pass sampled every 100 ms
// for an hour has 36,000 samples, more than a chart can show.
const maxTimelinePoints = 2000

// chart is what assets/report.js draws with uPlot: an x axis and series on a
// left (Axis 0) or right (Axis 1) y axis. Values are null where a figure was
// not measured, and the chart leaves a gap there.
type chart struct {
	ID     string     `json:"id"`
	Title  string     `json:"title"`
	XLabel string     `json:"xLabel"`
	XLog   bool       `json:"xLog"` // levels double, so the x axis is log2
	YLabel [2]string  `json:"yLabel"`
	X      []float64  `json:"x"`
	Series []line     `json:"series"`
	Bands  [][2]int   `json:"bands,omitempty"` // pairs of series indices (0-based) whose area between is filled
	Note   string     `json:"note,omitempty"`
	YRange [2]float64 `json:"yRange,omitempty"` // fixed left axis range when [1] > [0]
}

// line is one series of a chart.
type line struct {
	Label  string     `json:"label"`
	Unit   string     `json:"unit"`
	Axis   int        `json:"axis"`
	Color  string     `json:"color"`
	Dash   bool       `json:"dash,omitempty"`
	Values []*float64 `json:"values"`
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
)

// failureColors follows eval.Failures order (cycled for a class added later).
var failureColors = []string{red, orange, purple, sky, black}

// charts builds the charts of one series; prefix keeps element ids unique
// when a report holds several series. A chart with no measured value at all
// (an engine without metrics has no KV figures) is left out, and omitted
// says so, rather than drawn empty.
func charts(prefix string, s *series, telemetry []sampleRow, cardBytes int64) (out []chart, omitted []string) {
	unit := unitName(s.Mode)
	x := make([]float64, len(s.Levels))
	for i, l := range s.Levels {
		x[i] = float64(l.Level)
	}
	perLevel := func(f func(level) *float64) []*float64 {
		out := make([]*float64, len(s.Levels))
		for i, l := range s.Levels {
			out[i] = f(l)
		}
		return out
	}
	ms := func(f func(level) eval.Spread) []*float64 {
		return perLevel(func(l level) *float64 {
			if v := f(l); v.N > 0 {
				return num(v.Median / 1e6)
			}
			return nil
		})
	}
	latency := func(id, name string, p50, p95 func(level) eval.Spread) chart {
		return chart{ID: prefix + id, Title: name + " vs " + unit + " (median and p95 of each pass, median over repetitions; p95 band)",
			XLabel: unit, XLog: true, YLabel: [2]string{name + " (ms)", ""}, X: x,
			Series: []line{
				{Label: name + " median", Unit: "ms", Color: blue, Values: ms(p50)},
				{Label: name + " p95", Unit: "ms", Color: blue, Dash: true, Values: ms(p95)},
			},
			Bands: [][2]int{{1, 0}}}
	}
	var card []*float64
	if cardBytes > 0 {
		card = perLevel(func(level) *float64 { return num(float64(cardBytes) / gib) })
	}
	all := []chart{
		latency("ttft", "TTFT", func(l level) eval.Spread { return l.TTFTP50NS }, func(l level) eval.Spread { return l.TTFTP95NS }),
		latency("e2e", "E2E", func(l level) eval.Spread { return l.E2EP50NS }, func(l level) eval.Spread { return l.E2EP95NS }),
		{ID: prefix + "throughput", Title: "Throughput vs " + unit + " (median over repetitions)", XLabel: unit, XLog: true,
			YLabel: [2]string{"accepted documents/hour", "output tokens/s"}, X: x,
			Series: []line{
				{Label: "documents/hour", Unit: "docs/h", Color: green, Values: perLevel(func(l level) *float64 { return spreadPtr(l.DocsPerHour) })},
				{Label: "output tokens/s", Unit: "tok/s", Axis: 1, Color: orange, Values: perLevel(func(l level) *float64 { return spreadPtr(l.OutputTokensPerS) })},
			}},
		acceptanceChart(prefix, unit, x, s),
		fieldChart(prefix, unit, x, s),
		{ID: prefix + "memory", Title: "Memory peaks vs " + unit + " (GiB = 2^30 bytes)", XLabel: unit, XLog: true,
			YLabel: [2]string{"GiB", "KV cache usage (%)"}, X: x,
			Series: []line{
				{Label: "device (NVML)", Unit: "GiB", Color: black, Values: perLevel(func(l level) *float64 { return gibPtr(l.PeakGPUMemBytes) })},
				{Label: "torch allocated", Unit: "GiB", Color: blue, Values: perLevel(func(l level) *float64 { return gibPtr(l.PeakTorchAllocatedBytes) })},
				{Label: "torch reserved", Unit: "GiB", Color: sky, Dash: true, Values: perLevel(func(l level) *float64 { return gibPtr(l.PeakTorchReservedBytes) })},
				{Label: "KV cache usage", Unit: "%", Axis: 1, Color: red, Values: perLevel(func(l level) *float64 { return pctPtr(l.PeakKVUsage) })},
			}},
	}
	if tl, ok := timeline(prefix, s, telemetry); ok {
		all = append(all, tl)
	} else {
		omitted = append(omitted, "KV cache usage and requests over time: no engine telemetry was recorded")
	}
	for _, c := range all {
		if !c.hasData() {
			omitted = append(omitted, c.Title+": no value was measured")
			continue
		}
		if c.ID == prefix+"memory" && card != nil {
			// The card's capacity, drawn after the data check so that it
			// never makes an empty chart look measured.
			c.Series = append(c.Series, line{Label: "card memory", Unit: "GiB", Color: black, Dash: true, Values: card})
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

func acceptanceChart(prefix, unit string, x []float64, s *series) chart {
	c := chart{ID: prefix + "acceptance", Title: "Accepted share and failures by class vs " + unit, XLabel: unit, XLog: true,
		YLabel: [2]string{"accepted (%)", "failed documents (all repetitions)"}, X: x, YRange: [2]float64{0, 100}}
	acc := make([]*float64, len(s.Levels))
	for i, l := range s.Levels {
		if l.Docs > 0 {
			acc[i] = num(l.Share() * 100)
		}
	}
	c.Series = append(c.Series, line{Label: "accepted", Unit: "%", Color: green, Values: acc})
	for i, f := range eval.Failures {
		v := make([]*float64, len(s.Levels))
		for j, l := range s.Levels {
			v[j] = num(float64(l.Failures.Of(f)))
		}
		c.Series = append(c.Series, line{Label: string(f), Unit: "docs", Axis: 1, Color: failureColors[i%len(failureColors)], Dash: true, Values: v})
	}
	return c
}

// timelineMetrics are the engine metrics the timeline draws, each under
// the names engines use for it, with the scale to the chart's unit.
var timelineMetrics = []struct {
	names []string
	line  line
	scale float64
}{
	{[]string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}, line{Label: "KV cache usage", Unit: "%", Color: red}, 100},
	{[]string{"vllm:num_requests_running"}, line{Label: "running requests", Unit: "requests", Axis: 1, Color: blue}, 1},
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
func heaviest(passes []results.Pass, variant, mode string, has map[results.PassKey]bool) (results.PassKey, bool) {
	var best *results.Pass
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
		return results.PassKey{}, false
	}
	return keyOf(*best), true
}

// timeline charts KV usage and the engine's running and waiting requests
// over the heaviest pass (the only one whose samples load reads), on the
// pass's own clock.
func timeline(prefix string, s *series, telemetry []sampleRow) (chart, bool) {
	var key results.PassKey
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
		Title:  fmt.Sprintf("KV cache usage and requests over time, heaviest pass (%s %d, repetition %d)", unitName(s.Mode), lv, rep),
		YLabel: [2]string{"KV cache usage (%)", "requests"}, YRange: [2]float64{0, 100}}
	var kept []int64
	for i := 0; i < len(ts); i += stride {
		kept = append(kept, ts[i])
		c.X = append(c.X, float64(ts[i]-origin)/1e9)
	}
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
