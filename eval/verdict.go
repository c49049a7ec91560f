package eval

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/extractbench/extractbench"
)

// Cause names one reason a level is not usable.
type Cause string

// The causes of MEASUREMENT.md section 8, in the order a verdict lists them.
const (
	CauseMemory     Cause = "memory"       // at least one memory failure, or a preemption storm
	CauseAcceptance Cause = "acceptance"   // accepted share below the threshold
	CauseBaseline   Cause = "baseline"     // accepted share below 99% of the baseline's
	CauseLatency    Cause = "latency"      // p95 E2E, or a latency objective's percentile, above the objective
	CauseClient     Cause = "client_bound" // the client could not keep the schedule: the figures are the client's, not the engine's
	// CauseFailures: most of the level's requests failed in the error class
	// (refused, 429, reset…). Its latency percentiles and rates are then
	// mostly the failures' (a 429 comes back in a millisecond), not the
	// time the engine takes to serve a document.
	CauseFailures Cause = "failures"
	// CauseNotSteady: the level's passes were not in steady state
	// (eval/steady.go): its figures are those of an engine still warming.
	CauseNotSteady Cause = "not_steady"
)

// The verdict words stored in passes.verdict and shown in every table.
const (
	VerdictUsable    = "usable"
	VerdictNotUsable = "not_usable"
)

// Verdict is whether a level (or one pass) is usable and, when not, why.
type Verdict struct {
	Usable bool    `json:"usable"`
	Causes []Cause `json:"causes,omitempty"`
	Reason string  `json:"reason,omitempty"` // the causes with the figures they rest on, "; "-separated
}

// Word is VerdictUsable or VerdictNotUsable.
func (v Verdict) Word() string {
	if v.Usable {
		return VerdictUsable
	}
	return VerdictNotUsable
}

// Judge applies the usable-level rule of MEASUREMENT.md section 8 to the
// figures of one level, exactly as the tables show them: memory failures
// summed over its repetitions, the pooled accepted share, the highest
// preemption count of a pass, and the p95 E2E (and each latency objective's
// percentile) exceeded only when most repetitions exceed it (Spread.MostExceed:
// the median of three, both of two), so that one noisy repetition does not
// flip a level. baselineShare < 0 means no baseline to keep (the baseline
// itself is being judged).
func Judge(l *Level, baselineShare float64, acc extractbench.Acceptance) Verdict {
	var v Verdict
	var reasons []string
	add := func(c Cause, format string, args ...any) {
		v.Causes = append(v.Causes, c)
		reasons = append(reasons, fmt.Sprintf(format, args...))
	}
	share := l.Share()
	if n := l.Failures.Of(extractbench.Memory); n > 0 {
		add(CauseMemory, "%d memory failure(s)", n)
	}
	if acc.MaxPreemptions != nil && l.Preemptions != nil && *l.Preemptions > *acc.MaxPreemptions {
		add(CauseMemory, "preemption storm: %d preemptions > max %d", *l.Preemptions, *acc.MaxPreemptions)
	}
	if share < acc.MinAccepted {
		add(CauseAcceptance, "accepted %s < threshold %s", FormatShare(share), FormatShare(acc.MinAccepted))
	}
	if r := acc.BaselineRatio(); baselineShare >= 0 && share < r*baselineShare {
		add(CauseBaseline, "accepted %s < %s of the baseline's %s", FormatShare(share), trimPct(r), FormatShare(baselineShare))
	}
	if good := l.GoodShare(); acc.HasObjectives() && baselineShare >= 0 && good < acc.BaselineRatio()*baselineShare && share >= acc.BaselineRatio()*baselineShare {
		add(CauseLatency, "accepted on time %s < %s of the baseline's accepted %s", FormatShare(good), trimPct(acc.BaselineRatio()), FormatShare(baselineShare))
	}
	if p95 := l.E2EP95NS; acc.LatencyP95MS > 0 && p95.MostExceed(acc.LatencyP95MS*1e6) {
		add(CauseLatency, "p95 E2E %s%s > objective %s", p95.Duration(), p95.Qualifier(),
			FormatDuration(int64(acc.LatencyP95MS*1e6)))
	}
	objective := func(name string, s Spread, ms float64) {
		if ms > 0 && s.MostExceed(ms*1e6) {
			add(CauseLatency, "%s %s%s > objective %s", name, s.Duration(), s.Qualifier(), FormatDuration(int64(ms*1e6)))
		}
	}
	objective("p99 TTFT from scheduled", l.TTFTSchedP99NS, acc.TTFTP99MS)
	objective("p99 TPOT", l.TPOTP99NS, acc.TPOTP99MS)
	objective("p95 E2E from scheduled", l.E2ESchedP95NS, acc.E2EP95MS)
	if l.ClientBound > 0 {
		add(CauseClient, "client-bound in %d of %d repetitions (client delay p99 %s%s; bound: its own delay, CPU or failures): the client, not the engine, set the pace",
			l.ClientBound, l.Repetitions, l.ClientDelayP99NS.Duration(), l.ClientDelayP99NS.Qualifier())
	}
	if l.NotSteady != "" && acc.JudgesSteadyState() {
		// The evidence is the finding's own (NotSteadyFinding), printed once
		// per page; the verdict, which every objective's line repeats, names it.
		add(CauseNotSteady, "%s", NotSteadyRef)
	}
	if n := l.Failures.Of(extractbench.Error); 2*n > l.Docs {
		add(CauseFailures, "%d of %d requests failed (error): its latency percentiles and rates are mostly those of the failures", n, l.Docs)
	}
	v.Usable = len(v.Causes) == 0
	v.Reason = strings.Join(reasons, "; ")
	return v
}

