package sizing

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultMinBaselineRatio is the part of the baseline's accepted share a
// level must keep to be usable when the protocol sets none (MEASUREMENT.md
// section 8: accepted ≥ 99% of the baseline's). Pushing concurrency must not
// buy throughput with quality.
const DefaultMinBaselineRatio = 0.99

// Acceptance holds the criteria the protocol wrote before the run; they are
// the manifest's "acceptance" object.
type Acceptance struct {
	MinAccepted      float64 `json:"min_accepted"`       // share of documents accepted, 0–1 (0.95 = 95%)
	LatencyP95MS     float64 `json:"latency_p95_ms"`     // p95 E2E objective in milliseconds; 0 = none
	MinBaselineRatio float64 `json:"min_baseline_ratio"` // part of the baseline's share to keep; 0 = DefaultMinBaselineRatio
	// MaxPreemptions makes a preemption storm a memory failure (MEASUREMENT.md
	// section 6): a pass whose engine preempted more sequences is not usable.
	// nil = preemptions are recorded, not judged.
	MaxPreemptions *int64 `json:"max_preemptions,omitempty"`
}

func (a Acceptance) baselineRatio() float64 {
	if a.MinBaselineRatio <= 0 {
		return DefaultMinBaselineRatio
	}
	return a.MinBaselineRatio
}

// PassFigures are the figures of one pass that a verdict reads: the pass key
// and the columns of the passes table of the same names.
type PassFigures struct {
	Variant            string `json:"variant"`
	Mode               string `json:"mode"` // concurrency | batch
	Level              int    `json:"level"`
	Repetition         int    `json:"repetition"`
	Phase              string `json:"phase"`  // baseline | sweep; "" when unknown
	Status             string `json:"status"` // complete | interrupted; "" is read as complete
	Docs               int    `json:"docs"`
	Accepted           int    `json:"accepted"`
	FailuresMemory     int    `json:"failures_memory"`
	FailuresTruncation int    `json:"failures_truncation"`
	FailuresFormat     int    `json:"failures_format"`
	FailuresQuality    int    `json:"failures_quality"`
	FailuresError      int    `json:"failures_error"`
	E2EP95NS           int64  `json:"e2e_p95_ns"`            // 0 = unknown
	Preemptions        *int64 `json:"preemptions,omitempty"` // engine preemptions during the pass; nil = unknown
}

// Share is the accepted share of the pass; failed documents stay in the
// denominator. A pass with no documents has share 0.
func (p PassFigures) Share() float64 {
	if p.Docs <= 0 {
		return 0
	}
	return float64(p.Accepted) / float64(p.Docs)
}

func (p PassFigures) complete() bool { return p.Status == "" || p.Status == "complete" }

// Cause names one reason a level is not usable.
type Cause string

// The causes of MEASUREMENT.md section 8, in the order a verdict lists them.
const (
	CauseMemory     Cause = "memory"     // at least one memory failure, or a preemption storm
	CauseAcceptance Cause = "acceptance" // accepted share below the threshold
	CauseBaseline   Cause = "baseline"   // accepted share below 99% of the baseline's
	CauseLatency    Cause = "latency"    // p95 E2E above the objective
)

// PassVerdict is whether one pass is usable and, when not, why.
type PassVerdict struct {
	Usable bool
	Causes []Cause
	Reason string // the causes with their figures, "; "-separated; "" when usable
}

