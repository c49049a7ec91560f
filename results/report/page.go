package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/numfmt"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/compare"
)

// kv is one labelled line of a sheet.
type kv struct{ K, V string }

// sheet is the selection sheet of one series: what to rent and run, and why.
func sheet(m *extractbench.Manifest, s *series) []kv {
	v := m.Variant(s.Variant)
	e, g := v.Engine, v.GPU
	unit := unitName(s.Mode)
	var rows []kv
	add := func(k, v string) {
		if v == "" {
			v = "not recorded"
		}
		rows = append(rows, kv{k, v})
	}
	engine := strings.TrimSpace(e.Kind + " " + e.Version)
	if e.Simulated || m.Simulated {
		engine += " (simulated)"
	}
	add("Engine and version", engine)
	model := e.Model
	if e.Revision != "" {
		model += " @ " + e.Revision
	}
	add("Model and revision", model)
	if e.Weights != "" || e.Quantization != "" {
		add("Weights and quantisation", strings.TrimPrefix(strings.TrimSpace(e.Weights+", "+e.Quantization), ", "))
	}
	card := g.Name
	if g.MemoryTotalBytes > 0 {
		card += fmt.Sprintf(", %.1f GiB per card", float64(g.MemoryTotalBytes)/gib)
	}
	if g.Source != "" && g.Source != "nvidia-smi" {
		card += " (from " + g.Source + ")"
	}
	if cpuEngine(m.Variant(s.Variant)) {
		card = cpuEngineLine
	}
	add("GPU and memory", strings.TrimPrefix(card, ", "))
	if e.ContextWindow > 0 {
		add("Context window", numfmt.GroupDigits(int64(e.ContextWindow))+" tokens")
	} else {
		add("Context window", "")
	}
	if s.Rec.Usable() {
		add("Recommended "+unit, eval.LevelName(s.Mode, s.Rec.Recommended))
	} else {
		add("Recommended "+unit, "none: no level was usable")
	}
	add("Margin and why", s.Rec.Interactive())
	add("Offline objective", s.Rec.Offline.Why)
	if s.Rec.FirstBroken > 0 {
		add("First level that broke", fmt.Sprintf("%s: %s", eval.LevelName(s.Mode, s.Rec.FirstBroken), s.Rec.BrokeReason))
	} else {
		add("First level that broke", "none of the levels measured")
	}
	acc := fmt.Sprintf("≥ %s accepted", fmtShare(m.Acceptance.MinAccepted))
	if m.Acceptance.LatencyP95MS > 0 {
		acc += fmt.Sprintf(", p95 E2E ≤ %s", fmtNS(m.Acceptance.LatencyP95MS*1e6))
	}
	add("Acceptance (written before the run)", acc+", ≥ 99% of the baseline's accepted share, no memory failure")
	if l, ok := s.level(s.readLevel()); ok {
		label := " at " + eval.LevelLabel(s.Mode, l.Level)
		add("Quality achieved"+label, fmt.Sprintf("%s accepted (%d of %d, pooled over %d repetition(s)); parse rule %s",
			fmtShare(l.Share()), l.Accepted, l.Docs, l.Repetitions, orNone(m.Parse)))
		add("Interactive"+label, fmt.Sprintf("TTFT median %s, p95 %s; E2E median %s, p95 %s (each pass's percentile, median over repetitions, range in brackets)",
			spreadNS(l.TTFTP50NS), spreadNS(l.TTFTP95NS), spreadNS(l.E2EP50NS), spreadNS(l.E2EP95NS)))
		add("Offline"+label, fmt.Sprintf("corpus time %s; %s accepted documents/hour; %s output tokens/s",
			spreadNS(l.DurationNS), spreadNum(l.DocsPerHour), spreadNum(l.OutputTokensPerS)))
		add("Memory peak"+label, fmt.Sprintf("device %s; torch allocated %s, reserved %s; KV cache %s",
			fmtGiB(l.PeakGPUMemBytes), fmtGiB(l.PeakTorchAllocatedBytes), fmtGiB(l.PeakTorchReservedBytes), fmtSharePtr(l.PeakKVUsage)))
	}
	return rows
}

func (s *series) level(n int) (eval.Level, bool) {
	for _, l := range s.Levels {
		if l.Level == n {
			return l, true
		}
	}
	return eval.Level{}, false
}