// NotSteadyRef is how a verdict names a not_steady level: briefly, as its
// evidence is printed once, with the NOT STEADY finding (NotSteadyFinding).
const NotSteadyRef = "not in steady state (evidence: its NOT STEADY finding)"

// NotSteadyFinding is the one sentence every page prints, once, for a level
// its steady-state check flagged (eval/steady.go), with the evidence; ""
// when the level was steady.
func NotSteadyFinding(l *Level) string {
	if l.NotSteady == "" {
		return ""
	}
	return fmt.Sprintf("NOT STEADY at level %s: %s", LevelName(l.Mode, l.Level), l.NotSteady)
}

// JudgePass judges one pass on its own figures (passes.verdict): the rule of
// Judge over a level made of that pass alone.
func JudgePass(p *extractbench.Pass, baselineShare float64, acc extractbench.Acceptance) Verdict {
	var a levelBuilder
	a.add(p)
	l := a.close()
	return Judge(&l, baselineShare, acc)
}

// Recommendation is the verdict on one variant and mode: which level is
// recommended and what broke first. Each level's own verdict is in its
// Level.
type Recommendation struct {
	Variant       string            `json:"variant"`
	Mode          extractbench.Mode `json:"mode"`
	BaselineLevel int               `json:"baseline_level"` // 0 when no complete pass exists
	BaselineShare float64           `json:"baseline_accepted"`
	// HighestUsable is the highest level below the first broken one whose
	// levels are all usable; 0 when the first level already broke.
	HighestUsable int `json:"highest_usable"`
	// Recommended is HighestUsable one step back in the sweep, for margin;
	// HighestUsable itself when it is the lowest level; 0 when none is usable.
	Recommended int `json:"recommended"`
	// FirstBroken is the lowest level that was not usable; 0 when none broke.
	FirstBroken int     `json:"first_broken"`
	BrokeBy     []Cause `json:"broke_by,omitempty"`
	BrokeReason string  `json:"broke_reason,omitempty"`
	// Partial is set when planned levels or repetitions were not measured
	// (an interrupted or failed sweep): the recommendation rests on what was.
	Partial bool     `json:"partial"`
	Missing []string `json:"missing,omitempty"` // what was planned and not measured, e.g. "level 64 (0 of 3 repetitions)"
	Why     string   `json:"why"`               // one sentence for the selection sheet: the interactive objective
	// Objective is what the protocol asked for (ObjectiveBoth, …); the
	// fields above are the interactive answer, Offline the offline one.
	Objective string  `json:"objective"`
	Offline   Offline `json:"offline"`
}

