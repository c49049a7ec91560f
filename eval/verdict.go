package eval

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// DefaultMinBaselineRatio is the part of the baseline's accepted share a
// level must keep to be usable when the protocol sets none (MEASUREMENT.md
// section 8: accepted ≥ 99% of the baseline's). Pushing concurrency must not
// buy throughput with quality.
const DefaultMinBaselineRatio = 0.99

// Acceptance holds the criteria the protocol wrote before the run; it is the
// protocol's and the manifest's "acceptance" object.
type Acceptance struct {
	MinAccepted      float64 `json:"min_accepted"`             // share of documents accepted, 0–1 (0.95 = 95%)
	LatencyP95MS     float64 `json:"latency_p95_ms,omitempty"` // p95 E2E objective in milliseconds; 0 = none
	MinBaselineRatio float64 `json:"min_baseline_ratio"`       // part of the baseline's share to keep; 0 = DefaultMinBaselineRatio
	// MaxPreemptions makes a preemption storm a memory failure (MEASUREMENT.md
	// section 6): a level whose engine preempted more sequences in a pass is
	// not usable. nil = preemptions are recorded, not judged.
	MaxPreemptions *int64 `json:"max_preemptions,omitempty"`

	// Latency objectives (MEASUREMENT.md section 3), in milliseconds; 0 =
	// none. Each is met per request (Record.OnTime) and by the level's
	// percentile. TTFT and E2E count from the scheduled instant, so that a
	// request that waited in the client's queue is late by that wait.
	TTFTP99MS float64 `json:"ttft_p99_ms,omitempty"` // TTFT from t_sched; the level's p99
	TPOTP99MS float64 `json:"tpot_p99_ms,omitempty"` // time per output token after the first; the level's p99
	E2EP95MS  float64 `json:"e2e_p95_ms,omitempty"`  // done − t_sched; the level's p95

	// Objective is which recommendations the protocol asks for (ObjectiveBoth,
	// ObjectiveInteractive, ObjectiveOffline); "" is both. Left out when
	// unset, so that fingerprints of older protocols do not change.
	Objective string `json:"objective,omitempty"`
	// BaselineVariant names the variant every other is compared with, paired
	// on the same documents, in the report and the nightly verdict; "" is the
	// first variant.
	BaselineVariant string `json:"baseline_variant,omitempty"`
	// RequireEquivalent makes run's exit code fail (1) when a variant is not
	// equivalent to the baseline variant at EquivalenceMargin.
	RequireEquivalent bool `json:"require_equivalent,omitempty"`
	// EquivalenceMargin is the paired verdict's margin δ (a share, 0.02 = two
	// points); 0 is compare's default.
	EquivalenceMargin float64 `json:"equivalence_margin,omitempty"`
	// SteadyState is SteadyJudge ("" reads so: a level not in steady state
	// is not usable, cause not_steady) or SteadyRecord (the evidence is
	// recorded and shown, the verdict ignores it, as before the check).
	SteadyState string `json:"steady_state,omitempty"`
}

// JudgesSteadyState reports whether a level not in steady state is judged
// not usable.
func (a Acceptance) JudgesSteadyState() bool { return a.SteadyState != SteadyRecord }

// HasObjectives reports whether any per-request latency objective is set.
func (a Acceptance) HasObjectives() bool {
	return a.TTFTP99MS > 0 || a.TPOTP99MS > 0 || a.E2EP95MS > 0
}

// OnTime reports whether one request meets every per-request objective
// (MEASUREMENT.md section 3): TTFT and E2E from its scheduled instant, TPOT
// as stored. A request that never produced what an objective measures
// (no first token under a TTFT objective, no done instant) is late. With no
// objective set, every request is on time.
func (a Acceptance) OnTime(r *Record) bool {
	if a.TTFTP99MS > 0 && (r.FirstTokenNS == 0 || r.SchedNS == 0 || float64(r.FirstTokenNS-r.SchedNS) > a.TTFTP99MS*1e6) {
		return false
	}
	if a.TPOTP99MS > 0 {
		if t, ok := r.TPOT(); ok && float64(t) > a.TPOTP99MS*1e6 {
			return false
		}
	}
	if a.E2EP95MS > 0 && (r.DoneNS == 0 || r.SchedNS == 0 || float64(r.DoneNS-r.SchedNS) > a.E2EP95MS*1e6) {
		return false
	}
	return true
}

