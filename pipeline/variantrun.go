package pipeline

import (
	"context"

	"github.com/extractbench/extractbench"
)

// variantRun is one variant being measured: its engine and its sweep's
// levels as the sweep goes (an auto sweep learns its rates, a memory
// failure ends or lowers the levels above it). It orchestrates the
// variant's phases and passes; each pass is a passRun.
type variantRun struct {
	rs     *runState
	v      *extractbench.Variant
	eng    *engine
	levels []int // the levels to measure, the baseline first
	stopAt int   // a level above which nothing runs, after a memory failure
}

// runVariant runs one variant's phases: load, warm-up, baseline, sweep.
func runVariant(ctx context.Context, rs *runState, v *extractbench.Variant) error {
	eng, err := startEngine(ctx, rs, v) // enginestart.go
	if err != nil {
		return err
	}
	defer eng.stop(context.WithoutCancel(ctx))
	if err := eng.pin(ctx); err != nil { // enginepin.go
		return err
	}
	vr := &variantRun{rs: rs, v: v, eng: eng}
	if err := vr.warmup(ctx); err != nil { // warmup.go
		return err
	}
	if eng.died() {
		return eng.deadError(context.WithoutCancel(ctx), "during the warm-up: no measured request was sent")
	}
	return vr.sweep(ctx)
}

// sweep measures the baseline and then each level of the sweep, its
// planned repetitions each, settling each level once measured (steady.go)
// and acting on its memory failures (memoryfailure.go).
func (vr *variantRun) sweep(ctx context.Context) error {
	sw := vr.rs.proto.Sweep
	vr.levels = vr.rs.levels()
	for li := 0; li < len(vr.levels); li++ {
		if li == 1 && sw.Auto {
			// The synchronous baseline is measured: probe the saturated
			// throughput, then space the sweep's rates between the two.
			chosen, err := vr.autoLevels(ctx) // autolevels.go
			if err != nil || chosen == nil {
				return err // nil: interrupted, resume measures the rest
			}
			vr.levels = append(vr.levels[:1], chosen...)
		}
		level := vr.levels[li]
		if vr.stopAt != 0 && level > vr.stopAt {
			if sw.OnMemoryFailure == "stop" {
				break // the sweep ended: its stop_sweep decision names the levels not run
			}
			vr.skipLevel(ctx, level)
			continue
		}
		memFailures, interrupted, err := vr.measureLevel(ctx, li, level)
		if err != nil || interrupted {
			return err
		}
		if ctx.Err() == nil {
			if err := vr.settleLevel(ctx, level); err != nil { // steady.go
				return err
			}
		}
		if li == 0 && sw.Auto && len(vr.levels) == 1 {
			vr.levels = append(vr.levels, 0) // the rates come when the probe has run
		}
		if err := vr.onMemoryFailures(ctx, li, level, memFailures); err != nil {
			return err
		}
	}
	return nil
}

// measureLevel runs the planned repetitions of the level at index li (the
// first is the baseline) and counts their memory failures. interrupted:
// the run was interrupted before a repetition began.
func (vr *variantRun) measureLevel(ctx context.Context, li, level int) (memFailures int, interrupted bool, err error) {
	phase := extractbench.PhaseSweep
	if li == 0 {
		phase = extractbench.PhaseBaseline
	}
	for rep := 1; rep <= vr.rs.proto.Sweep.Repetitions; rep++ {
		if ctx.Err() != nil {
			return memFailures, true, nil
		}
		p, err := vr.runPass(ctx, level, rep, phase, 0)
		if err != nil {
			return memFailures, false, err
		}
		if p != nil {
			memFailures += int(p.Failures.Of(extractbench.Memory))
		}
	}
	return memFailures, false, nil
}

// runPass measures one pass of the variant (passrun.go). retryOf is the
// level whose memory failures it retries lower (0 for a planned pass).
func (vr *variantRun) runPass(ctx context.Context, level, rep int, phase string, retryOf int) (*extractbench.Pass, error) {
	p := &passRun{vr: vr, rs: vr.rs, v: vr.v, e: vr.eng, key: vr.rs.passKey(vr.v, level, rep),
		level: level, rep: rep, phase: phase, retryOf: retryOf}
	return p.run(ctx)
}

// event records one of the variant's events.
func (vr *variantRun) event(ctx context.Context, kind string, valueNS int64, detail string) {
	vr.rs.event(ctx, vr.v.Name, kind, valueNS, detail)
}
