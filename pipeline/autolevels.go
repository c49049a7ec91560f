package pipeline

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
)

// autoLevels is an auto rate sweep's step between its synchronous baseline
// and its rates: a saturation probe (one recorded pass, phase probe, at a
// rate far above capacity: every document arrives within about one
// synchronous request's time) measures the saturated throughput, the
// requests it served per second (a request refused at once is not served); then
// sweep.auto_levels rates are spaced from the synchronous rate up to it
// (extractbench.ChooseAutoLevels), recorded as a decision and in the variant's
// manifest. It returns nil, nil when interrupted before the rates are known.
func (vr *variantRun) autoLevels(ctx context.Context) ([]int, error) {
	bg := context.WithoutCancel(ctx)
	syncRates, err := vr.syncRates(bg)
	if err != nil {
		return nil, err
	}
	if len(syncRates) == 0 {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, fmt.Errorf("levels: auto: no complete synchronous pass to measure the synchronous rate from")
	}
	syncRate := eval.Describe(syncRates).P50
	probe := AutoProbeLevel(syncRate, vr.rs.corpus.Len())
	if ctx.Err() != nil {
		return nil, nil
	}
	satRate, probeWhat, err := vr.saturationProbe(ctx, probe)
	if err != nil || satRate == 0 {
		return nil, err
	}
	n := vr.rs.proto.Sweep.AutoLevels
	chosen := extractbench.ChooseAutoLevels(syncRate, satRate, n, probe)
	if len(chosen) == 0 {
		return nil, fmt.Errorf("levels: auto: no rate between the synchronous rate %.2f/s and the saturated throughput %.2f/s below the probe's %d/s", syncRate, satRate, probe)
	}
	names := make([]string, len(chosen))
	for i, l := range chosen {
		names[i] = eval.LevelName(extractbench.ModeRate, l)
	}
	vr.rs.decision(bg, vr.v.Name, results.DecisionAutoLevels, probe, slices.Max(chosen), fmt.Sprintf(
		"levels: auto: synchronous rate %.2f/s, saturated throughput %.2f/s (probe at %d/s, %s); %d rates spaced evenly up to it (sweep.auto_levels=%d, whole requests/s): %s",
		syncRate, satRate, probe, probeWhat, len(chosen), n, strings.Join(names, ", ")))
	auto := &extractbench.AutoLevels{SyncRate: syncRate, ProbeLevel: probe, SaturatedRate: satRate, Levels: chosen}
	if err := vr.recordAutoLevels(bg, auto); err != nil {
		return nil, err
	}
	return chosen, nil
}

// syncRates are the rates (documents per second) of the variant's
// complete synchronous passes.
func (vr *variantRun) syncRates(ctx context.Context) ([]float64, error) {
	passes, err := vr.rs.store.Passes(ctx, vr.rs.runID)
	if err != nil {
		return nil, fmt.Errorf("read the synchronous passes: %w", err)
	}
	var rates []float64
	for _, p := range passes {
		if p.Variant == vr.v.Name && p.Mode == extractbench.ModeRate && p.Level == extractbench.SyncLevel && p.Complete() && p.DurationNS > 0 {
			rates = append(rates, float64(p.Docs)/(float64(p.DurationNS)/1e9))
		}
	}
	return rates, nil
}

// saturationProbe runs the probe pass at rate probe and returns the
// saturated throughput, the requests the engine served per second, and
// what the probe was, in words. A rate of 0 with no error: interrupted.
func (vr *variantRun) saturationProbe(ctx context.Context, probe int) (rate float64, what string, err error) {
	p, err := vr.runPass(ctx, probe, 1, extractbench.PhaseProbe, 0)
	if err != nil {
		return 0, "", err
	}
	if p == nil || !p.Complete() || p.DurationNS <= 0 {
		if ctx.Err() != nil {
			return 0, "", nil
		}
		return 0, "", fmt.Errorf("levels: auto: the saturation probe at %d/s did not complete", probe)
	}
	// Capacity is what the engine served: a request it refused at once
	// (429 above a few in flight) comes back fast and would pass for
	// throughput.
	served, err := vr.servedRequests(context.WithoutCancel(ctx), vr.rs.passKey(vr.v, probe, 1))
	if err != nil {
		return 0, "", fmt.Errorf("levels: auto: read the saturation probe's requests: %w", err)
	}
	what = "one pass"
	if served < p.Docs {
		what = fmt.Sprintf("one pass: %d of %d requests served, the %d the engine refused or failed (%s) are not capacity",
			served, p.Docs, p.Docs-served, failureList(p.Failures))
	}
	if served == 0 {
		return 0, "", fmt.Errorf("levels: auto: the saturation probe at %d/s had no request served (%s): no saturated throughput to space rates up to", probe, what)
	}
	return float64(served) / (float64(p.DurationNS) / 1e9), what, nil
}

// recordAutoLevels writes the chosen rates into the variant's manifest.
func (vr *variantRun) recordAutoLevels(ctx context.Context, auto *extractbench.AutoLevels) error {
	m := vr.rs.manifest
	idx := slices.IndexFunc(m.Variants, func(m extractbench.VariantManifest) bool { return m.Name == vr.v.Name })
	if idx < 0 {
		return nil
	}
	m.Variants[idx].AutoLevels = auto
	if err := vr.rs.store.UpdateManifest(ctx, vr.rs.runID, m); err != nil {
		return fmt.Errorf("record the chosen rates in the manifest: %w", err)
	}
	return nil
}

// servedRequests counts the pass's requests the engine served through
// (extractbench.Transport.Served).
func (vr *variantRun) servedRequests(ctx context.Context, key extractbench.PassKey) (int64, error) {
	var n int64
	err := vr.rs.store.EachPassRecord(ctx, key, func(r *extractbench.Record) {
		if r.Served() {
			n++
		}
	})
	return n, err
}

// failureList is "error 296, memory 1": the classes a pass's failures fell in.
func failureList(c extractbench.FailureCounts) string {
	var parts []string
	for _, f := range extractbench.Failures {
		if n := c.Of(f); n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", f, n))
		}
	}
	if len(parts) == 0 {
		return "no failure class"
	}
	return strings.Join(parts, ", ")
}

// AutoProbeFactor bounds an auto sweep's saturation probe from below: its
// rate is at least this many times the synchronous rate.
const AutoProbeFactor = 10

// AutoProbeLevel is the rate of an auto sweep's saturation probe: far above
// capacity, so that every one of docs documents arrives within about the
// time one synchronous request takes (and at least AutoProbeFactor times
// the synchronous rate): what the engine then completes per second is its
// saturated throughput. Whole requests per second, within the schema's
// bound on a level.
func AutoProbeLevel(syncRate float64, docs int) int {
	r := syncRate * float64(max(docs, AutoProbeFactor))
	return min(max(int(math.Ceil(r)), 2), 100000)
}
