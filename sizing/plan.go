package sizing

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/numfmt"
)

// DefaultRentalDays are the rental lengths a plan is compared against.
var DefaultRentalDays = []int{3, 7, 30}

// PlanInputs are the measured figures a plan rests on (MEASUREMENT.md
// section 9), all at one level of one variant.
type PlanInputs struct {
	Variant    string            `json:"variant"`
	Mode       extractbench.Mode `json:"mode"`
	Level      int               `json:"level"`
	Docs       int               `json:"docs"`        // documents sent over the level's passes
	Accepted   int               `json:"accepted"`    // of which accepted
	DurationNS int64             `json:"duration_ns"` // the passes' durations, summed
	// OutputTokens over the level's passes; 0 = unknown.
	OutputTokens int64 `json:"output_tokens"`
	// LoadNS (engine start until ready) and WarmupNS are paid once per
	// rental: preparation before the first document.
	LoadNS   int64 `json:"load_ns"`
	WarmupNS int64 `json:"warmup_ns"`
	// OverheadShare is the time between one variant's passes (reading a
	// pass back, writing its row, the next pass's set-up) per unit of pass
	// time: the part of the run's own work that grows with the documents.
	OverheadShare float64 `json:"overhead_share"`
	// FixedNS is the rest of the run's time outside passes, engine load
	// and warm-up (setting the run up, stopping engines, between variants,
	// writing its end): paid once per run, whatever the corpus, never
	// scaled with it.
	FixedNS int64 `json:"fixed_ns"`
	// RetryShare is the share of documents assumed sent again, each once,
	// when RetryAssumed (plan -retry-share); otherwise 0: a run sends each
	// document of a pass once, so it measures no retry of a document.
	RetryShare   float64 `json:"retry_share"`
	RetryAssumed bool    `json:"retry_assumed"`
	CorpusDocs   int     `json:"corpus_docs"` // N, the corpus to plan for
	RentalDays   []int   `json:"rental_days"` // nil = DefaultRentalDays
	// InPasses, when set, are the level's rates in passes as every page
	// shows them (the median over its complete repetitions; results/plan
	// computes them with eval), so that plan and select quote the
	// accepted/h that stdout and the report show. Unset, the rates are the
	// sums' ratios above (for one repetition, the same figures).
	InPasses *LevelRates `json:"in_passes,omitempty"`
}

// LevelRates are a level's throughput figures in passes, median over its
// complete repetitions (eval.MedianOverRepetitions).
type LevelRates struct {
	DocsPerHour      float64 `json:"docs_per_hour"`     // eval.PassDocsPerHour: documents, accepted or not
	AcceptedPerHour  float64 `json:"accepted_per_hour"` // eval.PassAcceptedPerHour: passes.docs_per_hour
	OutputTokensPerS float64 `json:"output_tokens_per_s"`
	// Printed are the three as stdout and the report print them, in that
	// order, with the digits their repetitions' ranges support; "" = unknown.
	Printed [3]string `json:"-"`
}

// Recommendation is the verdict a plan from a run rests on
// (eval.Recommendation): sizing prints and marshals it and judges nothing.
type Recommendation interface {
	Usable() bool
	InteractiveAsked() bool
	Interactive() string // the interactive objective's sentence
	Reason() string      // why this level, or why none
	OfflineReason() string
}

// PassRates prints the plan's three rates in passes (documents/hour,
// accepted/hour, output tokens/s) as every page prints them: with the digits
// the level's repetitions support when known, else three.
func (r *PlanResult) PassRates() (docs, accepted, tokens string) {
	f := func(i int, v float64) string {
		if r.InPasses != nil && r.InPasses.Printed[i] != "" {
			return r.InPasses.Printed[i]
		}
		return numfmt.Figure(v)
	}
	return f(0, r.PassDocsPerHour), f(1, r.AcceptedPerHour), f(2, r.OutputTokensPerS)
}

