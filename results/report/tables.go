package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/numfmt"
)

// table is one table of the report, already formatted, so that report.html
// and report.md show the same figures. Code marks columns holding document
// or output text: they render as code (monospace, never markup, never links).
type table struct {
	ID, Title, Note string
	Head            []string
	Code            []bool
	Rows            [][]string
}

// seriesTables builds every table of one series, in reading order.
func seriesTables(prefix string, s *series, texts map[string]string, textNote string) []table {
	unit := unitName(s.Mode)
	out := []table{interactiveTable(prefix, unit, s), offlineTable(prefix, unit, s), qualityTable(prefix, unit, s),
		memoryTable(prefix, unit, s), fieldTable(prefix, unit, s), fieldClassTable(prefix, unit, s), classTable(prefix, unit, s), changedTable(prefix, unit, s), slowTable(prefix, unit, s, texts, textNote),
		failedTable(prefix, s, texts, textNote), confusionTable(prefix, unit, s)}
	if s.Mode == extractbench.ModeRate {
		out = slices.Insert(out, 1, rateTable(prefix, s))
	}
	return out
}

// rateTable shows a rate sweep's load as it arrived and as it was sent,
// the objectives' figures and goodput: eval's level figures, as stdout.
func rateTable(prefix string, s *series) table {
	t := table{ID: prefix + "rate", Title: "Rate sweep: offered vs achieved load, lateness, goodput",
		Note: "Offered: planned arrivals per second ((requests − 1) / planned span); achieved: sends per second. " +
			"Lateness = send − scheduled instant; E2E from schedule = done − scheduled instant, so queueing past saturation shows. " +
			"On time: every latency objective met (TTFT and E2E from the scheduled instant, TPOT); goodput: documents accepted and on time, per second. " +
			"Client bound: the client could not keep the schedule (its own delay or CPU); such a level is never recommended. " +
			"Median over complete repetitions, range in brackets; on-time shares pooled.",
		// client beside the load it kept (or not): a narrow window scrolls the
		// middle columns, and the answer columns stay in sight.
		Head: []string{"rate", "offered/s", "achieved/s", "client", "lateness p50", "lateness p99", "client queue p95", "E2E p95 from schedule",
			"TTFT p99 from schedule", "TPOT p99", "max waiting", "on time", "accepted on time", "goodput/s", "verdict"}}
	for _, l := range s.Levels {
		client := "kept the schedule"
		if l.ClientBound > 0 {
			client = fmt.Sprintf("BOUND in %d of %d", l.ClientBound, l.Repetitions)
		}
		docs := float64(max(l.Docs, 1))
		t.Rows = append(t.Rows, []string{eval.LevelName(l.Mode, l.Level), spreadNum(l.OfferedRate), spreadNum(l.AchievedRate), client,
			spreadNS(l.LatenessP50NS), spreadNS(l.LatenessP99NS), spreadNS(l.ClientQueueP95NS), spreadNS(l.E2ESchedP95NS),
			spreadNS(l.TTFTSchedP99NS), spreadNS(l.TPOTP99NS), fmtCount(l.MaxWaiting),
			eval.FormatShare(float64(l.OnTime) / docs), eval.FormatShare(l.GoodShare()), spreadNum(l.Goodput), s.verdictText(l)})
	}
	return t
}

func interactiveTable(prefix, unit string, s *series) table {
	t := table{ID: prefix + "interactive", Title: "Interactive objective: latency per " + unit,
		Note: "Each figure is the pass's own percentile over its requests (failed ones included: a fast memory failure lowers them), " +
			"then the median over complete repetitions, range in brackets: the figure the verdict judges and stdout prints. " +
			"n is the requests of all repetitions; E2E max is the slowest of them. " +
			"E2E from schedule counts the client's own queue too (coordinated omission).",
		Head: []string{unit, "repetitions", "n", "TTFT median", "TTFT p95", "E2E median", "E2E p95", "E2E max", "E2E p95 from schedule", "client queue p95", "verdict"}}
	for _, l := range s.Levels {
		pooled := s.PooledE2E[l.Level]
		t.Rows = append(t.Rows, []string{eval.LevelName(s.Mode, l.Level), strconv.Itoa(l.Repetitions), strconv.Itoa(pooled.N),
			spreadNS(l.TTFTP50NS), spreadNS(l.TTFTP95NS), spreadNS(l.E2EP50NS), spreadNS(l.E2EP95NS),
			maxText(pooled), spreadNS(l.E2ESchedP95NS), spreadNS(l.ClientQueueP95NS), s.verdictText(l)})
	}
	return t
}

