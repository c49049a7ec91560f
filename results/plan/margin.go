package plan

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/numfmt"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/sizing"
)

// Saturation thresholds: what a pass must show to have met the memory
// boundary rather than a scheduling limit.
const (
	// MarginKVFull is the KV usage (0–1) from which a pass whose engine ran
	// fewer sequences than were in flight counts as held back by memory; on
	// a pool of few sequences, less: full is when the blocks left hold less
	// than one more sequence (kvFull).
	MarginKVFull = 0.95
	// marginSameContext is how close (a share) a pass's tokens per
	// document must be to the longest passes' to count towards the
	// boundary: a context sweep's short documents meet another boundary.
	marginSameContext = 0.85
	// MarginWithin is how far (a share) the calculator may be from the
	// measured boundary and still agree with it: issue 30's 10%.
	MarginWithin = 0.10
)

// EmulatedCard is what a capped engine reports of its card and KV pool in
// its self-description (the manifest's engine.about.memory_cap, written by
// engines/transformers/cardcap.py); byte figures are bytes.
type EmulatedCard struct {
	Card             string  `json:"card"`
	Label            string  `json:"label"`
	CapBytes         int64   `json:"cap_bytes"`
	DeviceTotalBytes int64   `json:"device_total_bytes"`
	OutsideTorch     int64   `json:"outside_torch_bytes"`
	WeightsBytes     int64   `json:"weights_bytes"`
	ActivationBytes  int64   `json:"activation_bytes"`
	Utilisation      float64 `json:"utilisation"`
	BlockSize        int     `json:"block_size"`
	KVBytesPerToken  int64   `json:"kv_bytes_per_token"`
	KVBudgetBytes    int64   `json:"kv_budget_bytes"`
	NumBlocks        int     `json:"num_blocks"`
	KVCapacityTokens int64   `json:"kv_capacity_tokens"`
	// AfterStart* is what the started engine held (the KV pool and its
	// batch buffers and graph pools included); 0 = not reported.
	AfterStartAllocated int64           `json:"after_start_allocated_bytes,omitempty"`
	AfterStartReserved  int64           `json:"after_start_reserved_bytes,omitempty"`
	CalculatorModel     string          `json:"calculator_model,omitempty"`
	HFConfig            json.RawMessage `json:"hf_config,omitempty"`
	// AdmissionReserve is the share of the pool the engine's scheduler
	// keeps from new sequences (sizing.Inputs.AdmissionReserve), as the
	// engine reports it; nil: not reported (EmulatedCardOf fills in the
	// engine's known default).
	AdmissionReserve *float64 `json:"admission_reserve,omitempty"`
	// Scheduler says where AdmissionReserve comes from.
	Scheduler string `json:"scheduler,omitempty"`
}

// TransformersEngine is what engines/transformers' server reports as its
// engine: transformers' continuous batching, FIFO scheduler.
const TransformersEngine = "transformers-continuous-batching"

// reserve is the card's admission reserve, 0 when none is known.
func (c EmulatedCard) reserve() float64 {
	if c.AdmissionReserve == nil {
		return 0
	}
	return *c.AdmissionReserve
}

// EmulatedCardOf reads a variant's emulated card from its engine's
// self-description; false when the engine was not capped.
func EmulatedCardOf(e extractbench.EngineInfo) (EmulatedCard, bool) {
	var about struct {
		Cap    *EmulatedCard `json:"memory_cap"`
		Engine string        `json:"engine"`
	}
	if len(e.About) == 0 || json.Unmarshal(e.About, &about) != nil || about.Cap == nil || about.Cap.CapBytes <= 0 {
		return EmulatedCard{}, false
	}
	c := *about.Cap
	switch {
	case c.AdmissionReserve != nil:
		if c.Scheduler == "" {
			c.Scheduler = "reported by the engine"
		}
	case about.Engine == TransformersEngine:
		// Runs before the engine reported it: the value transformers' FIFO
		// scheduler starts with (sizing.TransformersFIFOReserve).
		r := sizing.TransformersFIFOReserve
		c.AdmissionReserve, c.Scheduler = &r, "transformers' FIFO scheduler: its safety_margin as transformers 5.17.0 starts it"
	}
	return c, true
}