// PlanResult is what a corpus of N documents costs in time at the measured
// rate, and what fits in each rental.
type PlanResult struct {
	PlanInputs
	Recommendation Recommendation `json:"recommendation,omitempty"` // when planned from a run
	Simulated      bool           `json:"simulated"`
	// Usable is false for a variant with no usable level: it has no
	// figures, and its JSON carries none (never zeros that read as measured).
	Usable bool `json:"usable"`
	// PassDocsPerHour is the measured rate inside passes (documents,
	// accepted or not); DocsPerHour and DocsPerDay add evaluation overhead
	// and retries: the sustained rate, always labelled so.
	PassDocsPerHour float64 `json:"pass_docs_per_hour"`
	DocsPerHour     float64 `json:"docs_per_hour"`
	DocsPerDay      float64 `json:"docs_per_day"`
	// AcceptedPerHour is accepted documents per hour inside passes: the
	// level's figure every page shows (eval/throughput.go).
	AcceptedPerHour float64 `json:"accepted_per_hour"`
	// SustainedAcceptedPerHour is AcceptedPerHour over a campaign: divided
	// by 1 + the evaluation overhead (a re-sent document is counted once,
	// so retries add none); what the cost per 1,000 accepted divides.
	SustainedAcceptedPerHour float64 `json:"sustained_accepted_per_hour"`
	OutputTokensPerS         float64 `json:"output_tokens_per_s"`
	// FailedShare is the share of documents not accepted at the level: a
	// measured figure, shown beside RetryShare, which assumes none re-sent
	// unless told.
	FailedShare float64 `json:"failed_share"`
	// The corpus time and its parts.
	PreparationNS int64    `json:"preparation_ns"` // engine load + warm-up
	ProcessingNS  int64    `json:"processing_ns"`  // N documents at the pass rate
	EvaluationNS  int64    `json:"evaluation_ns"`  // processing × overhead share
	RetriesNS     int64    `json:"retries_ns"`     // the documents assumed re-sent (RetryShare), with their overhead
	CorpusNS      int64    `json:"corpus_ns"`
	CorpusDays    float64  `json:"corpus_days"`
	Rentals       []Rental `json:"rentals"`
	GPU           string   `json:"gpu,omitempty"` // the card measured, as the manifest names it
	// Cost is set when a price file prices the card (AddCost).
	Cost *PlanCost `json:"cost,omitempty"`
	// Paired is the variant's paired verdict against its run's baseline
	// variant, set by results/plan: sizing prints and marshals it and
	// judges nothing. nil for the baseline variant and a run of one variant.
	Paired Paired `json:"paired,omitempty"`
}

// Paired is a plan's paired verdict against the baseline variant
// (results/plan's, from results/compare).
type Paired interface {
	// Mark is the verdict in one line with what it means for selection,
	// printed above the plan.
	Mark() string
}

// PlanCost is what a plan costs at one price per card-hour. Cards work in
// parallel, each on its share of the corpus, each paying the preparation;
// a card is billed for the whole rental.
type PlanCost struct {
	Label       string  `json:"label"` // currency and where the prices came from; says PLACEHOLDER when they are
	Currency    string  `json:"currency"`
	Placeholder bool    `json:"placeholder"`
	PerCardHour float64 `json:"per_card_hour"`
	// PerThousandAccepted is 1,000 × price / sustained accepted documents
	// per hour (accepted per hour in passes / (1 + overhead share)).
	PerThousandAccepted float64 `json:"per_1000_accepted"` // 0 when nothing was accepted
	// PerThousandDocs is 1,000 × price / sustained documents per hour,
	// accepted or not: what a run with meaningless answers can still price.
	PerThousandDocs float64 `json:"per_1000_docs"`
	CorpusCost      float64 `json:"corpus_cost"` // one card for the corpus time
	// DeadlineDays, when set, is the deadline CardsForDeadline cards meet,
	// costing DeadlineCost (each billed for the whole deadline).
	DeadlineDays     float64 `json:"deadline_days,omitempty"`
	CardsForDeadline int     `json:"cards_for_deadline,omitempty"`
	DeadlineCost     float64 `json:"deadline_cost,omitempty"`
}

// MarshalJSON writes a variant with no usable level as its variant, mode,
// corpus size, recommendation (which says why) and usable: false, without
// the figures a plan would have: zeros there would read as measurements.
func (r PlanResult) MarshalJSON() ([]byte, error) {
	type plain PlanResult
	if r.Usable || r.Recommendation == nil {
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		Variant        string            `json:"variant"`
		Mode           extractbench.Mode `json:"mode"`
		CorpusDocs     int               `json:"corpus_docs"`
		Usable         bool              `json:"usable"`
		Recommendation Recommendation    `json:"recommendation"`
		Simulated      bool              `json:"simulated"`
		Paired         Paired            `json:"paired,omitempty"`
	}{r.Variant, r.Mode, r.CorpusDocs, false, r.Recommendation, r.Simulated, r.Paired})
}