func maxText(d eval.Distribution) string {
	if d.N == 0 {
		return none
	}
	return fmtNS(d.Max)
}

func offlineTable(prefix, unit string, s *series) table {
	t := table{ID: prefix + "offline", Title: "Offline objective: corpus time and throughput per " + unit,
		Note: "Median over complete repetitions, range in brackets. Corpus time is one pass: first send to last answer (a resumed pass: of each segment, summed). " +
			"Documents/hour counts accepted documents only. Prompt, output and total tokens/s divide the pass's tokens (engine usage) by its duration. " +
			s.mfuNote() + " Engine captures: CUDA graphs captured or kernels compiled by the engine during the measured passes " +
			"(engine_graph_captures_total); above 0 the level was not in steady state; – when the engine does not count them.",
		Head: []string{unit, "repetitions", "corpus time", "accepted documents/hour", "prompt tokens/s", "output tokens/s", "total tokens/s", "MFU", "engine captures", "verdict"}}
	for _, l := range s.Levels {
		t.Rows = append(t.Rows, []string{eval.LevelName(s.Mode, l.Level), strconv.Itoa(l.Repetitions),
			spreadNS(l.DurationNS), spreadNum(l.DocsPerHour), spreadNum(l.PromptTokensPerS),
			spreadNum(l.OutputTokensPerS), spreadNum(l.TotalTokensPerS), s.mfu(l), fmtCount(l.EngineCaptures), s.verdictText(l)})
	}
	return t
}

// mfu estimates the model FLOPs utilisation of a level: 2 × parameters ×
// total tokens/s over the card's dense bf16 rate. Attention FLOPs are left
// out, so for long prompts on a small model it is a lower bound.
func (s *series) mfu(l eval.Level) string {
	if s.Params <= 0 || l.TotalTokensPerS.N == 0 {
		return none
	}
	flops := 2 * float64(s.Params) * l.TotalTokensPerS.Median
	if s.CPU {
		return fmt.Sprintf("%.2f GFLOP/s", flops/1e9) // no card's peak to divide by
	}
	if s.PeakTFLOPS <= 0 {
		return none
	}
	return fmt.Sprintf("%.2f%%", 100*flops/(s.PeakTFLOPS*1e12))
}

func (s *series) mfuNote() string {
	switch {
	case s.Params <= 0:
		return "MFU needs the model's parameter count (engine.params) and a card of the catalog: not estimated."
	case s.CPU:
		return fmt.Sprintf("%s, so no utilisation: the MFU column is the model's FLOP rate, 2 × %s parameters × total tokens/s (attention FLOPs left out: a lower bound).",
			cpuEngineLine, numfmt.GroupDigits(s.Params))
	case s.PeakTFLOPS <= 0:
		return fmt.Sprintf("MFU needs a card of the catalog (this run's card: %s): not estimated from its %s parameters.", orNone(s.Card), numfmt.GroupDigits(s.Params))
	}
	return fmt.Sprintf("MFU ≈ 2 × %s parameters × total tokens/s ÷ %.0f TFLOP/s (the card's dense bf16 datasheet rate); attention FLOPs are left out, so it is a lower bound.",
		numfmt.GroupDigits(s.Params), s.PeakTFLOPS)
}

func qualityTable(prefix, unit string, s *series) table {
	t := table{ID: prefix + "quality", Title: "Accepted share and failures by class per " + unit,
		Note: "Counts summed over complete repetitions (the share is pooled); failed documents stay in the denominator.",
		Head: []string{unit, "documents", "accepted", "share", "outputs ≠ baseline", "verdicts changed"}}
	t.Note += fmt.Sprintf(" Outputs ≠ baseline: documents whose raw answer differs from the baseline pass (%s) of the same repetition (batch invariance at temperature 0); verdicts changed: of those, the ones accepted at one level and not at the other.",
		eval.LevelLabel(s.Mode, s.baseLevel()))
	for _, f := range extractbench.Failures {
		t.Head = append(t.Head, string(f))
	}
	t.Head = append(t.Head, "lowest repetition share")
	low := s.lowestShares()
	for _, l := range s.Levels {
		row := []string{eval.LevelName(s.Mode, l.Level), strconv.FormatInt(l.Docs, 10), strconv.FormatInt(l.Accepted, 10), fmtShare(l.Share()),
			fmtCount(l.OutputsChanged), fmtCount(l.VerdictsChanged)}
		for _, f := range extractbench.Failures {
			row = append(row, strconv.FormatInt(l.Failures.Of(f), 10))
		}
		t.Rows = append(t.Rows, append(row, low[l.Level]))
	}
	return t
}

