package extractbench

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
	// SelectRequiresEquivalence, when false, lets select rank a variant
	// whose paired verdict against BaselineVariant is not EQUIVALENT
	// (it is still marked so); nil or true, the default, does not: a
	// cheaper variant that lost quality is no candidate. A pointer, so that
	// fingerprints of protocols that leave it out do not change.
	SelectRequiresEquivalence *bool `json:"select_requires_equivalence,omitempty"`
	// EquivalenceMargin is the paired verdict's margin δ (a share, 0.02 = two
	// points); 0 is compare's default.
	EquivalenceMargin float64 `json:"equivalence_margin,omitempty"`
	// SteadyState is SteadyJudge ("" reads so: a level not in steady state
	// is not usable, cause not_steady) or SteadyRecord (the evidence is
	// recorded and shown, the verdict ignores it, as before the check).
	SteadyState string `json:"steady_state,omitempty"`
}

// The values of Acceptance.SteadyState.
const (
	SteadyJudge  = "judge"  // the default: a level not in steady state is not recommended
	SteadyRecord = "record" // the old behaviour: the evidence is recorded and shown, never judged
)

// JudgesSteadyState reports whether a level not in steady state is judged
// not usable.
func (a Acceptance) JudgesSteadyState() bool { return a.SteadyState != SteadyRecord }

// SelectNeedsEquivalence reports whether select ranks only variants shown
// equivalent to the baseline variant (SelectRequiresEquivalence, default
// true).
func (a Acceptance) SelectNeedsEquivalence() bool {
	return a.SelectRequiresEquivalence == nil || *a.SelectRequiresEquivalence
}

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
	if ns, ok := r.TTFTSched(); a.TTFTP99MS > 0 && (!ok || float64(ns) > a.TTFTP99MS*1e6) {
		return false
	}
	if a.TPOTP99MS > 0 {
		if t, ok := r.TPOT(); ok && float64(t) > a.TPOTP99MS*1e6 {
			return false
		}
	}
	if ns, ok := r.E2ESched(); a.E2EP95MS > 0 && (!ok || float64(ns) > a.E2EP95MS*1e6) {
		return false
	}
	return true
}

// BaselineRatio is the part of the baseline's accepted share a level must
// keep: MinBaselineRatio, or DefaultMinBaselineRatio when unset.
func (a Acceptance) BaselineRatio() float64 {
	if a.MinBaselineRatio <= 0 {
		return DefaultMinBaselineRatio
	}
	return a.MinBaselineRatio
}

// The objectives a protocol may ask for (acceptance.objective). A user who
// serves people waits on latency (interactive); a user who processes a
// corpus overnight waits on throughput (offline). The two answers differ:
// the level that meets the latency objectives is usually below the one
// that gets the most accepted documents out per hour.
const (
	ObjectiveBoth        = "both"        // the default: both answers
	ObjectiveInteractive = "interactive" // the highest level meeting the latency objectives, one step back
	ObjectiveOffline     = "offline"     // the level with the most accepted documents per hour, under the quality gate
)

// Objectives lists the values acceptance.objective takes.
var Objectives = []string{ObjectiveBoth, ObjectiveInteractive, ObjectiveOffline}

// ObjectiveOf returns the objective the acceptance asks for: "" is both.
func (a Acceptance) ObjectiveOf() string {
	if a.Objective == "" {
		return ObjectiveBoth
	}
	return a.Objective
}

// Asks reports whether the acceptance asks for objective o (interactive or
// offline).
func (a Acceptance) Asks(o string) bool {
	obj := a.ObjectiveOf()
	return obj == ObjectiveBoth || obj == o
}