func (a Acceptance) baselineRatio() float64 {
	if a.MinBaselineRatio <= 0 {
		return DefaultMinBaselineRatio
	}
	return a.MinBaselineRatio
}

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
// preemption count of a pass, and the p95 E2E as the median over
// repetitions. baselineShare < 0 means no baseline to keep (the baseline
// itself is being judged).
func Judge(l *Level, baselineShare float64, acc Acceptance) Verdict {
	var v Verdict
	var reasons []string
	add := func(c Cause, format string, args ...any) {
		v.Causes = append(v.Causes, c)
		reasons = append(reasons, fmt.Sprintf(format, args...))
	}
	share := l.Share()
	if n := l.Failures.Of(Memory); n > 0 {
		add(CauseMemory, "%d memory failure(s)", n)
	}
	if acc.MaxPreemptions != nil && l.Preemptions != nil && *l.Preemptions > *acc.MaxPreemptions {
		add(CauseMemory, "preemption storm: %d preemptions > max %d", *l.Preemptions, *acc.MaxPreemptions)
	}
	if share < acc.MinAccepted {
		add(CauseAcceptance, "accepted %s < threshold %s", FormatShare(share), FormatShare(acc.MinAccepted))
	}
	if r := acc.baselineRatio(); baselineShare >= 0 && share < r*baselineShare {
		add(CauseBaseline, "accepted %s < %s of the baseline's %s", FormatShare(share), trimPct(r), FormatShare(baselineShare))
	}
	if good := l.GoodShare(); acc.HasObjectives() && baselineShare >= 0 && good < acc.baselineRatio()*baselineShare && share >= acc.baselineRatio()*baselineShare {
		add(CauseLatency, "accepted on time %s < %s of the baseline's accepted %s", FormatShare(good), trimPct(acc.baselineRatio()), FormatShare(baselineShare))
	}
	if p95 := l.E2EP95NS; acc.LatencyP95MS > 0 && p95.N > 0 && p95.Median > acc.LatencyP95MS*1e6 {
		add(CauseLatency, "p95 E2E %s%s > objective %s", FormatDuration(int64(p95.Median)), p95.Qualifier(),
			FormatDuration(int64(acc.LatencyP95MS*1e6)))
	}
	objective := func(name string, s Spread, ms float64) {
		if ms > 0 && s.N > 0 && s.Median > ms*1e6 {
			add(CauseLatency, "%s %s%s > objective %s", name, FormatDuration(int64(s.Median)), s.Qualifier(), FormatDuration(int64(ms*1e6)))
		}
	}
	objective("p99 TTFT from scheduled", l.TTFTSchedP99NS, acc.TTFTP99MS)
	objective("p99 TPOT", l.TPOTP99NS, acc.TPOTP99MS)
	objective("p95 E2E from scheduled", l.E2ESchedP95NS, acc.E2EP95MS)
	if l.ClientBound > 0 {
		add(CauseClient, "client-bound in %d of %d repetitions (client delay p99 %s%s; bound: its own delay, CPU or failures): the client, not the engine, set the pace",
			l.ClientBound, l.Repetitions, FormatDuration(int64(l.ClientDelayP99NS.Median)), l.ClientDelayP99NS.Qualifier())
	}
	if l.NotSteady != "" && acc.JudgesSteadyState() {
		add(CauseNotSteady, "not in steady state: %s", l.NotSteady)
	}
	if n := l.Failures.Of(Error); 2*n > l.Docs {
		add(CauseFailures, "%d of %d requests failed (error): its latency percentiles and rates are mostly those of the failures", n, l.Docs)
	}
	v.Usable = len(v.Causes) == 0
	v.Reason = strings.Join(reasons, "; ")
	return v
}

// JudgePass judges one pass on its own figures (passes.verdict): the rule of
// Judge over a level made of that pass alone.
func JudgePass(p *Pass, baselineShare float64, acc Acceptance) Verdict {
	var a levelBuilder
	a.add(p)
	l := a.close()
	return Judge(&l, baselineShare, acc)
}

// Recommendation is the verdict on one variant and mode: which level is
// recommended and what broke first. Each level's own verdict is in its
// Level.
type Recommendation struct {
	Variant       string  `json:"variant"`
	Mode          string  `json:"mode"`
	BaselineLevel int     `json:"baseline_level"` // 0 when no complete pass exists
	BaselineShare float64 `json:"baseline_accepted"`
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

// Usable reports whether a level is recommended at all.
func (r Recommendation) Usable() bool { return r.Recommended > 0 }

// recommend applies MEASUREMENT.md section 8 to a series' levels, ascending:
// usable levels are counted upwards from the lowest and stop at the first
// broken one, so that a lucky higher level never hides a break.
func recommend(s *Series, acc Acceptance) {
	r := &s.Recommendation
	r.Variant, r.Mode, r.Objective = s.Variant, s.Mode, acc.ObjectiveOf()
	if len(s.Levels) == 0 {
		r.Why = "no complete pass to judge"
		r.Offline.Asked, r.Offline.Why = acc.Asks(ObjectiveOffline), "no complete pass to judge"
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
	if s.Mode == ModeRate && base.Level == SyncLevel {
		// A rate sweep recommends a rate: the synchronous baseline is its
		// reference, not a step of the walk.
		walk = slices.DeleteFunc(slices.Clone(walk), func(l Level) bool { return l.Level == SyncLevel })
	}
	// An auto sweep's saturation probe is a burst far above capacity that
	// measured the ceiling: shown, never a step to recommend.
	walk = slices.DeleteFunc(slices.Clone(walk), func(l Level) bool { return l.Phase == PhaseProbe })
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

// LevelName writes a level as the pages show it: the number, or in rate
// mode "40/s" (requests per second) and "sync" for the synchronous baseline,
// in context mode the length class ("long").
func LevelName(mode string, level int) string {
	switch {
	case mode == ModeRate && level == SyncLevel:
		return "sync"
	case mode == ModeRate:
		return strconv.Itoa(level) + "/s"
	case mode == ModeContext && LengthClassOf(level) != "":
		return LengthClassOf(level)
	}
	return strconv.Itoa(level)
}

// trimPct formats a ratio as a percentage without trailing zeros ("99%").
func trimPct(r float64) string { return strconv.FormatFloat(r*100, 'f', -1, 64) + "%" }
