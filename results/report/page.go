package report

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/extractbench/extractbench/sizing"
)

// parseManifest decodes runs.manifest leniently: a field the run did not
// record stays empty and prints as such.
func parseManifest(raw json.RawMessage) (sizing.Manifest, error) {
	var m sizing.Manifest
	if len(raw) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("decode run manifest: %w", err)
	}
	return m, nil
}

// kv is one labelled line of a sheet.
type kv struct{ K, V string }

// sheet is the selection sheet of one series: what to rent and run, and why.
func sheet(m sizing.Manifest, s *series) []kv {
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
	card := g.Name
	if g.MemoryTotalBytes > 0 {
		card += fmt.Sprintf(", %.1f GiB per card", float64(g.MemoryTotalBytes)/gib)
	}
	if g.Source != "" && g.Source != "nvidia-smi" {
		card += " (from " + g.Source + ")"
	}
	add("GPU and memory", strings.TrimPrefix(card, ", "))
	if e.ContextWindow > 0 {
		add("Context window", sizing.GroupDigits(int64(e.ContextWindow))+" tokens")
	} else {
		add("Context window", "")
	}
	if s.Rec.Recommended > 0 {
		add("Recommended "+unit, strconv.Itoa(s.Rec.Recommended))
	} else {
		add("Recommended "+unit, "none: no level was usable")
	}
	add("Margin and why", s.Rec.Why)
	if s.Rec.FirstBroken > 0 {
		add("First level that broke", fmt.Sprintf("%d: %s", s.Rec.FirstBroken, s.Rec.BrokeReason))
	} else {
		add("First level that broke", "none of the levels measured")
	}
	acc := fmt.Sprintf("≥ %s accepted", fmtShare(m.Acceptance.MinAccepted))
	if m.Acceptance.LatencyP95MS > 0 {
		acc += fmt.Sprintf(", p95 E2E ≤ %s", fmtNS(m.Acceptance.LatencyP95MS*1e6))
	}
	add("Acceptance (written before the run)", acc+", ≥ 99% of the baseline's accepted share, no memory failure")
	if l, ok := s.level(s.readLevel()); ok {
		label := fmt.Sprintf(" at %s %d", unit, l.Level)
		add("Quality achieved"+label, fmt.Sprintf("%s accepted (%d of %d over %d repetition(s)); parse rule %s",
			fmtShare(l.Share()), l.Accepted, l.Docs, l.Reps, orNone(m.Parse)))
		add("Interactive"+label, fmt.Sprintf("TTFT median %s, p95 %s; E2E median %s, p95 %s (n = %d)",
			fmtDist(l.TTFT, 0.5), fmtDist(l.TTFT, 0.95), fmtDist(l.E2E, 0.5), fmtDist(l.E2E, 0.95), l.E2E.N))
		add("Offline"+label, fmt.Sprintf("corpus time %s; %s documents/hour; %s output tokens/s",
			fmtSpread(l.CorpusNS, fmtNS), fmtSpread(l.DocsPerHour, fmtNum), fmtSpread(l.TokensPerS, fmtNum)))
		add("Memory peak"+label, fmt.Sprintf("device %s; torch allocated %s, reserved %s; KV cache %s",
			fmtGiB(l.PeakGPU), fmtGiB(l.PeakAlloc), fmtGiB(l.PeakReserved), fmtSharePtr(l.PeakKV)))
	}
	return rows
}

func (s *series) level(n int) (level, bool) {
	for _, l := range s.Levels {
		if l.Level == n {
			return l, true
		}
	}
	return level{}, false
}

// unitName is what a level counts: concurrency (requests in flight) or
// batch size.
func unitName(mode string) string {
	if mode == "batch" {
		return "batch size"
	}
	if mode == "" {
		return "level"
	}
	return mode
}

func orNone(s string) string {
	if s == "" {
		return "not recorded"
	}
	return s
}

// verdictText says what the verdict made of a level, for the tables.
func (s *series) verdictText(l level) string {
	switch {
	case !l.Judged:
		return "not judged"
	case l.Level == s.Rec.Recommended:
		return "recommended"
	case !l.Verdict.Usable:
		return "broke: " + l.Verdict.Reason
	case s.Rec.FirstBroken > 0 && l.Level > s.Rec.FirstBroken:
		return "usable alone, above the first break"
	default:
		return "usable"
	}
}

// runLines describe the run as a whole, above the series.
func runLines(d *dataset, m sizing.Manifest) []kv {
	wall := none
	if d.Run.StartedAt > 0 && d.Run.EndedAt >= d.Run.StartedAt {
		wall = fmtNS(float64(d.Run.EndedAt-d.Run.StartedAt) * 1e6)
	}
	protocol := d.Run.Protocol
	if protocol == "" {
		protocol = m.ProtocolName
	}
	lines := []kv{
		{"Run", d.Run.ID},
		{"Protocol", orNone(protocol)},
		{"Fingerprint", orNone(d.Run.Fingerprint)},
		{"Status", orNone(d.Run.Status)},
		{"Started – ended", fmtUnixMS(d.Run.StartedAt) + " – " + fmtUnixMS(d.Run.EndedAt)},
		{"Run wall time", wall},
		{"Corpus", fmt.Sprintf("%s (%d documents, sha256 %s)", orNone(m.Corpus.Path), m.Corpus.Count, orNone(shortHash(m.Corpus.SHA256)))},
	}
	for _, e := range d.Events {
		if e.ValueNS == nil {
			continue
		}
		switch e.Kind {
		case "engine_load":
			lines = append(lines, kv{"Engine load time" + variantSuffix(e.Variant), fmtNS(float64(*e.ValueNS))})
		case "warmup":
			lines = append(lines, kv{"Warm-up time" + variantSuffix(e.Variant), fmtNS(float64(*e.ValueNS))})
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