// Rental is what one rental length holds.
type Rental struct {
	Days       int     `json:"days"`
	Docs       int64   `json:"docs"`        // documents that fit, preparation paid once
	FitsCorpus bool    `json:"fits_corpus"` // the whole corpus fits
	Use        float64 `json:"use"`         // corpus time / rental time
	// CardsNeeded is the cards that finish the corpus within the rental
	// working in parallel (CardsFor); 0 when the preparation alone exceeds it.
	CardsNeeded int      `json:"cards_needed"`
	Cost        *float64 `json:"cost,omitempty"` // CardsNeeded × days × 24 h × price, when priced
}

// perCardNS is what every card pays before and besides its share of the
// documents: the preparation and the run's fixed costs.
func (r PlanResult) perCardNS() int64 { return r.PreparationNS + r.FixedNS }

// CardsFor is the cards that finish the corpus within deadlineNS working in
// parallel: each pays the preparation and the fixed costs and takes an
// equal share of the rest, so k = ceil((corpus − per card) / (deadline −
// per card)); 0 when those alone do not fit.
func (r PlanResult) CardsFor(deadlineNS int64) int {
	left := deadlineNS - r.perCardNS()
	if left <= 0 {
		return 0
	}
	return int(ceilDiv(r.CorpusNS-r.perCardNS(), left))
}

// AddCost prices the plan at price per card-hour, with a deadline in days
// (0 = none).
func (r *PlanResult) AddCost(p *Prices, price, deadlineDays float64) {
	c := &PlanCost{Label: p.Label(), Currency: p.Currency, Placeholder: p.Placeholder, PerCardHour: price}
	if sustained := r.SustainedAcceptedPerHour; sustained > 0 {
		c.PerThousandAccepted = 1000 * price / sustained
	}
	if r.DocsPerHour > 0 {
		c.PerThousandDocs = 1000 * price / r.DocsPerHour
	}
	c.CorpusCost = float64(r.CorpusNS) / float64(time.Hour) * price
	if deadlineDays > 0 {
		c.DeadlineDays = deadlineDays
		c.CardsForDeadline = r.CardsFor(int64(deadlineDays * float64(24*time.Hour)))
		c.DeadlineCost = float64(c.CardsForDeadline) * deadlineDays * 24 * price
	}
	for i := range r.Rentals {
		cost := float64(r.Rentals[i].CardsNeeded) * float64(r.Rentals[i].Days) * 24 * price
		r.Rentals[i].Cost = &cost
	}
	r.Cost = c
}