// MarginPass is one pass's evidence at an emulated card's boundary.
type MarginPass struct {
	Dir         string            `json:"dir"`
	Mode        extractbench.Mode `json:"mode"`
	Level       int               `json:"level"`
	Requested   int               `json:"requested"` // requests in flight asked for: the level, or a context sweep's concurrency
	Docs        int64             `json:"docs"`
	MeanTokens  float64           `json:"mean_tokens"` // prompt + output tokens per document
	MaxRunning  *int64            `json:"max_running"`
	MaxWaiting  *int64            `json:"max_waiting"`
	Preemptions *int64            `json:"preemptions"`
	PeakKV      *float64          `json:"peak_kv_usage"`
	Memory      int64             `json:"memory_failures"`
	Class       string            `json:"class,omitempty"` // a context sweep's length class
	// OutputsChanged and VerdictsChanged are the documents whose answer (and
	// verdict) differ from the level-1 pass's: batch invariance at the boundary.
	OutputsChanged  *int64 `json:"outputs_changed,omitempty"`
	VerdictsChanged *int64 `json:"verdicts_changed,omitempty"`
	// Saturated: the pass met the memory boundary (memory failures,
	// preemptions, or fewer running than requested with the KV cache full);
	// Evidence says which.
	Saturated bool   `json:"saturated"`
	Evidence  string `json:"evidence"`
}

// MarginRow is one emulated card: the calculator's prediction beside the
// measured boundary, and the concurrency to run with its margin.
type MarginRow struct {
	Card  EmulatedCard `json:"card"`
	Model string       `json:"model"` // the calculator's model
	// ContextTokens is the tokens a sequence holds at its end (prompt and
	// output, the mean over the boundary pass's documents): what the
	// calculator is asked for (`memory -context`).
	ContextTokens int    `json:"context_tokens"`
	Command       string `json:"command"` // the calculator's command line
	// Fits is the calculator's answer for one sequence with its margin.
	Fits bool `json:"fits"`
	// Predicted and PredictedWithMargin are the calculator's most sequences
	// of ContextTokens on a card of the cap's size, without and with its
	// margin; EnginePool is what the engine's own KV pool holds (whole
	// blocks a sequence).
	Predicted           int `json:"predicted"`
	PredictedWithMargin int `json:"predicted_with_margin"`
	EnginePool          int `json:"engine_pool"`
	// Measured is the boundary: the most sequences the engine ran at once in
	// a saturated pass; Reached is false when no pass saturated (then
	// Measured is the most it ran, a lower bound).
	Measured int  `json:"measured"`
	Reached  bool `json:"reached"`
	// DiffPct is (Predicted − Measured) / Measured × 100; nil without a
	// reached boundary.
	DiffPct *float64 `json:"diff_pct"`
	// Recommended is the concurrency to run with the margin: the measured
	// boundary less sizing.DefaultMargin, or the calculator's prediction
	// with its margin when the boundary was not reached (Source says which).
	Recommended int          `json:"recommended"`
	Source      string       `json:"source"` // "measured" or "predicted"
	Terms       string       `json:"terms"`  // the engine's measured terms beside the calculator's
	Passes      []MarginPass `json:"passes"`
}

