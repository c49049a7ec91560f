package eval

import (
	"fmt"

	"github.com/extractbench/extractbench"
)

// Offline is the offline objective's answer for one series: the level
// that maximises accepted documents per hour (each pass's figure, median
// over repetitions, as every table shows it) among the levels that pass the
// quality gate with no memory failure, walked upwards from the lowest and
// stopped at the first that does not (latency does not count: nobody waits
// on a single document). CorpusTimeNS is the time one pass over the corpus
// took there (the pass duration, median over repetitions): the time to
// obtain every expected output of the corpus once. The margin level is one
// step below, as the interactive recommendation steps back.
type Offline struct {
	// Asked is false when the protocol asked for the interactive objective
	// only; Why then says so and no level is chosen.
	Asked        bool    `json:"asked"`
	Level        int     `json:"level"` // 0 when no level passed the gate
	DocsPerHour  float64 `json:"accepted_docs_per_hour"`
	CorpusTimeNS int64   `json:"corpus_time_ns"`
	Docs         int64   `json:"corpus_docs"` // documents of one pass at Level
	// MarginLevel is Level one step back in the walk, for margin (Level
	// itself when it is the lowest), with its figures.
	MarginLevel        int     `json:"margin_level"`
	MarginDocsPerHour  float64 `json:"margin_accepted_docs_per_hour"`
	MarginCorpusTimeNS int64   `json:"margin_corpus_time_ns"`
	// StoppedAt is the first level of the walk the gate refused (0 none),
	// with why.
	StoppedAt     int    `json:"stopped_at"`
	StoppedReason string `json:"stopped_reason,omitempty"`
	Why           string `json:"why"`
}

// offlineEligible reports whether a level passes the offline gate: usable,
// or not usable for latency alone.
func offlineEligible(v Verdict) bool {
	for _, c := range v.Causes {
		if c != CauseLatency {
			return false
		}
	}
	return true
}

// recommendOffline fills r.Offline from a series' judged levels; walk is
// the levels the interactive walk considers (no synchronous baseline, no
// probe), ascending.
func recommendOffline(r *Recommendation, mode extractbench.Mode, walk []Level, acc extractbench.Acceptance) {
	o := &r.Offline
	if !acc.Asks(extractbench.ObjectiveOffline) {
		o.Why = "not asked: the protocol's objective is " + extractbench.ObjectiveInteractive
		return
	}
	o.Asked = true
	if mode == extractbench.ModeContext {
		o.Why = "not applicable: a context sweep's levels are length classes, not a load to choose"
		return
	}
	var kept []Level
	for _, l := range walk {
		if !offlineEligible(l.Verdict) {
			o.StoppedAt, o.StoppedReason = l.Level, l.Verdict.Reason
			break
		}
		kept = append(kept, l)
	}
	best := -1
	for i, l := range kept {
		if l.DocsPerHour.N > 0 && (best < 0 || l.DocsPerHour.Median > kept[best].DocsPerHour.Median) {
			best = i
		}
	}
	if best < 0 {
		o.Why = o.whyNone(mode)
		return
	}
	b := kept[best]
	o.Level, o.DocsPerHour, o.CorpusTimeNS = b.Level, b.DocsPerHour.Median, int64(b.DurationNS.Median)
	o.Docs = b.Docs / int64(max(b.Repetitions, 1))
	m := b
	if best > 0 {
		m = kept[best-1]
	}
	o.MarginLevel, o.MarginDocsPerHour, o.MarginCorpusTimeNS = m.Level, m.DocsPerHour.Median, int64(m.DurationNS.Median)
	o.Why = o.why(mode, best == 0, b.DocsPerHour, m.DocsPerHour)
}

func (o *Offline) whyNone(mode extractbench.Mode) string {
	if o.StoppedAt != 0 {
		return fmt.Sprintf("no level passed the quality gate: %s %s already failed it (%s)", unitOf(mode), LevelName(mode, o.StoppedAt), o.StoppedReason)
	}
	return "no level measured accepted documents per hour"
}

// why says what was chosen; dph and margin are the two levels' documents/hour
// over repetitions, printed with the digits their ranges support.
func (o *Offline) why(mode extractbench.Mode, lowest bool, dph, margin Spread) string {
	n := func(l int) string { return LevelName(mode, l) }
	s := fmt.Sprintf("%s %s: most accepted documents/hour (%s) under the quality gate with no memory failure; corpus of %d documents in %s",
		unitOf(mode), n(o.Level), dph.Rate(), o.Docs, FormatDuration(o.CorpusTimeNS))
	if lowest {
		s += "; no margin step below it"
	} else {
		s += fmt.Sprintf("; with margin, %s %s: %s/h, corpus in %s", unitOf(mode), n(o.MarginLevel), margin.Rate(), FormatDuration(o.MarginCorpusTimeNS))
	}
	if o.StoppedAt != 0 {
		s += fmt.Sprintf("; %s %s failed the gate (%s)", unitOf(mode), n(o.StoppedAt), o.StoppedReason)
	}
	return s
}

// Interactive is the interactive objective's sentence: Why, or that the
// protocol did not ask for it.
func (r Recommendation) Interactive() string {
	if r.Objective == extractbench.ObjectiveOffline {
		return "not asked: the protocol's objective is " + extractbench.ObjectiveOffline
	}
	return r.Why
}

// Headline is the sentence of the objective the protocol asked for first:
// the interactive one, or the offline one when only it was asked.
func (r Recommendation) Headline() string {
	if !r.InteractiveAsked() {
		return r.Offline.Why
	}
	return r.Why
}

// Reason is Why, and OfflineReason Offline.Why: as methods, a plan carries
// the recommendation without importing eval (sizing.Recommendation).
func (r Recommendation) Reason() string { return r.Why }

// OfflineReason is the offline objective's sentence, Offline.Why.
func (r Recommendation) OfflineReason() string { return r.Offline.Why }

// InteractiveAsked reports whether the protocol asked for the interactive
// objective.
func (r Recommendation) InteractiveAsked() bool { return r.Objective != extractbench.ObjectiveOffline }

func unitOf(mode extractbench.Mode) string {
	if mode == "" {
		return "level"
	}
	return string(mode)
}
