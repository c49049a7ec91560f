package eval

import (
	"fmt"
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
	CauseMemory     Cause = "memory"     // at least one memory failure, or a preemption storm
	CauseAcceptance Cause = "acceptance" // accepted share below the threshold
	CauseBaseline   Cause = "baseline"   // accepted share below 99% of the baseline's
	CauseLatency    Cause = "latency"    // p95 E2E above the objective
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
	if p95 := l.E2EP95NS; acc.LatencyP95MS > 0 && p95.N > 0 && p95.Median > acc.LatencyP95MS*1e6 {
		add(CauseLatency, "p95 E2E %s%s > objective %s", FormatDuration(int64(p95.Median)), p95.Qualifier(),
			FormatDuration(int64(acc.LatencyP95MS*1e6)))
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
	Why     string   `json:"why"`               // one sentence for the selection sheet
}

// Usable reports whether a level is recommended at all.
func (r Recommendation) Usable() bool { return r.Recommended > 0 }

// recommend applies MEASUREMENT.md section 8 to a series' levels, ascending:
// usable levels are counted upwards from the lowest and stop at the first
// broken one, so that a lucky higher level never hides a break.
func recommend(s *Series, acc Acceptance) {
	r := &s.Recommendation
	r.Variant, r.Mode = s.Variant, s.Mode
	if len(s.Levels) == 0 {
		r.Why = "no complete pass to judge"
		return
	}
	base := &s.Levels[0]
	for i := range s.Levels {
		if s.Levels[i].Phase == PhaseBaseline {
			base = &s.Levels[i]
			break
		}
	}
	r.BaselineLevel, r.BaselineShare = base.Level, base.Share()
	for i := range s.Levels {
		l := &s.Levels[i]
		bs := r.BaselineShare
		if l == base {
			bs = -1 // the baseline is the reference, not judged against itself
		}
		l.Verdict = Judge(l, bs, acc)
	}
	for i, l := range s.Levels {
		if r.FirstBroken != 0 {
			break
		}
		if !l.Verdict.Usable {
			r.FirstBroken, r.BrokeBy, r.BrokeReason = l.Level, l.Verdict.Causes, l.Verdict.Reason
			break
		}
		r.HighestUsable, r.Recommended = l.Level, l.Level
		if i > 0 {
			r.Recommended = s.Levels[i-1].Level
		}
	}
	r.Why = r.why()
}

func (r Recommendation) why() string {
	unit := r.Mode
	if unit == "" {
		unit = "level"
	}
	var s string
	switch {
	case r.HighestUsable == 0:
		s = fmt.Sprintf("no usable %s: %s %d already broke (%s)", unit, unit, r.FirstBroken, r.BrokeReason)
	case r.FirstBroken == 0 && r.Recommended == r.HighestUsable:
		s = fmt.Sprintf("%s %d: the only level measured, usable, with no margin step below it", unit, r.Recommended)
	case r.FirstBroken == 0:
		s = fmt.Sprintf("%s %d, one step below %d, the highest measured; nothing broke, so the ceiling was not reached",
			unit, r.Recommended, r.HighestUsable)
	case r.Recommended == r.HighestUsable:
		s = fmt.Sprintf("%s %d, the lowest level, with no margin step below it; %s %d broke (%s)",
			unit, r.Recommended, unit, r.FirstBroken, r.BrokeReason)
	default:
		s = fmt.Sprintf("%s %d, one step below %d, the highest usable; %s %d broke (%s)",
			unit, r.Recommended, r.HighestUsable, unit, r.FirstBroken, r.BrokeReason)
	}
	if r.Partial {
		s = "PARTIAL sweep (" + strings.Join(r.Missing, ", ") + " not measured): " + s
	}
	return s
}

// trimPct formats a ratio as a percentage without trailing zeros ("99%").
func trimPct(r float64) string { return strconv.FormatFloat(r*100, 'f', -1, 64) + "%" }