// Plan turns measured figures into corpus time and rental sizes.
func Plan(in PlanInputs) (PlanResult, error) {
	if in.Docs <= 0 || in.DurationNS <= 0 {
		return PlanResult{}, fmt.Errorf("plan %s at %d: no measured documents or duration (%d documents in %d ns)",
			in.Variant, in.Level, in.Docs, in.DurationNS)
	}
	if in.CorpusDocs <= 0 {
		return PlanResult{}, fmt.Errorf("plan: corpus of %d documents: want at least 1", in.CorpusDocs)
	}
	if in.OverheadShare < 0 {
		in.OverheadShare = 0
	}
	if in.FixedNS < 0 {
		in.FixedNS = 0
	}
	if !in.RetryAssumed {
		in.RetryShare = 0 // nothing measured, nothing assumed
	}
	if in.RetryShare < 0 || in.RetryShare > 1 || math.IsNaN(in.RetryShare) {
		return PlanResult{}, fmt.Errorf("plan: retry share %g: want a share of the documents, 0 to 1", in.RetryShare)
	}
	if in.RentalDays == nil {
		in.RentalDays = DefaultRentalDays
	}
	r := PlanResult{PlanInputs: in, Usable: true}
	secPerDoc := float64(in.DurationNS) / 1e9 / float64(in.Docs)
	r.PassDocsPerHour = 3600 / secPerDoc
	r.AcceptedPerHour = float64(in.Accepted) / (float64(in.DurationNS) / 1e9) * 3600
	if in.OutputTokens > 0 {
		r.OutputTokensPerS = float64(in.OutputTokens) / (float64(in.DurationNS) / 1e9)
	}
	if lr := in.InPasses; lr != nil && lr.DocsPerHour > 0 {
		secPerDoc = 3600 / lr.DocsPerHour
		r.PassDocsPerHour, r.AcceptedPerHour, r.OutputTokensPerS = lr.DocsPerHour, lr.AcceptedPerHour, lr.OutputTokensPerS
	}
	r.SustainedAcceptedPerHour = r.AcceptedPerHour / (1 + in.OverheadShare)
	r.FailedShare = 1 - float64(in.Accepted)/float64(in.Docs)
	// Each document costs its pass time, the evaluation overhead on it, and
	// the same again for the share assumed re-sent.
	effSecPerDoc := secPerDoc * (1 + in.OverheadShare) * (1 + in.RetryShare)
	r.DocsPerHour = 3600 / effSecPerDoc
	r.DocsPerDay = 24 * r.DocsPerHour

	n := float64(in.CorpusDocs)
	r.PreparationNS = in.LoadNS + in.WarmupNS
	r.ProcessingNS = int64(math.Round(n * secPerDoc * 1e9))
	r.EvaluationNS = int64(math.Round(n * secPerDoc * in.OverheadShare * 1e9))
	r.RetriesNS = int64(math.Round(n * in.RetryShare * secPerDoc * (1 + in.OverheadShare) * 1e9))
	r.CorpusNS = r.PreparationNS + r.FixedNS + r.ProcessingNS + r.EvaluationNS + r.RetriesNS
	r.CorpusDays = float64(r.CorpusNS) / float64(24*time.Hour)
	for _, d := range in.RentalDays {
		rent := int64(d) * int64(24*time.Hour)
		rt := Rental{Days: d, FitsCorpus: r.CorpusNS <= rent, Use: float64(r.CorpusNS) / float64(rent), CardsNeeded: r.CardsFor(rent)}
		if left := float64(rent - r.perCardNS()); left > 0 {
			rt.Docs = int64(left / 1e9 / effSecPerDoc)
		}
		r.Rentals = append(r.Rentals, rt)
	}
	return r, nil
}

// ErrNoUsableLevel is returned (wrapped) when a variant has no level to plan at.
var ErrNoUsableLevel = errors.New("no usable level")