// Margins reads every run directory and makes one row per emulated card
// (runs whose engine reported a memory_cap), in the order of the cards'
// sizes; runs of uncapped engines are left out.
func Margins(ctx context.Context, dirs []string) ([]MarginRow, error) {
	type key struct {
		label string
		cap   int64
		model string
	}
	byCard := map[key]*MarginRow{}
	var order []key
	for _, dir := range dirs {
		run, err := results.LoadRun(ctx, dir)
		if err != nil {
			return nil, fmt.Errorf("margins: %w", err)
		}
		for _, name := range run.VariantNames() {
			vm := run.Manifest.Variant(name)
			card, ok := EmulatedCardOf(vm.Engine)
			if !ok {
				continue
			}
			k := key{card.Label, card.CapBytes, vm.Engine.Model}
			r := byCard[k]
			if r == nil {
				model, err := calculatorModel(card, vm.Engine.Model)
				if err != nil {
					return nil, fmt.Errorf("margins %s: %w", dir, err)
				}
				r = &MarginRow{Card: card, Model: model.Name}
				byCard[k] = r
				order = append(order, k)
			}
			for _, p := range run.Passes {
				if p.Variant == name && p.Complete() {
					r.Passes = append(r.Passes, marginPass(dir, run.Manifest.Sweep, p, card))
				}
			}
		}
	}
	var rows []MarginRow
	for _, k := range order {
		r := byCard[k]
		model, err := calculatorModel(r.Card, k.model)
		if err != nil {
			return nil, err
		}
		if err := r.judge(model); err != nil {
			return nil, err
		}
		rows = append(rows, *r)
	}
	slices.SortStableFunc(rows, func(a, b MarginRow) int { return cmp.Compare(a.Card.CapBytes, b.Card.CapBytes) })
	return rows, nil
}

// calculatorModel is the model the calculator sizes: the preset the engine
// names, else the config it reported.
func calculatorModel(c EmulatedCard, served string) (sizing.Model, error) {
	if c.CalculatorModel != "" {
		if m, ok := sizing.Preset(c.CalculatorModel); ok {
			return m, nil
		}
	}
	if len(c.HFConfig) > 0 {
		return sizing.ParseHFConfig(c.HFConfig, served)
	}
	return sizing.Model{}, fmt.Errorf("emulated card %q: the engine named no calculator model and no config", c.Label)
}

// kvFull is the KV usage from which a pool of capacity tokens cannot take
// another sequence of tokens: MarginKVFull, or less on a pool of few.
func kvFull(capacity int64, tokens float64) float64 {
	if capacity <= 0 {
		return MarginKVFull
	}
	return min(MarginKVFull, 1-tokens/float64(capacity))
}

// admissionFull is the KV usage from which a scheduler with the card's
// admission reserve admits no new sequence of tokens: the reserve and one
// more sequence's share of the pool are what is left free.
func admissionFull(c EmulatedCard, tokens float64) float64 {
	share := 0.0
	if c.KVCapacityTokens > 0 {
		share = tokens / float64(c.KVCapacityTokens)
	}
	return max(0, 1-c.reserve()-share)
}