func memoryTable(prefix, unit string, s *series) table {
	t := table{ID: prefix + "memory", Title: "Memory peaks per " + unit,
		Note: "Maximum over repetitions. GiB = 2^30 bytes. Torch allocated and reserved are separate figures, never added. " +
			"– means the engine or card did not report it.",
		Head: []string{unit, "device peak", "torch allocated", "torch reserved", "KV cache peak", "max running (engine)", "preemptions"}}
	for _, l := range s.Levels {
		t.Rows = append(t.Rows, []string{eval.LevelName(s.Mode, l.Level), fmtGiB(l.PeakGPUMemBytes), fmtGiB(l.PeakTorchAllocatedBytes),
			fmtGiB(l.PeakTorchReservedBytes), fmtSharePtr(l.PeakKVUsage), fmtCount(l.MaxRunning), fmtCount(l.Preemptions)})
	}
	return t
}

func classTable(prefix, unit string, s *series) table {
	t := table{ID: prefix + "classes", Title: "Per length class",
		Note: "Long documents (5,500–7,500 tokens) are where a card saturates first.",
		Head: []string{unit, "class", "n", "accepted", "TTFT p95", "E2E median", "E2E p95", "failures"}}
	for _, r := range byClass(s) {
		var fails []string
		for _, f := range extractbench.Failures {
			if n := r.Failures.Of(f); n > 0 {
				fails = append(fails, fmt.Sprintf("%s %d", f, n))
			}
		}
		f := strings.Join(fails, ", ")
		if f == "" {
			f = "none"
		}
		share := 0.0
		if r.Docs > 0 {
			share = float64(r.Accepted) / float64(r.Docs)
		}
		t.Rows = append(t.Rows, []string{eval.LevelName(s.Mode, r.Level), orNone(r.Class), strconv.Itoa(r.Docs), fmtShare(share),
			fmtDist(r.TTFT, 0.95), fmtDist(r.E2E, 0.5), fmtDist(r.E2E, 0.95), f})
	}
	return t
}

func slowTable(prefix, unit string, s *series, texts map[string]string, textNote string) table {
	lv := s.readLevel()
	which := "the recommended"
	if !s.Rec.Usable() {
		which = "the lowest"
	}
	t := table{ID: prefix + "slowest", Title: fmt.Sprintf("Slowest documents at %s (%s level)", eval.LevelLabel(s.Mode, lv), which),
		Note: "Median over repetitions. " + textNote,
		Head: []string{"document", "class", "E2E", "TTFT", "outcome", "why", "excerpt"},
		Code: []bool{false, false, false, false, false, false, true}}
	for _, d := range slowest(s, texts) {
		t.Rows = append(t.Rows, []string{d.DocID, d.LengthClass, fmtNS(float64(d.E2E)), fmtNS(float64(d.TTFT)), d.Outcome, d.Why, d.Excerpt})
	}
	return t
}

func failedTable(prefix string, s *series, texts map[string]string, textNote string) table {
	docs := failed(s, texts)
	t := table{ID: prefix + "failed", Title: fmt.Sprintf("Failed documents (%d)", len(docs)),
		Note: "Every document that failed in at least one complete pass; reason and output are those of its first failure " +
			"(lowest level, then repetition). " + textNote,
		Head: []string{"document", "class", "failed in", "failures", "levels", "reason", "output (or error body) excerpt", "document excerpt"},
		Code: []bool{false, false, false, false, false, false, true, true}}
	for _, d := range docs {
		levels := make([]string, len(d.Levels))
		for i, l := range d.Levels {
			levels[i] = strconv.Itoa(l)
		}
		t.Rows = append(t.Rows, []string{d.DocID, d.LengthClass, fmt.Sprintf("%d of %d passes", d.Failed, d.Passes),
			d.ClassList(), strings.Join(levels, ", "), orNone(d.Reason), d.Output, d.Excerpt})
	}
	return t
}

