package report

import (
	"context"
	"fmt"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/numfmt"
	"github.com/extractbench/extractbench/results/plan"
	"github.com/extractbench/extractbench/sizing"
)

// Options are the report's optional inputs.
type Options struct {
	// Prices, when set, prices each variant at its recommended level:
	// cost per 1,000 accepted documents and the 3/7/30-day rentals.
	Prices *sizing.Prices
}

// decisionLines are the renter's lines of a series' selection sheet: the
// measured environment set against the card's compatibility table, memory
// per phase, and the cost when a price file was given.
type decision struct {
	phases map[string]plan.Phases
	plans  map[string]sizing.PlanResult
	prices *sizing.Prices
	note   string // why a figure is missing, once for the page
}

// decide gathers what the sheets need; a figure that cannot be had is said
// so in its line, never guessed.
func decide(ctx context.Context, d *dataset, opts Options) decision {
	dc := decision{prices: opts.Prices, plans: map[string]sizing.PlanResult{}}
	if ph, err := plan.MeasurePhases(ctx, d.RunData); err == nil {
		dc.phases = ph
	} else {
		dc.note = "memory per phase unavailable: " + err.Error()
	}
	if plans, err := plan.PlanRun(d.RunData, max(d.Manifest.Corpus.Count, 1), sizing.DefaultRentalDays); err == nil {
		for _, p := range plans {
			dc.plans[p.Variant+"\x00"+string(p.Mode)] = p
		}
	}
	return dc
}

// lines returns the sheet lines of one series.
func (dc decision) lines(m *extractbench.Manifest, s *series) []kv {
	vm := m.Variant(s.Variant)
	var out []kv
	if vm.Engine.Simulated || vm.GPU.Source == "builtin-profile" {
		out = append(out, kv{"Environment fit (card, driver, CUDA, engine build, precision)", "simulated: the card is modelled, there is no driver or CUDA to check"})
		return append(out, dc.memoryAndCost(m, s, vm)...)
	}
	if cpuEngine(vm) {
		out = append(out, kv{"Environment fit (card, driver, CUDA, engine build, precision)", cpuEngineLine + ": no card, driver or CUDA to check; engine " + orNone(vm.Engine.Version)})
		return append(out, dc.memoryAndCost(m, s, vm)...)
	}
	ec := sizing.CheckEnvironment(vm.GPU.Name, vm.GPU.CUDA, vm.GPU.Driver, vm.Engine.Version, sizing.VariantPrecision(vm), sizing.BF16)
	fit := fmt.Sprintf("%s (%s); driver %s, CUDA %s; engine %s", orNone(ec.GPU), orNone(ec.Arch), orNone(ec.Driver), orNone(ec.CUDA), orNone(ec.Engine))
	if len(ec.Problems) == 0 {
		fit = "ok: " + fit
	} else {
		fit = "CHECK: " + strings.Join(ec.Problems, "; ") + " — " + fit
	}
	out = append(out, kv{"Environment fit (card, driver, CUDA, engine build, precision)", fit})
	return append(out, dc.memoryAndCost(m, s, vm)...)
}

// memoryAndCost are the sheet's memory-per-phase and cost lines.
func (dc decision) memoryAndCost(m *extractbench.Manifest, s *series, vm extractbench.VariantManifest) []kv {
	var out []kv
	if ph, ok := dc.phases[s.Variant]; ok {
		out = append(out, kv{fmt.Sprintf("Memory per phase (device, %s, repetition %d)", eval.LevelLabel(s.Mode, ph.Level), ph.Repetition),
			fmt.Sprintf("after load %s (torch allocated %s); long-document prefill peak %s; generation peak %s",
				fmtGiB(ph.AfterLoadBytes), fmtGiB(ph.AfterLoadTorch), fmtGiB(ph.LongPrefillPeak), fmtGiB(ph.GenerationPeak))})
	} else {
		out = append(out, kv{"Memory per phase", "not measured (no telemetry on the baseline pass)" + strings.TrimPrefix(" "+dc.note, " ")})
	}
	plan, planned := dc.plans[s.Variant+"\x00"+string(s.Mode)]
	switch {
	case !planned || plan.Level == 0:
		out = append(out, kv{"Cost", "no usable level to price"})
	case dc.prices == nil:
		out = append(out, kv{"Cost", "no price file (extractbench report -prices FILE; prices.example.yaml shows the format)"})
	default:
		price, err := dc.prices.For(vm.GPU.Name)
		if err != nil {
			out = append(out, kv{"Cost", err.Error()})
			break
		}
		plan.AddCost(dc.prices, price, 0)
		c := plan.Cost
		line := fmt.Sprintf("%.2f per 1,000 accepted documents at %s (%.2f per card-hour; %s)", c.PerThousandAccepted, eval.LevelLabel(s.Mode, plan.Level), price, c.Label)
		var rentals []string
		for _, r := range plan.Rentals {
			if r.Cost != nil {
				rentals = append(rentals, fmt.Sprintf("%d days: %d card(s), %.2f", r.Days, r.CardsNeeded, *r.Cost))
			}
		}
		if len(rentals) > 0 {
			line += fmt.Sprintf("; the %s-document corpus in %s", numfmt.GroupDigits(int64(plan.CorpusDocs)), strings.Join(rentals, ", "))
		}
		out = append(out, kv{"Cost", line})
	}
	return out
}