func marginPass(dir string, sw extractbench.Sweep, p extractbench.Pass, card EmulatedCard) MarginPass {
	mp := MarginPass{Dir: dir, Mode: p.Mode, Level: p.Level, Requested: p.Level, Docs: p.Docs, MaxRunning: p.ObservedMaxRunning,
		MaxWaiting: p.ObservedMaxWaiting, Preemptions: p.Preemptions, PeakKV: p.PeakKVUsage, Memory: p.Failures.Of(extractbench.Memory),
		OutputsChanged: p.OutputsChanged, VerdictsChanged: p.VerdictsChanged}
	if p.Mode == extractbench.ModeContext {
		mp.Requested, mp.Class = sw.Concurrency, extractbench.LengthClassOf(p.Level)
	}
	if p.Docs > 0 {
		mp.MeanTokens = float64(p.PromptTokens+p.OutputTokens) / float64(p.Docs)
	}
	var why []string
	if mp.Memory > 0 {
		why = append(why, fmt.Sprintf("%d memory failures", mp.Memory))
	}
	if p.Preemptions != nil && *p.Preemptions > 0 {
		why = append(why, fmt.Sprintf("%d preemptions", *p.Preemptions))
	}
	heldBack := p.ObservedMaxRunning != nil && *p.ObservedMaxRunning < int64(min(mp.Requested, int(p.Docs)))
	switch {
	case !heldBack || p.PeakKVUsage == nil:
	case *p.PeakKVUsage >= kvFull(card.KVCapacityTokens, mp.MeanTokens):
		why = append(why, fmt.Sprintf("running %d of %d requested, %s waiting, KV %.0f%%", *p.ObservedMaxRunning, mp.Requested,
			optInt(p.ObservedMaxWaiting), *p.PeakKVUsage*100))
	case card.reserve() > 0 && *p.PeakKVUsage >= admissionFull(card, mp.MeanTokens):
		why = append(why, fmt.Sprintf("running %d of %d requested, %s waiting, KV %.0f%%: the scheduler admits no more (it keeps %.0f%% of the pool free)",
			*p.ObservedMaxRunning, mp.Requested, optInt(p.ObservedMaxWaiting), *p.PeakKVUsage*100, card.reserve()*100))
	}
	mp.Saturated = len(why) > 0
	switch {
	case mp.Saturated:
		mp.Evidence = joinSemi(why)
	case heldBack:
		mp.Evidence = fmt.Sprintf("running %d of %d requested with KV at %s: held back, not by memory", *p.ObservedMaxRunning, mp.Requested, optPct(p.PeakKVUsage))
	default:
		mp.Evidence = fmt.Sprintf("all ran: running %s of %d, KV %s", optInt(p.ObservedMaxRunning), mp.Requested, optPct(p.PeakKVUsage))
	}
	return mp
}