// decisionLines lists the runner's decisions (retries, reduced batches,
// skipped levels) for one variant, with their reasons.
func decisionLines(d *dataset, variant string) []string {
	var out []string
	for _, e := range d.Decisions {
		if e.Variant != variant && e.Variant != "" {
			continue
		}
		line := e.Kind
		switch {
		case e.FromLevel != 0 && e.ToLevel != 0:
			line += fmt.Sprintf(" %d → %d", e.FromLevel, e.ToLevel)
		case e.FromLevel != 0:
			line += fmt.Sprintf(" level %d", e.FromLevel)
		case e.ToLevel != 0:
			line += fmt.Sprintf(" to level %d", e.ToLevel)
		}
		if e.Reason != "" {
			line += ": " + e.Reason
		}
		out = append(out, fmtUnixMS(e.AtMS)+" "+line)
	}
	return out
}

// confusionTable lists the category confusions of the lowest level (the
// baseline), summed over its complete repetitions: every off-diagonal cell
// of the confusion matrix, most frequent first.
func confusionTable(prefix, unit string, s *series) table {
	t := table{ID: prefix + "confusion", Head: []string{"expected", "predicted", "documents"}}
	var level int
	cells := map[[2]string]int{}
	right, total := 0, 0
	for _, p := range s.Passes {
		if p.CategoryConfusion == "" || !p.Complete() || (level != 0 && p.Level != level) {
			continue
		}
		var m map[string]map[string]int
		if err := json.Unmarshal([]byte(p.CategoryConfusion), &m); err != nil {
			continue
		}
		level = p.Level
		for want, row := range m {
			for got, n := range row {
				total += n
				if want == got {
					right += n
					continue
				}
				cells[[2]string{want, got}] += n
			}
		}
	}
	t.Title = "Category confusions at " + eval.LevelLabel(s.Mode, level)
	if total == 0 {
		t.Title = "Category confusions"
		t.Note = "No confusion matrix recorded (runs before schema version 3)."
		return t
	}
	t.Note = fmt.Sprintf("Summed over complete repetitions: %d of %d categories right; the off-diagonal cells follow ("+
		"null = JSON null, invalid = no usable prediction).", right, total)
	keys := make([][2]string, 0, len(cells))
	for k := range cells {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int {
		if c := cmp.Compare(cells[b], cells[a]); c != 0 {
			return c
		}
		return cmp.Compare(a[0]+"|"+a[1], b[0]+"|"+b[1])
	})
	for _, k := range keys {
		t.Rows = append(t.Rows, []string{k[0], k[1], strconv.Itoa(cells[k])})
	}
	return t
}

// lowestShares is, per level, the lowest accepted share of one complete
// repetition: the pooled share beside it can hide one bad repetition.
func (s *series) lowestShares() map[int]string {
	low := map[int]float64{}
	for _, p := range s.Passes {
		if !p.Complete() {
			continue
		}
		if v, ok := low[p.Level]; !ok || p.Share() < v {
			low[p.Level] = p.Share()
		}
	}
	out := map[int]string{}
	for lv, v := range low {
		out[lv] = fmtShare(v)
	}
	return out
}

// changedTable lists the documents whose answer changed with the load:
// raw output different from the baseline's (level 1, a rate sweep's sync)
// in the same repetition.
func changedTable(prefix, unit string, s *series) table {
	t := table{ID: prefix + "changed", Title: fmt.Sprintf("Answers that changed with the %s (vs %s, same repetition)", unit, eval.LevelLabel(s.Mode, s.baseLevel())),
		Note: "Temperature 0 answers can still differ under load, because batched kernels round differently; " +
			"this separates what load does to answers from what quantisation does (compare).",
		Head: []string{unit, "repetition", "document", "verdict"}}
	for _, c := range s.Changed {
		v := "same verdict"
		if c.VerdictChanged {
			v = "verdict changed"
		}
		t.Rows = append(t.Rows, []string{eval.LevelName(s.Mode, c.Level), strconv.Itoa(c.Repetition), c.DocID, v})
	}
	return t
}