// JudgePass applies the usable-level rule to one pass against the baseline's
// accepted share (pass baselineShare < 0 when there is no baseline yet, e.g.
// while the baseline itself is judged). The runner stores the result in
// passes.verdict and passes.verdict_reason.
func JudgePass(p PassFigures, baselineShare float64, acc Acceptance) PassVerdict {
	var v PassVerdict
	var reasons []string
	add := func(c Cause, format string, args ...any) {
		v.Causes = append(v.Causes, c)
		reasons = append(reasons, fmt.Sprintf(format, args...))
	}
	share := p.Share()
	if p.FailuresMemory > 0 {
		add(CauseMemory, "%d memory failure(s)", p.FailuresMemory)
	}
	if acc.MaxPreemptions != nil && p.Preemptions != nil && *p.Preemptions > *acc.MaxPreemptions {
		add(CauseMemory, "preemption storm: %d preemptions > max %d", *p.Preemptions, *acc.MaxPreemptions)
	}
	if share < acc.MinAccepted {
		add(CauseAcceptance, "accepted %s < threshold %s", pct(share), pct(acc.MinAccepted))
	}
	if r := acc.baselineRatio(); baselineShare >= 0 && share < r*baselineShare {
		add(CauseBaseline, "accepted %s < %s of the baseline's %s", pct(share), trimPct(r), pct(baselineShare))
	}
	if acc.LatencyP95MS > 0 && p.E2EP95NS > 0 && float64(p.E2EP95NS) > acc.LatencyP95MS*1e6 {
		add(CauseLatency, "p95 E2E %s > objective %s",
			fmtDuration(p.E2EP95NS), fmtDuration(int64(acc.LatencyP95MS*1e6)))
	}
	v.Usable = len(v.Causes) == 0
	v.Reason = strings.Join(reasons, "; ")
	return v
}

// LevelVerdict is the verdict on one level over its complete repetitions: a
// level is usable only when every repetition is.
type LevelVerdict struct {
	Level       int     `json:"level"`
	Repetitions int     `json:"repetitions"`  // complete passes judged
	MinShare    float64 `json:"min_accepted"` // lowest accepted share over the repetitions
	MaxE2EP95NS int64   `json:"max_e2e_p95_ns"`
	Usable      bool    `json:"usable"`
	Causes      []Cause `json:"causes,omitempty"`
	Reason      string  `json:"reason,omitempty"` // of the first repetition that failed, with its number
}

// Recommendation is the verdict on one variant and mode: which levels are
// usable, which is recommended and what broke first.
type Recommendation struct {
	Variant       string         `json:"variant"`
	Mode          string         `json:"mode"`
	BaselineLevel int            `json:"baseline_level"` // 0 when no complete pass exists
	BaselineShare float64        `json:"baseline_accepted"`
	Levels        []LevelVerdict `json:"levels"` // ascending
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
	Why         string  `json:"why"` // one sentence for the selection sheet
}

// Usable reports whether a level is recommended at all.
func (r Recommendation) Usable() bool { return r.Recommended > 0 }

// Level returns the verdict on one level, or false when it was not measured.
func (r Recommendation) Level(level int) (LevelVerdict, bool) {
	for _, l := range r.Levels {
		if l.Level == level {
			return l, true
		}
	}
	return LevelVerdict{}, false
}