// judge finds the boundary in the passes and puts the calculator beside it.
func (r *MarginRow) judge(model sizing.Model) error {
	slices.SortStableFunc(r.Passes, func(a, b MarginPass) int { return cmp.Compare(a.Requested, b.Requested) })
	longest := 0.0
	for _, p := range r.Passes {
		longest = max(longest, p.MeanTokens)
	}
	// The boundary: the most running in a pass held back with the KV cache full, where the pool
	// is what stopped admission; only without such a pass, in one that preempted or failed
	// (sequences admitted on their prompt's blocks can overshoot what their growth leaves).
	var ref, clean, other *MarginPass // ref: the pass whose documents the context comes from
	for i := range r.Passes {
		p := &r.Passes[i]
		if p.MaxRunning == nil || p.MeanTokens < marginSameContext*longest {
			continue // another context's boundary: evidence, not this one
		}
		run := *p.MaxRunning
		switch {
		case p.Saturated && p.Memory == 0 && (p.Preemptions == nil || *p.Preemptions == 0):
			if clean == nil || run > *clean.MaxRunning {
				clean = p
			}
		case p.Saturated:
			if other == nil || run > *other.MaxRunning {
				other = p
			}
		case !r.Reached && int(run) >= r.Measured:
			r.Measured, ref = int(run), p
		}
		if p.Saturated {
			r.Reached = true
		}
	}
	if b := cmp.Or(clean, other); b != nil {
		r.Measured, ref = int(*b.MaxRunning), b
	}
	if ref == nil && len(r.Passes) > 0 {
		ref = &r.Passes[len(r.Passes)-1]
	}
	if ref == nil || ref.MeanTokens <= 0 {
		return fmt.Errorf("emulated card %q: no complete pass with tokens to size", r.Card.Label)
	}
	r.ContextTokens = int(math.Round(ref.MeanTokens))
	gpu := sizing.GPU{Name: r.Card.Card, MemoryBytes: r.Card.CapBytes}
	// The calculator sizes the card at the share the engine sized its pool to (its
	// --utilisation), not at the default, so that both size the same budget.
	e, err := sizing.Calculate(sizing.Inputs{Model: model, ContextTokens: r.ContextTokens, Concurrency: 1, GPUs: []sizing.GPU{gpu},
		Utilisation: r.Card.Utilisation, AdmissionReserve: r.Card.reserve()})
	if err != nil {
		return fmt.Errorf("emulated card %q: %w", r.Card.Label, err)
	}
	f := e.Fits[0]
	r.Fits, r.Predicted, r.PredictedWithMargin = f.Fits, f.MaxConcurrencyNoMargin, f.MaxConcurrency
	r.Command = fmt.Sprintf("extractbench memory -model %s -context %d -gpus '%s=%g'", r.Model, r.ContextTokens, r.Card.Card, float64(r.Card.CapBytes)/sizing.GB)
	if g, ok := sizing.FindGPU(r.Card.Card); ok && math.Abs(float64(g.Bytes()-r.Card.CapBytes)) <= 0.001*float64(g.Bytes()) {
		r.Command = fmt.Sprintf("extractbench memory -model %s -context %d -gpus '%s'", r.Model, r.ContextTokens, g.Name)
	}
	if u := r.Card.Utilisation; u > 0 && u != sizing.DefaultUtilisation {
		r.Command += fmt.Sprintf(" -utilisation %g", u)
	}
	if res := r.Card.reserve(); res > 0 {
		r.Command += fmt.Sprintf(" -admission-reserve %g", res)
	}
	if bs := r.Card.BlockSize; bs > 0 {
		r.EnginePool = r.Card.NumBlocks / ((r.ContextTokens + bs - 1) / bs)
	}
	r.Source, r.Recommended = "predicted", r.PredictedWithMargin
	if r.Reached && r.Measured > 0 {
		d := float64(r.Predicted-r.Measured) / float64(r.Measured) * 100
		r.DiffPct = &d
		r.Source, r.Recommended = "measured", max(1, int(math.Floor(float64(r.Measured)*(1-sizing.DefaultMargin))))
	}
	kvCalc := f.UsableBytes - e.FixedBytes()
	r.Terms = fmt.Sprintf("weights %s engine / %s calculator; outside PyTorch %s / runtime overhead %s; activations %s / %s (prefill) + %s logits a sequence; KV pool %s tokens / %s",
		gib(r.Card.WeightsBytes), gib(e.WeightBytes), gib(r.Card.OutsideTorch), gib(e.OverheadBytes), gib(r.Card.ActivationBytes), gib(e.PrefillBytes),
		gib(e.LogitBytesPerSeq), numfmt.GroupDigits(r.Card.KVCapacityTokens), numfmt.GroupDigits(max(0, kvCalc)/max(1, e.KVBytesPerToken)))
	if res := r.Card.reserve(); res > 0 {
		r.Terms += fmt.Sprintf("; admission reserve %.0f%% of the pool (%s), in the calculator too", res*100, r.Card.Scheduler)
	}
	if c := r.Card; c.AfterStartAllocated > 0 {
		pool := int64(c.NumBlocks) * int64(c.BlockSize) * c.KVBytesPerToken
		r.Terms += fmt.Sprintf("; the started engine held %s allocated (%s reserved): %s beyond weights and KV pool", gib(c.AfterStartAllocated),
			gib(c.AfterStartReserved), gib(c.AfterStartAllocated-c.WeightsBytes-pool))
	}
	return nil
}

// Verdict is the row's agreement in words: within MarginWithin, differs, or
// not measured.
func (r MarginRow) Verdict() string {
	switch {
	case r.DiffPct == nil:
		return fmt.Sprintf("boundary not reached (ran %d at most): predicted only", r.Measured)
	case math.Abs(*r.DiffPct) <= MarginWithin*100:
		return fmt.Sprintf("calculator within %.0f%%", MarginWithin*100)
	}
	return fmt.Sprintf("calculator off by %+.1f%%: see its terms", *r.DiffPct)
}