// Usable reports whether a level is recommended at all. Recommended is 0
// when none is, which in a rate sweep is also the sync baseline's level:
// ask Usable or Is, never compare Recommended with a level.
func (r Recommendation) Usable() bool { return r.Recommended > 0 }

// Is reports whether level is the recommended (interactive) level. A rate
// sweep's sync baseline never is: it is the reference, not a rate.
func (r Recommendation) Is(level int) bool { return r.Usable() && r.Recommended == level }

// recommend applies MEASUREMENT.md section 8 to a series' levels, ascending:
// usable levels are counted upwards from the lowest and stop at the first
// broken one, so that a lucky higher level never hides a break.
func recommend(s *Series, acc extractbench.Acceptance) {
	r := &s.Recommendation
	r.Variant, r.Mode, r.Objective = s.Variant, s.Mode, acc.ObjectiveOf()
	if len(s.Levels) == 0 {
		r.Why = "no complete pass to judge"
		r.Offline.Asked, r.Offline.Why = acc.Asks(extractbench.ObjectiveOffline), "no complete pass to judge"
		return
	}
	base := s.Baseline()
	r.BaselineLevel, r.BaselineShare = base.Level, base.Share()
	for i := range s.Levels {
		l := &s.Levels[i]
		bs := r.BaselineShare
		if l == base {
			bs = -1 // the baseline is the reference, not judged against itself
		}
		l.Verdict = Judge(l, bs, acc)
	}
	walk := s.Levels
	if s.Mode == extractbench.ModeRate && base.Level == extractbench.SyncLevel {
		// A rate sweep recommends a rate: the synchronous baseline is its
		// reference, not a step of the walk.
		walk = slices.DeleteFunc(slices.Clone(walk), func(l Level) bool { return l.Level == extractbench.SyncLevel })
	}
	// An auto sweep's saturation probe is a burst far above capacity that
	// measured the ceiling: shown, never a step to recommend.
	walk = slices.DeleteFunc(slices.Clone(walk), func(l Level) bool { return l.Phase == extractbench.PhaseProbe })
	for i, l := range walk {
		if r.FirstBroken != 0 {
			break
		}
		if !l.Verdict.Usable {
			r.FirstBroken, r.BrokeBy, r.BrokeReason = l.Level, l.Verdict.Causes, l.Verdict.Reason
			break
		}
		r.HighestUsable, r.Recommended = l.Level, l.Level
		if i > 0 {
			r.Recommended = walk[i-1].Level
		}
	}
	r.Why = r.why()
	recommendOffline(r, s.Mode, walk, acc)
}

func (r Recommendation) why() string {
	unit := r.Mode
	if unit == "" {
		unit = "level"
	}
	n := func(level int) string { return LevelName(r.Mode, level) }
	var s string
	switch {
	case r.HighestUsable == 0:
		s = fmt.Sprintf("no usable %s: %s %s already broke (%s)", unit, unit, n(r.FirstBroken), r.BrokeReason)
	case r.FirstBroken == 0 && r.Recommended == r.HighestUsable:
		s = fmt.Sprintf("%s %s: the only level measured, usable, with no margin step below it", unit, n(r.Recommended))
	case r.FirstBroken == 0:
		s = fmt.Sprintf("%s %s, one step below %s, the highest measured; nothing broke, so the ceiling was not reached",
			unit, n(r.Recommended), n(r.HighestUsable))
	case r.Recommended == r.HighestUsable:
		s = fmt.Sprintf("%s %s, the lowest level, with no margin step below it; %s %s broke (%s)",
			unit, n(r.Recommended), unit, n(r.FirstBroken), r.BrokeReason)
	default:
		s = fmt.Sprintf("%s %s, one step below %s, the highest usable; %s %s broke (%s)",
			unit, n(r.Recommended), n(r.HighestUsable), unit, n(r.FirstBroken), r.BrokeReason)
	}
	if r.Partial {
		s = "PARTIAL sweep (" + strings.Join(r.Missing, ", ") + " not measured): " + s
	}
	return s
}

// trimPct formats a ratio as a percentage without trailing zeros ("99%").
func trimPct(r float64) string { return strconv.FormatFloat(r*100, 'f', -1, 64) + "%" }
