package results

import (
	"fmt"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// The states of a variant in a run, as every page shows them.
const (
	OutcomePass        = "PASS"        // the baseline met the acceptance criteria
	OutcomeFail        = "FAIL"        // the baseline did not: see Reason
	OutcomeError       = "ERROR"       // the variant could not be measured (engine did not start, died, ...)
	OutcomeInterrupted = "INTERRUPTED" // the run stopped before the variant's baseline was complete
	// OutcomeInconclusive: the baseline's verdict rests on passes whose
	// client could not keep its schedule or was frozen: the figures are the
	// client's, not the engine's, so there is no verdict on the model.
	OutcomeInconclusive = "INCONCLUSIVE"
	OutcomeNotRun       = "NOT RUN" // the run ended before the variant started
)

// Outcome is one variant's state and verdict in a run: the stdout summary,
// -json, the report and the nightly regression all print this, made once.
type Outcome struct {
	Variant string `json:"variant"`
	Model   string `json:"model"`
	State   string `json:"state"`            // OutcomePass, OutcomeFail, ...
	Reason  string `json:"reason,omitempty"` // why it is not PASS; for PASS the recommendation's sentence
	// BaselineShare is the baseline level's pooled accepted share; nil when
	// no baseline pass is complete.
	BaselineShare *float64      `json:"baseline_accepted"`
	Series        []eval.Series `json:"series"` // one per mode measured, levels with their figures and verdicts
	LoadNS        int64         `json:"load_ns,omitempty"`
	PassesDone    int           `json:"passes_complete"`
	PassesPlanned int           `json:"passes_planned"`
	// Tokenization is the variant's tokenizer drift (VariantPromptDrift);
	// nil when none of its passes compared a prompt count.
	Tokenization *extractbench.PromptDrift `json:"tokenization,omitempty"`
	// TokenCountMismatches sums its passes' requests whose engine-reported
	// completion tokens disagree with the chunks the client counted
	// (extractbench.Pass.TokenCountMismatches); nil when no pass compared.
	TokenCountMismatches *int64 `json:"token_count_mismatches,omitempty"`
}

// TokenCountSentence says how many of the variant's requests reported a
// completion token count the client's chunks contradict, and what that
// means for the token figures; "" when none did.
func (o Outcome) TokenCountSentence() string {
	if o.TokenCountMismatches == nil || *o.TokenCountMismatches == 0 {
		return ""
	}
	n := *o.TokenCountMismatches
	what := "requests whose"
	if n == 1 {
		what = "request whose"
	}
	return fmt.Sprintf("%d %s engine-reported completion tokens disagree with the chunks the client counted: tok/s and TPOT count the engine's tokens", n, what)
}

// Passed reports whether the variant's verdict passed.
func (o Outcome) Passed() bool { return o.State == OutcomePass }

// Failed reports whether the variant's verdict is the model's FAIL; every
// other state but PASS (ERROR, INCONCLUSIVE, INTERRUPTED, NOT RUN) is the
// infrastructure's: no finding about the model (exit 3, not 1).
func (o Outcome) Failed() bool { return o.State == OutcomeFail }

// Outcomes judges every variant of the run, in protocol order: a recorded
// engine failure is ERROR whatever was measured; a variant whose baseline
// is incomplete is INTERRUPTED (or NOT RUN when not one request of it was
// measured) when the run did not complete; otherwise the baseline level's verdict (eval's,
// on the figures the tables show) makes it PASS or FAIL.
func (d *RunData) Outcomes() []Outcome {
	series := d.Series()
	var out []Outcome
	for _, name := range d.VariantNames() {
		planned := d.Manifest.PlannedPasses(name)
		o := Outcome{Variant: name, Model: d.Manifest.Variant(name).Engine.Model, PassesPlanned: planned,
			LoadNS: d.LastEventNS(EventEngineLoad, name)}
		for _, s := range series {
			if s.Variant == name {
				o.Series = append(o.Series, s)
			}
		}
		for _, p := range d.Passes {
			if p.Variant == name && p.Complete() && p.Phase != extractbench.PhaseRetry {
				o.PassesDone++
			}
		}
		o.Tokenization = VariantPromptDrift(d.Passes, name)
		for _, p := range d.Passes {
			if p.Variant == name && p.Complete() && p.TokenCountMismatches != nil {
				o.TokenCountMismatches = ptrSum(o.TokenCountMismatches, *p.TokenCountMismatches)
			}
		}
		var base *eval.Level
		if len(o.Series) > 0 {
			base = o.Series[0].Baseline()
		}
		if base != nil {
			share := base.Share()
			o.BaselineShare = &share
		}
		baseComplete := base != nil && (base.Planned == 0 || base.Repetitions >= base.Planned)
		switch {
		case d.VariantFailure(name) != "":
			o.State, o.Reason = OutcomeError, d.VariantFailure(name)
		case d.missingShards() != "" && !baseComplete:
			// A merge without every shard holds no whole pass of documents:
			// name the shards rather than an interruption that never happened.
			o.State = OutcomeInterrupted
			o.Reason = fmt.Sprintf("%s: %d of %d planned passes whole, no verdict; merge again when they land", d.missingShards(), o.PassesDone, planned)
		case o.PassesDone == 0 && d.Run.Status != RunComplete && d.measuredRequests(name) == 0:
			o.State, o.Reason = OutcomeNotRun, fmt.Sprintf("the run was %s before this variant was measured", d.stopped())
		case o.PassesDone == 0 && d.Run.Status != RunComplete:
			o.State = OutcomeInterrupted
			o.Reason = fmt.Sprintf("the run was %s after %d measured requests of this variant, before its first pass was whole: no verdict", d.stopped(), d.measuredRequests(name))
		case !baseComplete && d.Run.Status != RunComplete:
			o.State = OutcomeInterrupted
			o.Reason = fmt.Sprintf("the run was %s with %d of %d planned passes measured: no verdict", d.stopped(), o.PassesDone, planned)
		case base == nil:
			o.State, o.Reason = OutcomeFail, "no complete baseline pass"
		default:
			v := eval.Judge(base, -1, d.Manifest.Acceptance)
			switch {
			case v.Usable:
				o.State, o.Reason = OutcomePass, o.Series[0].Recommendation.Headline()
			case clientMade(v, base):
				o.State = OutcomeInconclusive
				o.Reason = "baseline: " + v.Reason + "; the verdict rests on passes the client could not time (loaded or frozen): measure again on a client with room"
			default:
				o.State, o.Reason = OutcomeFail, "baseline: "+v.Reason
			}
			if o.PassesDone < planned && d.Run.Status != RunComplete {
				o.Reason += fmt.Sprintf(" (the run was %s: %d of %d planned passes measured)", d.stopped(), o.PassesDone, planned)
			}
		}
		out = append(out, o)
	}
	return out
}

// measuredRequests is how many requests of variant the run measured: the
// database's count (Measured) when it was read, else the documents of the
// variant's pass rows, interrupted ones included.
func (d *RunData) measuredRequests(variant string) int64 {
	if d.Measured != nil {
		return d.Measured[variant]
	}
	var n int64
	for _, p := range d.Passes {
		if p.Variant == variant {
			n += p.Docs
		}
	}
	return n
}

// missingShards says which shard indexes a merged run lacks ("shard indexes
// 1, 3 of 4 are missing from this merge"), or "" when it lacks none or is
// no merge.
func (d *RunData) missingShards() string {
	m := d.Manifest.Merge
	if m == nil || len(m.Missing) == 0 {
		return ""
	}
	return fmt.Sprintf("shard indexes %s of %d are missing from this merge", extractbench.ShardList(m.Missing), m.Count)
}

// stopped names how a run that did not complete ended.
func (d *RunData) stopped() string {
	switch d.Run.Status {
	case RunInterrupted:
		return "interrupted"
	case RunFailed:
		return "stopped by an error"
	case RunRunning:
		return "cut (still running, or killed)"
	}
	return d.Run.Status
}

// VariantPromptDrift is the tokenizer drift a variant's pages state before
// any accuracy figure: that of its complete pass with the most documents
// tokenised otherwise than expected (the first of them in table order),
// since every pass sends the same prompts; nil when no pass compared one.
func VariantPromptDrift(passes []extractbench.Pass, variant string) *extractbench.PromptDrift {
	var best *extractbench.PromptDrift
	for i := range passes {
		p := &passes[i]
		if p.Variant != variant || !p.Complete() || p.PromptDrift.Compared == nil {
			continue
		}
		if best == nil || *p.PromptDrift.Docs > *best.Docs {
			d := p.PromptDrift
			best = &d
		}
	}
	return best
}

// ptrSum is *sum + v, sum nil counting as 0.
func ptrSum(sum *int64, v int64) *int64 {
	if sum != nil {
		v += *sum
	}
	return &v
}

// clientMade reports whether a baseline's failed verdict rests on its
// client: the level is client-bound (its repetitions could not be left out)
// and every cause is one a slow or frozen client produces (its latency, its
// pace, a warming it faked). Memory and quality causes stand on the
// engine's own answers, whatever the client: those stay FAIL.
func clientMade(v eval.Verdict, base *eval.Level) bool {
	if base.ClientBound == 0 {
		return false
	}
	for _, c := range v.Causes {
		switch c {
		case eval.CauseClient, eval.CauseLatency, eval.CauseNotSteady:
		default:
			return false
		}
	}
	return true
}