// unitName is what a level counts: concurrency (requests in flight) or
// batch size.
func unitName(mode extractbench.Mode) string {
	if mode == extractbench.ModeBatch {
		return "batch size"
	}
	if mode == "" {
		return "level"
	}
	return string(mode)
}

func orNone(s string) string {
	if s == "" {
		return "not recorded"
	}
	return s
}

// verdictText says what the verdict made of a level, for the tables.
func (s *series) verdictText(l eval.Level) string {
	text := func() string {
		switch {
		case !l.Verdict.Usable:
			return l.Verdict.Word() + ": " + l.Verdict.Reason
		case s.Rec.Is(l.Level):
			return l.Verdict.Word() + ", recommended"
		case s.Rec.FirstBroken > 0 && l.Level > s.Rec.FirstBroken:
			return l.Verdict.Word() + " alone, above the first break"
		default:
			return l.Verdict.Word()
		}
	}()
	if l.Verdict.Usable && l.NotSteady != "" { // acceptance.steady_state: record: shown, not judged
		text += "; NOT STEADY (recorded, not judged; evidence: its finding)"
	}
	if l.CacheNote != "" { // eval/cacheshare.go
		text += "; CACHE: " + l.CacheNote
	}
	return text
}

// runLines describe the run as a whole, above the series.
func runLines(d *dataset, m *extractbench.Manifest) []kv {
	wall := none
	if d.Run.StartedAt > 0 && d.Run.EndedAt >= d.Run.StartedAt {
		wall = fmtNS(float64(d.Run.EndedAt-d.Run.StartedAt) * 1e6)
	}
	protocol := d.Run.ProtocolName
	if protocol == "" {
		protocol = m.ProtocolName
	}
	lines := []kv{
		{"Run", d.Run.RunID},
		{"Protocol", orNone(protocol)},
		{"Fingerprint", orNone(d.Run.Fingerprint)},
		{"Status", orNone(d.Run.Status)},
		{"Started – ended", fmtUnixMS(d.Run.StartedAt) + " – " + fmtUnixMS(d.Run.EndedAt)},
		{"Run wall time", wall},
		{"Corpus", corpusLine(m)},
	}
	// Passes whose engine scrapes failed: their engine figures are partial
	// or missing (–), and the reader must see why before reading them.
	telErrors, lastTelError := map[string]int{}, map[string]string{}
	var telVariants []string
	for _, e := range d.Events {
		if e.Kind != results.EventTelemetryErrors {
			continue
		}
		if telErrors[e.Variant] == 0 {
			telVariants = append(telVariants, e.Variant)
		}
		telErrors[e.Variant]++
		lastTelError[e.Variant] = e.Detail
	}
	for _, v := range telVariants {
		lines = append(lines, kv{"Telemetry errors" + variantSuffix(v), fmt.Sprintf("%d passes with failed scrapes, engine figures partial or missing; last: %s", telErrors[v], lastTelError[v])})
	}
	for _, e := range d.Events {
		if e.ValueNS == 0 {
			continue
		}
		switch e.Kind {
		case results.EventEngineLoad:
			lines = append(lines, kv{"Engine load time" + variantSuffix(e.Variant), fmtNS(float64(e.ValueNS))})
		case results.EventWarmup:
			lines = append(lines, kv{"Warm-up time" + variantSuffix(e.Variant), fmtNS(float64(e.ValueNS))})
		}
	}
	return lines
}

func variantSuffix(v string) string {
	if v == "" {
		return ""
	}
	return " (" + v + ")"
}

func shortHash(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}

