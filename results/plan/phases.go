package plan

import (
	"context"
	"fmt"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// Phases is a variant's device memory by phase, read from its baseline
// pass (one request at a time, so the phases do not overlap): after load
// (samples before the first request), prefill of the long documents
// (samples between sending one and its first token) and generation
// (samples between any request's first token and its end). A nil figure
// means no sample fell in the phase: the telemetry did not permit it.
type Phases struct {
	Level           int    `json:"level"`
	Repetition      int    `json:"repetition"`
	AfterLoadBytes  *int64 `json:"after_load_bytes"`
	AfterLoadTorch  *int64 `json:"after_load_torch_allocated_bytes"`
	LongPrefillPeak *int64 `json:"long_prefill_peak_bytes"`
	GenerationPeak  *int64 `json:"generation_peak_bytes"`
	Samples         int    `json:"samples"`
}

// MeasurePhases reads each variant's phases from run's telemetry in dir.
func MeasurePhases(ctx context.Context, run *results.RunData) (map[string]Phases, error) {
	rd, err := results.OpenReadOnly(ctx, run.Dir)
	if err != nil {
		return nil, fmt.Errorf("read phases: %w", err)
	}
	defer rd.Close()
	have, err := rd.TelemetryPasses(ctx, run.Run.RunID)
	if err != nil {
		return nil, fmt.Errorf("read phases: %w", err)
	}
	out := map[string]Phases{}
	for _, s := range run.Series() {
		base := s.Recommendation.BaselineLevel
		if base == 0 {
			continue
		}
		key, ok := firstTelemetryPass(run, have, s.Variant, s.Mode, base)
		if !ok {
			continue
		}
		samples, err := rd.Telemetry(ctx, key, extractbench.MetricGPUMemUsed, extractbench.MetricTorchAlloc)
		if err != nil {
			return nil, fmt.Errorf("read phases of %s: %w", s.Variant, err)
		}
		recs, err := rd.Requests(ctx, run.Run.RunID, results.RequestFilter{Variant: s.Variant, Mode: s.Mode, Level: base, Repetition: key.Repetition})
		if err != nil {
			return nil, fmt.Errorf("read phases of %s: %w", s.Variant, err)
		}
		out[s.Variant] = PhasesOf(samples, recs, base, key.Repetition)
	}
	return out, nil
}

// firstTelemetryPass is the lowest complete repetition of a level that has telemetry.
func firstTelemetryPass(run *results.RunData, have map[extractbench.PassKey]bool, variant string, mode extractbench.Mode, level int) (extractbench.PassKey, bool) {
	best := extractbench.PassKey{}
	for _, p := range run.Passes {
		k := extractbench.PassKey{RunID: run.Run.RunID, Variant: variant, Mode: mode, Level: level, Repetition: p.Repetition}
		if p.Variant == variant && p.Mode == mode && p.Level == level && p.Complete() && have[k] &&
			(best.Repetition == 0 || p.Repetition < best.Repetition) {
			best = k
		}
	}
	return best, best.Repetition > 0
}

// PhasesOf splits one pass's samples into phases by its requests' times.
func PhasesOf(samples []results.TelemetrySample, recs []extractbench.Record, level, rep int) Phases {
	ph := Phases{Level: level, Repetition: rep, Samples: len(samples)}
	first := int64(-1)
	for _, r := range recs {
		if r.SendNS > 0 && (first < 0 || r.SendNS < first) {
			first = r.SendNS
		}
	}
	in := func(t int64, from, to int64) bool { return from > 0 && to >= from && t >= from && t <= to }
	for _, s := range samples {
		v := int64(s.Value)
		if first > 0 && s.TNS < first {
			switch s.Metric {
			case extractbench.MetricGPUMemUsed:
				ph.AfterLoadBytes = maxPtr(ph.AfterLoadBytes, v)
			case extractbench.MetricTorchAlloc:
				ph.AfterLoadTorch = maxPtr(ph.AfterLoadTorch, v)
			}
		}
		if s.Metric != extractbench.MetricGPUMemUsed {
			continue
		}
		for _, r := range recs {
			if r.LengthClass == "long" && in(s.TNS, r.SendNS, r.FirstTokenNS) {
				ph.LongPrefillPeak = maxPtr(ph.LongPrefillPeak, v)
			}
			if in(s.TNS, r.FirstTokenNS, r.DoneNS) {
				ph.GenerationPeak = maxPtr(ph.GenerationPeak, v)
			}
		}
	}
	return ph
}

func maxPtr(p *int64, v int64) *int64 {
	if p == nil || v > *p {
		return &v
	}
	return p
}
