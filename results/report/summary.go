package report

import (
	"fmt"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/compare"
)

// card is one variant on the report's first screen: its verdict, its
// paired verdict against the baseline variant, the two objectives'
// recommendations and what failed, each with why. The rest of the page
// (tables, charts, decisions) is below it.
type card struct {
	Variant, Model, GPU string
	State, StateClass   string // results.Outcome's state; its CSS class (pass, fail, error, interrupted, notrun)
	Baseline            string // "baseline accepted 98.0%"
	Paired              kv     // K: the verdict word, V: the figures; K "" for the baseline variant itself
	PairedClass         string // eq, neq, none, base
	Interactive         objectiveLine
	Offline             objectiveLine
	Failed              []string // what failed and why; empty when nothing did
}

// objectiveLine is one objective's answer: the level with its figures,
// and why.
type objectiveLine struct {
	Level, Figures, Why string
}

// stateClass is the CSS class of a variant's state.
func stateClass(state string) string {
	switch state {
	case results.OutcomePass:
		return "pass"
	case results.OutcomeFail:
		return "fail"
	case results.OutcomeError:
		return "error"
	case results.OutcomeInterrupted:
		return "interrupted"
	case results.OutcomeInconclusive:
		return "inconclusive"
	}
	return "notrun"
}

// cards builds the first screen, one card per variant in protocol order.
func cards(m *extractbench.Manifest, outcomes []results.Outcome, paired []compare.Paired, baseline string) []card {
	var out []card
	for _, o := range outcomes {
		c := card{Variant: o.Variant, Model: orNone(o.Model), State: o.State, StateClass: stateClass(o.State), GPU: none}
		if o.PassesDone > 0 {
			c.GPU = orNone(m.Variant(o.Variant).GPU.Name)
		}
		if o.BaselineShare != nil {
			c.Baseline = "baseline accepted " + fmtShare(*o.BaselineShare)
		}
		switch p := compare.PairedOf(paired, o.Variant); {
		case p != nil:
			c.Paired = kv{p.Word() + " to " + p.Baseline, pairedFigures(*p)}
			c.PairedClass = map[string]string{"EQUIVALENT": "eq", "NOT EQUIVALENT": "neq", "INCONCLUSIVE": "neq"}[p.Word()]
			if c.PairedClass == "" {
				c.PairedClass = "none"
			}
		case len(paired) > 0 && o.Variant == baseline:
			c.Paired, c.PairedClass = kv{"", "the baseline variant: every other is paired with it"}, "base"
		}
		c.Interactive, c.Offline = objectiveLines(o)
		c.Failed = failedLines(o)
		out = append(out, c)
	}
	return out
}