// WriteText writes a plan for people.
func (r PlanResult) WriteText(w io.Writer) error {
	ew := &numfmt.Writer{W: w}
	if r.Simulated {
		ew.Printf("SIMULATED RUN: these figures come from the built-in engine, not a GPU.\n")
	}
	if r.Paired != nil {
		ew.Printf("%s: %s\n", r.Variant, r.Paired.Mark())
	}
	unit := r.Mode
	if r.Recommendation != nil && !r.Recommendation.Usable() {
		ew.Printf("%s: nothing to plan: %s\n", r.Variant, r.Recommendation.Reason())
		return ew.Err
	}
	ew.Printf("%s at %s %d", r.Variant, unit, r.Level)
	if rec := r.Recommendation; rec != nil {
		if rec.InteractiveAsked() {
			ew.Printf(" (the interactive objective's recommended level)\n")
		} else {
			ew.Printf(" (the offline objective's level: the protocol asked for it only)\n")
		}
		ew.Printf("Interactive objective: %s\nOffline objective: %s\n", rec.Interactive(), rec.OfflineReason())
	} else {
		ew.Printf("\n")
	}
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	// Rates with three significant digits (numfmt's digits rule): a
	// plan multiplies a median whose repetitions differ in the second or third.
	docs, accepted, tokens := r.PassRates()
	fmt.Fprintf(tw, "Measured in passes\t%s documents/hour (%d documents in %s), %s accepted/hour, %s output tokens/s\n",
		docs, r.Docs, numfmt.Duration(r.DurationNS), accepted, tokens)
	retries := "none assumed"
	if r.RetryAssumed {
		retries = fmt.Sprintf("%.1f%% of documents assumed sent again", r.RetryShare*100)
	}
	fmt.Fprintf(tw, "Sustained\t%s documents/hour, %s/day, %s accepted/hour sustained (evaluation overhead %.1f%% of pass time; retries %s)\n",
		numfmt.Figure(r.DocsPerHour), numfmt.Figure(r.DocsPerDay), numfmt.Figure(r.SustainedAcceptedPerHour), r.OverheadShare*100, retries)
	fmt.Fprintf(tw, "Corpus of %s documents\t%s (%.2f days)\n", numfmt.GroupDigits(int64(r.CorpusDocs)), fmtLong(r.CorpusNS), r.CorpusDays)
	fmt.Fprintf(tw, "  preparation\t%s (engine load %s + warm-up %s, once)\n", fmtLong(r.PreparationNS), fmtLong(r.LoadNS), fmtLong(r.WarmupNS))
	fmt.Fprintf(tw, "  fixed\t%s (the run's time outside passes, loads and warm-ups: set-up, engine stop, its end; once)\n", fmtLong(r.FixedNS))
	fmt.Fprintf(tw, "  processing\t%s\n", fmtLong(r.ProcessingNS))
	fmt.Fprintf(tw, "  evaluation\t%s (%.1f%% of processing: the time between passes)\n", fmtLong(r.EvaluationNS), r.OverheadShare*100)
	fmt.Fprintf(tw, "  retries\t%s (%s)\n", fmtLong(r.RetriesNS), r.retryPhrase())
	for _, rt := range r.Rentals {
		fits := "does not fit"
		if rt.FitsCorpus {
			fits = "fits"
		}
		fmt.Fprintf(tw, "%d-day rental\t%s documents; the corpus %s (%.0f%% of the rental); %s", rt.Days, numfmt.Figure(float64(rt.Docs)), fits, rt.Use*100, cardsPhrase(rt.CardsNeeded, rt.Days))
		if rt.Cost != nil {
			fmt.Fprintf(tw, ": %s %s", numfmt.Money(*rt.Cost), r.Cost.Currency)
		}
		fmt.Fprintf(tw, "\n")
	}
	if c := r.Cost; c != nil {
		card := r.GPU
		if card == "" {
			card = "the card"
		}
		fmt.Fprintf(tw, "Cost (%s)\t%s %s per card-hour of %s\n", c.Label, numfmt.Money(c.PerCardHour), c.Currency, card)
		if c.PerThousandAccepted > 0 {
			fmt.Fprintf(tw, "  per 1,000 accepted\t%s %s (1,000 × price / %s accepted/hour sustained)\n", numfmt.Money(c.PerThousandAccepted), c.Currency,
				numfmt.Figure(r.SustainedAcceptedPerHour))
		} else {
			fmt.Fprintf(tw, "  per 1,000 accepted\tnone accepted; %s %s per 1,000 documents (1,000 × price / %s documents/hour sustained)\n",
				numfmt.Money(c.PerThousandDocs), c.Currency, numfmt.Figure(r.DocsPerHour))
		}
		fmt.Fprintf(tw, "  corpus on one card\t%s %s\n", numfmt.Money(c.CorpusCost), c.Currency)
		if c.DeadlineDays > 0 {
			fmt.Fprintf(tw, "  deadline %g days\t%s: %s %s\n", c.DeadlineDays, cardsPhrase(c.CardsForDeadline, 0), numfmt.Money(c.DeadlineCost), c.Currency)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	if ew.Err != nil {
		return fmt.Errorf("write plan: %w", ew.Err)
	}
	return nil
}

// retryPhrase says what the retries rest on: an assumption, with its
// figure, or none; with the measured share not accepted beside it.
func (r PlanResult) retryPhrase() string {
	if r.RetryAssumed {
		return fmt.Sprintf("assumed: %.1f%% of documents sent again, -retry-share; %.1f%% were not accepted at the level", r.RetryShare*100, r.FailedShare*100)
	}
	return fmt.Sprintf("none: the run sent each document once and measured no retry; %.1f%% were not accepted at the level, -retry-share assumes a share sent again", r.FailedShare*100)
}

// cardsPhrase says how many cards finish the corpus in a rental.
func cardsPhrase(n, days int) string {
	if n == 0 {
		return "preparation alone exceeds it"
	}
	s := fmt.Sprintf("%d card", n)
	if n > 1 {
		s += "s"
	}
	if days > 0 {
		return fmt.Sprintf("%s to finish in %d days", s, days)
	}
	return s + " to finish in time"
}

// fmtLong prints a duration to the second (finer under a minute), with
// days when it has them.
func fmtLong(ns int64) string {
	if time.Duration(ns) < time.Minute {
		return numfmt.Duration(ns)
	}
	d := time.Duration(ns).Round(time.Second)
	if d >= 24*time.Hour {
		days := d / (24 * time.Hour)
		return fmt.Sprintf("%dd%s", days, (d - days*24*time.Hour).String())
	}
	return d.String()
}