// outcomeRows is the report's verdict table: every variant the protocol
// planned, with its state (PASS, FAIL, ERROR, INTERRUPTED, NOT RUN), its
// baseline share, its paired verdict against the baseline variant (runs of
// several variants), the recommended (interactive) level with its figures
// there (p95 E2E, accepted documents/hour, device memory peak: eval's
// level, as every page), the offline level, and why. Seven columns, so
// that it fits a 1000 px window without a scrollbar.
func outcomeRows(m *extractbench.Manifest, outcomes []results.Outcome, paired []compare.Paired, baseline string) table {
	t := table{ID: "outcomes", Title: "Verdict per variant",
		Note: "Accepted share pooled over the baseline's repetitions; p95 E2E and accepted documents/hour are each pass's figure, median over repetitions; the memory peak is the highest. " +
			"Interactive: the highest level meeting the latency objectives, one step back; offline: the level with the most accepted documents/hour under the quality gate.",
		Head: []string{"variant (model on GPU)", "state", "baseline accepted", "interactive: recommended, figures there", "offline", "why"}}
	if len(paired) > 0 {
		t.Head = slices.Insert(t.Head, 3, "paired against "+baseline)
	}
	for _, o := range outcomes {
		share, rec := none, none
		if o.BaselineShare != nil {
			share = fmtShare(*o.BaselineShare)
		}
		if len(o.Series) > 0 {
			rec = "none" // measured, and no level usable: as the card says
		}
		if s, l := recommendedLevel(o); l != nil {
			rec = fmt.Sprintf("%s: p95 E2E %s; %s accepted documents/hour; device peak %s", eval.LevelLabel(s.Mode, l.Level),
				spreadNS(l.E2EP95NS), spreadNum(l.DocsPerHour), fmtGiB(l.PeakGPUMemBytes))
		}
		gpu := none // a variant that measured nothing ran on no card (the manifest's fallback would name another variant's)
		if o.PassesDone > 0 {
			gpu = orNone(m.Variant(o.Variant).GPU.Name)
			if cpuEngine(m.Variant(o.Variant)) {
				gpu = "CPU (no GPU)"
			}
		}
		_, off := objectiveLines(o)
		offline := off.Level
		if off.Figures != "" {
			offline += ": " + off.Figures
		}
		row := []string{fmt.Sprintf("%s (%s on %s)", o.Variant, orNone(o.Model), gpu), o.State, share, rec, offline, orNone(o.Reason)}
		if len(paired) > 0 {
			verdict := "the baseline variant"
			if p := compare.PairedOf(paired, o.Variant); p != nil {
				verdict = p.Word() + ": " + pairedFigures(*p)
			}
			row = slices.Insert(row, 3, verdict)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// recommendedLevel is the variant's first series with a recommended level,
// and that level; nil when none has one.
func recommendedLevel(o results.Outcome) (eval.Series, *eval.Level) {
	for _, s := range o.Series {
		if l := s.Recommended(); l != nil {
			return s, l
		}
	}
	return eval.Series{}, nil
}

// headline is the summary's first sentence: which passing variant did the
// job fastest at its recommended level, with the figures the table shows;
// or that none passed.
func headline(m *extractbench.Manifest, outcomes []results.Outcome, paired []compare.Paired) string {
	h := fastestHeadline(m, outcomes)
	if p := pairedHeadline(paired); p != "" {
		return p + " " + h
	}
	return h
}

// fastestHeadline is the headline without the paired verdicts.
func fastestHeadline(m *extractbench.Manifest, outcomes []results.Outcome) string {
	var best *results.Outcome
	var bestRate float64
	passed := 0
	for i, o := range outcomes {
		if !o.Passed() {
			continue
		}
		passed++
		if _, l := recommendedLevel(o); l != nil && l.DocsPerHour.N > 0 && (best == nil || l.DocsPerHour.Median > bestRate) {
			best, bestRate = &outcomes[i], l.DocsPerHour.Median
		}
	}
	switch {
	case len(outcomes) == 0:
		return "No variant was measured."
	case passed == 0:
		return fmt.Sprintf("No variant passed (%d measured or planned): see why below.", len(outcomes))
	case best == nil:
		return fmt.Sprintf("%d of %d variants passed their baseline; none has a usable level to recommend.", passed, len(outcomes))
	}
	s, l := recommendedLevel(*best)
	gpu := m.Variant(best.Variant).GPU.Name
	switch {
	case cpuEngine(m.Variant(best.Variant)):
		gpu = "the CPU (no GPU)"
	case gpu == "":
		gpu = "an unrecorded GPU"
	}
	figures := fmt.Sprintf("%s (%s on %s) at %s: %s accepted documents/hour, p95 E2E %s, baseline accepted %s.",
		best.Variant, orNone(best.Model), gpu, eval.LevelLabel(s.Mode, l.Level),
		spreadNum(l.DocsPerHour), spreadNS(l.E2EP95NS), fmtShare(*best.BaselineShare))
	if len(outcomes) == 1 {
		return "Passed: " + figures
	}
	return fmt.Sprintf("%d of %d variants passed; the fastest at its recommended level: %s", passed, len(outcomes), figures)
}