// pairedFigures is a paired verdict's figures without its word.
func pairedFigures(p compare.Paired) string {
	if p.NoVerdict != "" {
		return p.NoVerdict
	}
	return fmt.Sprintf("Δ %s points, 90%% interval [%s, %s], %d flips (%d lost, %d won) of %d documents at %s, margin ±%s points",
		signedPoints(p.Delta), signedPoints(p.Lo), signedPoints(p.Hi), p.Flips, p.Lost, p.Gained, p.N, eval.LevelLabel(p.Mode, p.Level),
		strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", p.Margin*100), "0"), "."))
}

func signedPoints(v float64) string { return fmt.Sprintf("%+.1f", v*100) }

// objectiveLines are a variant's interactive and offline answers (its first
// series: the one the verdict reads).
func objectiveLines(o results.Outcome) (interactive, offline objectiveLine) {
	if len(o.Series) == 0 {
		return objectiveLine{Level: none, Why: "nothing measured"}, objectiveLine{Level: none, Why: "nothing measured"}
	}
	s := o.Series[0]
	r := s.Recommendation
	interactive = objectiveLine{Level: "none", Why: r.Interactive()}
	if !r.InteractiveAsked() {
		interactive.Level = "not asked"
	} else if l := s.Recommended(); l != nil {
		interactive.Level = eval.LevelLabel(s.Mode, l.Level)
		interactive.Figures = fmt.Sprintf("p95 E2E %s, %s accepted documents/hour", spreadNS(l.E2EP95NS), spreadNum(l.DocsPerHour))
	}
	off := r.Offline
	offline = objectiveLine{Level: "none", Why: off.Why}
	switch {
	case !off.Asked:
		offline.Level = "not asked"
	case off.Level > 0:
		offline.Level = eval.LevelLabel(s.Mode, off.Level)
		offline.Figures = fmt.Sprintf("%s accepted documents/hour; corpus of %d in %s", levelRate(&s, off.Level, off.DocsPerHour), off.Docs, fmtNS(float64(off.CorpusTimeNS)))
		if off.MarginLevel != off.Level {
			offline.Figures += fmt.Sprintf("; with margin %s: %s/h, %s", eval.LevelName(s.Mode, off.MarginLevel), levelRate(&s, off.MarginLevel, off.MarginDocsPerHour), fmtNS(float64(off.MarginCorpusTimeNS)))
		}
		offline.Why = "the most accepted documents per hour under the quality gate, no memory failure"
		if off.StoppedAt > 0 {
			offline.Why += fmt.Sprintf("; %s failed the gate", eval.LevelLabel(s.Mode, off.StoppedAt))
		}
	}
	if interactive.Level != "none" && interactive.Level != "not asked" {
		interactive.Why = interactiveWhy(r)
	}
	return interactive, offline
}

// interactiveWhy is the interactive recommendation's reason in a few words;
// the level that broke has its full reason under "failed".
func interactiveWhy(r eval.Recommendation) string {
	n := func(l int) string { return eval.LevelName(r.Mode, l) }
	var s string
	switch {
	case r.Recommended == r.HighestUsable:
		s = "the lowest level, no margin step below it"
	default:
		s = "one step below " + n(r.HighestUsable) + ", the highest usable"
	}
	if r.FirstBroken > 0 {
		causes := make([]string, len(r.BrokeBy))
		for i, c := range r.BrokeBy {
			causes[i] = string(c)
		}
		s += fmt.Sprintf("; %s broke (%s)", eval.LevelLabel(r.Mode, r.FirstBroken), strings.Join(causes, ", "))
	} else {
		s += "; nothing broke, the ceiling was not reached"
	}
	if r.Partial {
		s = "PARTIAL sweep: " + s
	}
	return s
}

// failedLines say what failed in a variant and why: the state's reason when
// it is not PASS, the failed documents at the baseline by class, and the
// first level that broke.
func failedLines(o results.Outcome) []string {
	var out []string
	if o.State != results.OutcomePass && o.Reason != "" {
		out = append(out, o.Reason)
	}
	if len(o.Series) == 0 {
		return out
	}
	s := o.Series[0]
	if b := s.Baseline(); b != nil {
		var classes []string
		var n int64
		for _, f := range extractbench.Failures {
			if k := b.Failures.Of(f); k > 0 {
				classes = append(classes, fmt.Sprintf("%s %d", f, k))
				n += k
			}
		}
		if n > 0 {
			out = append(out, fmt.Sprintf("at the baseline (%s), %d of %d documents failed: %s", eval.LevelLabel(s.Mode, b.Level), n, b.Docs, strings.Join(classes, ", ")))
		}
	}
	if r := s.Recommendation; r.FirstBroken > 0 && o.State == results.OutcomePass {
		out = append(out, fmt.Sprintf("%s broke: %s", eval.LevelLabel(s.Mode, r.FirstBroken), r.BrokeReason))
	}
	return out
}

// pairedHeadline is the headline's paired part: each variant's verdict
// against the baseline variant, "" when the run has one variant.
func pairedHeadline(paired []compare.Paired) string {
	if len(paired) == 0 {
		return ""
	}
	parts := make([]string, len(paired))
	for i, p := range paired {
		if p.NoVerdict != "" {
			parts[i] = p.Variant + " NO VERDICT"
			continue
		}
		parts[i] = fmt.Sprintf("%s %s (Δ %s points, [%s, %s], %d flips)", p.Variant, p.Word(), signedPoints(p.Delta), signedPoints(p.Lo), signedPoints(p.Hi), p.Flips)
	}
	return "Paired against " + paired[0].Baseline + " on the same documents: " + strings.Join(parts, "; ") + "."
}

// levelRate prints a level's accepted documents/hour with the digits its
// repetitions support; median alone when the level is not in the series.
func levelRate(s *eval.Series, level int, median float64) string {
	if l := s.Level(level); l != nil && l.DocsPerHour.N > 0 {
		return l.DocsPerHour.Rate()
	}
	return eval.FormatRate(median)
}