// Recommend applies MEASUREMENT.md section 8 to the passes of one variant and
// mode (passes of others are ignored; pass them all to RecommendAll). The
// baseline is the complete pass(es) of phase "baseline", else of the lowest
// level; its share is the mean over repetitions. Interrupted passes are left
// out. Usable levels are counted upwards from the lowest and stop at the
// first broken one, so that a lucky higher level never hides a break.
func Recommend(passes []PassFigures, acc Acceptance) Recommendation {
	var r Recommendation
	var ps []PassFigures
	if len(passes) > 0 {
		r.Variant, r.Mode = passes[0].Variant, passes[0].Mode
	}
	for _, p := range passes {
		if p.Variant != r.Variant || p.Mode != r.Mode || !p.complete() {
			continue
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		r.Why = "no complete pass to judge"
		return r
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Level != ps[j].Level {
			return ps[i].Level < ps[j].Level
		}
		return ps[i].Repetition < ps[j].Repetition
	})

	r.BaselineLevel, r.BaselineShare = baseline(ps)
	byLevel := map[int]*LevelVerdict{}
	var order []int
	for _, p := range ps {
		lv := byLevel[p.Level]
		if lv == nil {
			lv = &LevelVerdict{Level: p.Level, Usable: true, MinShare: p.Share()}
			byLevel[p.Level] = lv
			order = append(order, p.Level)
		}
		lv.Repetitions++
		lv.MinShare = min(lv.MinShare, p.Share())
		lv.MaxE2EP95NS = max(lv.MaxE2EP95NS, p.E2EP95NS)
		base := r.BaselineShare
		if p.Level == r.BaselineLevel {
			base = -1 // the baseline is the reference, not judged against itself
		}
		v := JudgePass(p, base, acc)
		if !v.Usable && lv.Usable {
			lv.Usable = false
			lv.Causes = v.Causes
			lv.Reason = v.Reason
			if lv.Repetitions > 1 || p.Repetition > 1 {
				lv.Reason = fmt.Sprintf("repetition %d: %s", p.Repetition, v.Reason)
			}
		}
	}
	for i, level := range order {
		lv := *byLevel[level]
		r.Levels = append(r.Levels, lv)
		if r.FirstBroken != 0 {
			continue
		}
		if !lv.Usable {
			r.FirstBroken, r.BrokeBy, r.BrokeReason = level, lv.Causes, lv.Reason
			continue
		}
		r.HighestUsable = level
		r.Recommended = level
		if i > 0 {
			r.Recommended = order[i-1]
		}
	}
	r.Why = r.why()
	return r
}

// baseline picks the baseline level and its mean accepted share.
func baseline(ps []PassFigures) (int, float64) {
	level := ps[0].Level
	for _, p := range ps {
		if p.Phase == "baseline" {
			level = p.Level
			break
		}
	}
	var sum float64
	var n int
	for _, p := range ps {
		if p.Level == level {
			sum += p.Share()
			n++
		}
	}
	return level, sum / float64(n)
}

func (r Recommendation) why() string {
	unit := r.Mode
	if unit == "" {
		unit = "level"
	}
	switch {
	case r.HighestUsable == 0:
		return fmt.Sprintf("no usable %s: %s %d already broke (%s)", unit, unit, r.FirstBroken, r.BrokeReason)
	case r.FirstBroken == 0 && r.Recommended == r.HighestUsable:
		return fmt.Sprintf("%s %d: the only level measured, usable, with no margin step below it", unit, r.Recommended)
	case r.FirstBroken == 0:
		return fmt.Sprintf("%s %d, one step below %d, the highest measured; nothing broke, so the ceiling was not reached",
			unit, r.Recommended, r.HighestUsable)
	case r.Recommended == r.HighestUsable:
		return fmt.Sprintf("%s %d, the lowest level, with no margin step below it; %s %d broke (%s)",
			unit, r.Recommended, unit, r.FirstBroken, r.BrokeReason)
	default:
		return fmt.Sprintf("%s %d, one step below %d, the highest usable; %s %d broke (%s)",
			unit, r.Recommended, r.HighestUsable, unit, r.FirstBroken, r.BrokeReason)
	}
}

// RecommendAll groups passes by variant and mode, in the order they first
// appear, and recommends a level for each group.
func RecommendAll(passes []PassFigures, acc Acceptance) []Recommendation {
	type key struct{ variant, mode string }
	groups := map[key][]PassFigures{}
	var order []key
	for _, p := range passes {
		k := key{p.Variant, p.Mode}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], p)
	}
	out := make([]Recommendation, 0, len(order))
	for _, k := range order {
		out = append(out, Recommend(groups[k], acc))
	}
	return out
}

// pct formats a share as a percentage with one decimal.
func pct(share float64) string { return fmt.Sprintf("%.1f%%", share*100) }

// trimPct formats a ratio as a percentage without trailing zeros ("99%").
func trimPct(r float64) string { return strconv.FormatFloat(r*100, 'f', -1, 64) + "%" }

// fmtDuration prints nanoseconds as a rounded duration ("41.2s", "850ms").
func fmtDuration(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	default:
		return d.Round(time.Millisecond).String()
	}
}
