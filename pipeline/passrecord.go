package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/passrow"
	"github.com/extractbench/extractbench/pipeline/telemetry"
	"github.com/extractbench/extractbench/results"
)

// record writes what the pass left once its dispatch ended (ctx: the run's,
// without cancellation: an interruption still finishes the writes): its
// telemetry, its requests, their expected prompt counts, and its row, the
// pass's figures tallied from every request it has stored. sent is how
// many of its documents have a row.
func (p *passRun) record(ctx context.Context, d dispatched, cacheReset string) (row extractbench.Pass, sent int64, err error) {
	rs, key := p.rs, p.key
	p.telemetryErrors(ctx, d.tel)
	rs.numbersRefused(ctx, p.v, key, d.tel)
	if err := errors.Join(d.tel.FlushErr, rs.store.AddTelemetry(ctx, key, toSamples(d.tel.Samples))); err != nil {
		return row, 0, fmt.Errorf("record telemetry of pass %s: %w", key, err)
	}
	if err := rs.store.Flush(ctx); err != nil {
		return row, 0, fmt.Errorf("write requests of pass %s: %w", key, err)
	}
	if err := rs.fillExpected(ctx, key); err != nil {
		return row, 0, fmt.Errorf("record expected prompt tokens of pass %s: %w", key, err)
	}
	acct := rs.account()
	tally, err := p.tallied(ctx, acct)
	if err != nil {
		return row, 0, fmt.Errorf("tally pass %s: %w", key, err)
	}
	faults, lastFault := p.faults.count()
	complete := tally.Docs()+int64(faults) == int64(p.docs.Len())
	p.shown.Finish(complete)
	d.self.faults = faults
	row = acct.Row(key, p.phase, p.retryOf, p.level, tally, d.tel, d.transport, complete, d.self)
	row.CacheReset = cacheReset
	row.OrderSeed = p.orderSeed
	if faults > 0 {
		detail := fmt.Sprintf("pass level %d, repetition %d: %d of %d requests failed in the client itself (last: %s): left out of the engine's figures, the pass is client_bound, and -resume sends them again",
			p.level, p.rep, faults, p.docs.Len(), lastFault)
		rs.logf("%s: warning: %s", p.v.Name, detail)
		rs.event(ctx, p.v.Name, results.EventClientFaults, 0, detail)
	}
	if len(p.frozen) > 0 {
		detail := fmt.Sprintf("pass level %d, repetition %d: the client was frozen (%s): the requests in flight meanwhile are left out and -resume sends them again; the pass is client_bound",
			p.level, p.rep, gapsText(p.frozen))
		rs.logf("%s: warning: %s", p.v.Name, detail)
		rs.event(ctx, p.v.Name, results.EventClientFrozen, 0, detail)
		row.ClientBound = ptr(true)
	}
	if err := rs.store.PutPass(ctx, row); err != nil {
		return row, 0, fmt.Errorf("record pass %s: %w", key, err)
	}
	return row, tally.Docs(), nil
}

// tallied is the pass's tally: the one fed as its records were stored
// (keep), finished without reading a row back, or in a resumed run its
// rows read back once (passrow.Account.ReadPass).
func (p *passRun) tallied(ctx context.Context, acct *passrow.Account) (*passrow.Tally, error) {
	if p.tally == nil {
		return acct.ReadPass(ctx, p.key, p.e.replicas.names())
	}
	t := p.tally
	p.tally = nil // the pass's timings are let go with the row
	return t, acct.Finish(ctx, p.key, t)
}

// outcome is the error of a pass cut short, once its row is recorded:
// dispatch stopped (dispatchErr), a document could not be read back, or the
// engine died; nil for a pass that ran its course.
func (p *passRun) outcome(ctx context.Context, dispatchErr error, sent int64) error {
	missing, total := int64(p.docs.Len())-sent, p.docs.Len()
	if dispatchErr != nil {
		p.rs.logf("%s: %v", p.v.Name, dispatchErr)
		return fmt.Errorf("pass at level %d, repetition %d: dispatch stopped, %d of %d documents not recorded: %w", p.level, p.rep, missing, total, dispatchErr)
	}
	if err := p.rs.readFailure.err(); err != nil {
		return fmt.Errorf("pass at level %d, repetition %d: dispatch stopped, %d of %d documents not sent: %w", p.level, p.rep, missing, total, err)
	}
	if p.e.died() {
		return p.e.deadError(ctx, fmt.Sprintf("during the pass at level %d, repetition %d: dispatch stopped at once, %d of %d documents not sent",
			p.level, p.rep, missing, total))
	}
	return nil
}

// telemetryErrors says, on stderr and as an event, that a pass's engine
// metrics or device readings failed: the pass's engine figures (running,
// waiting, KV cache, captures, peaks) then come from the scrapes that
// worked, or are missing, and a reader must not take a missing figure for
// a zero.
func (p *passRun) telemetryErrors(ctx context.Context, tel telemetry.Telemetry) {
	var parts []string
	if tel.ScrapeErrors > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d metrics scrapes failed (last: %s)", tel.ScrapeErrors, tel.ScrapeErrors+tel.Scrapes, tel.LastScrapeError))
	}
	if tel.GPUErrors > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d nvidia-smi readings failed (last: %s)", tel.GPUErrors, tel.GPUErrors+tel.GPUSamples, tel.LastGPUError))
	}
	if len(parts) == 0 {
		return
	}
	detail := fmt.Sprintf("pass at level %d, repetition %d: %s", p.level, p.rep, strings.Join(parts, "; "))
	p.rs.logf("%s: warning: %s", p.v.Name, detail)
	p.rs.event(ctx, p.v.Name, results.EventTelemetryErrors, 0, detail)
}

func toSamples(in []telemetry.Sample) []results.TelemetrySample {
	out := make([]results.TelemetrySample, len(in))
	for i, s := range in {
		out[i] = results.TelemetrySample{TNS: s.TNS, Metric: s.Metric, Value: s.Value, Endpoint: s.Endpoint}
	}
	return out
}
