package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/client"
	"github.com/extractbench/extractbench/pipeline/dispatch"
	"github.com/extractbench/extractbench/pipeline/passrow"
	"github.com/extractbench/extractbench/pipeline/telemetry"
)

// passRun is one pass being measured: one (variant, mode, level,
// repetition) over the pass's documents (passDocs), in its send order
// (passOrder). On resume it sends only the documents the pass has no row
// for, in the same order, then recomputes the pass's figures from all its
// rows (passrecord.go).
type passRun struct {
	vr         *variantRun
	rs         *runState
	v          *extractbench.Variant
	e          *engine
	key        extractbench.PassKey
	level, rep int
	phase      string
	retryOf    int // the level whose memory failures this pass retries lower (0 for a planned pass)

	docs      docList // every document of the pass, in send order
	todo      docList // of them, those not recorded yet
	orderSeed *int64  // the seed of the send order; nil for corpus order
	already   int     // documents recorded before this invocation (resume)
	shown     PassProgress
	faults    clientFaults
	gaps      *clientGaps // the client's own timeline (clientgap.go); nil on the engine clock
	frozen    []clientGap // the gaps it saw, once dispatch ended

	// tally is fed each record as keep stores it, under keepMu so that it
	// sees them in the store's order (passrow.Account.NewTally); nil in a
	// resumed run, whose passes are read back once (passrecord.go).
	tally  *passrow.Tally
	keepMu sync.Mutex
}

// dispatched is what a pass's dispatch leaves for its row.
type dispatched struct {
	transport string // how the requests went (dispatch.Run)
	err       error  // why dispatch stopped early, if it did
	tel       telemetry.Telemetry
	self      *clientSelf
}

// run measures the pass and records its row; the row is returned with the
// error of a pass cut short (dispatch stopped, the corpus changed, the
// engine died). A pass of a run that was never resumed is tallied as its
// records are stored; a resumed run's may hold rows of the attempt before,
// some of which the new ones replace in place (the fed order would not be
// the store's), so its passes are read back once, in the store's order.
func (p *passRun) run(ctx context.Context) (*extractbench.Pass, error) {
	if stored, err := p.plan(ctx); err != nil || stored != nil {
		return stored, err
	}
	// The warm-up or the passes before may have run on another engine than
	// the one pinned: an operator's upgrade under a long run.
	if err := p.e.checkIdentity(ctx, fmt.Sprintf("before the pass at level %d, repetition %d", p.level, p.rep)); err != nil { // engineidentity.go
		return nil, err
	}
	cacheReset := p.rs.resetCache(ctx, p.v, p.e, p.level, p.rep) // cachereset.go
	p.resetPeaks(ctx)
	if len(p.rs.resumes) == 0 {
		p.tally = p.rs.account().NewTally(p.e.replicas.names(), p.todo.Len())
	}
	d := p.dispatch(ctx)
	row, sent, err := p.record(context.WithoutCancel(ctx), d, cacheReset) // passrecord.go
	if err != nil {
		return nil, err
	}
	return &row, p.outcome(context.WithoutCancel(ctx), d.err, sent)
}

// plan finds the pass's documents in send order and those still to send.
// A pass finished before an interruption is returned as stored.
func (p *passRun) plan(ctx context.Context) (*extractbench.Pass, error) {
	done, err := p.rs.store.DoneDocs(ctx, p.key)
	if err != nil {
		return nil, fmt.Errorf("read finished documents of pass %s: %w", p.key, err)
	}
	p.docs, p.orderSeed = p.rs.passOrder(p.level, p.rep)
	p.todo, p.already = p.docs, done.Len() // shared, not copied, when nothing is done yet
	if done.Len() > 0 {
		p.todo = docList{c: p.rs.corpus, idx: []int32{}}
		for i := range p.docs.Len() {
			if !done.Has(p.docs.At(i).ID) {
				p.todo.idx = append(p.todo.idx, p.docs.pos(i))
			}
		}
	}
	if p.todo.Len() == 0 {
		if stored, err := p.rs.store.Pass(ctx, p.key); err == nil && stored != nil && stored.Status == "complete" {
			return stored, nil
		}
	}
	if done.Len() > 0 {
		p.rs.logf("%s: resuming pass level %d repetition %d: %d of %d documents already recorded", p.v.Name, p.level, p.rep, done.Len(), p.docs.Len())
	}
	return nil, nil
}

// resetPeaks asks every replica to forget its memory peaks, so that the
// pass's peaks are its own.
func (p *passRun) resetPeaks(ctx context.Context) {
	for _, r := range p.e.replicas.all {
		_, err := r.client.ResetPeaks(ctx)
		switch {
		case errors.Is(err, client.ErrNoAnswer):
			p.rs.noAnswer(ctx, p.v, r.name, err.Error(), fmt.Sprintf("the pass at level %d, repetition %d goes on: its memory peaks may include what came before", p.level, p.rep))
		case err != nil:
			p.rs.logf("%s: warning: reset engine memory peaks at %s: %v", p.v.Name, r.name, err)
		}
	}
}

// dispatch sends the pass's documents as its mode decides (package
// dispatch), with the engine's telemetry sampled and the client's own
// delays measured meanwhile.
func (p *passRun) dispatch(ctx context.Context) dispatched {
	rs, e := p.rs, p.e
	flush := func(samples []telemetry.Sample) error { // a long pass's samples are written as they come
		return rs.store.AddTelemetry(context.WithoutCancel(ctx), p.key, toSamples(samples))
	}
	active := func() bool { return rs.intr.count() > 0 } // the engine's peaks are read while the pass's requests run
	sampler := telemetry.StartSampler(ctx, rs.clock, telemetry.SamplerConfig{Family: e.family.get(), Endpoints: e.metricsEndpoints(), Interval: time.Duration(rs.proto.TelemetryInterval),
		NvidiaSMI: e.nvidiaSMI, Flush: flush, Active: active}, e.client.HTTPClient())
	rs.intr.watchPass(p.todo.Len(), sampler.Kick) // sampled at its first send and its last, however short it is
	p.shown = p.show()
	self := startClientSelf(e.inproc != nil)
	p.gaps = watchClientGaps(rs.clock)
	transport, err := dispatch.Run(ctx, rs.proto.Sweep, rs.proto.Generation.Seed, p.level, p.rep,
		&passDispatch{ctx: ctx, pass: p, self: self})
	self.stop()
	p.frozen = p.gaps.end()
	rs.intr.watchPass(0, nil)
	return dispatched{transport: transport, err: err, tel: sampler.Stop(), self: self}
}

// show starts the pass on the run's display (Options.Display), unless the
// run is quiet.
func (p *passRun) show() PassProgress {
	rs := p.rs
	rs.passNo++
	if rs.opts.Quiet {
		return noPass{}
	}
	sw := rs.proto.Sweep
	return rs.display().Pass(rs.progress, PassStart{Place: rs.passNo, Planned: rs.plannedPasses(), Variant: p.v.Name,
		Mode: sw.Mode, Phase: p.phase, Level: p.level, Concurrency: sw.Concurrency,
		Repetition: p.rep, Repetitions: sw.Repetitions, Total: p.docs.Len(), Already: p.already})
}

// plannedPasses is the run's passes as planned: variants × levels ×
// repetitions (retries below a failed level come on top).
func (rs *runState) plannedPasses() int {
	n := 0
	for _, v := range rs.proto.Variants {
		n += rs.manifest.PlannedPasses(v.Name)
	}
	return n
}

// keep stores a record. A request cut by the run's own interruption, or
// failed in the client itself, is stored as it is (no class, no verdict):
// readers leave it out, and resume sends the document again and replaces
// the row. The client's failures are counted for the pass (client_bound).
func (p *passRun) keep(rec extractbench.Record) {
	rec.Level, rec.Repetition = p.key.Level, p.key.Repetition
	p.gaps.frozen(&rec)
	p.rs.refusedUsage.note(p.key, &rec)
	p.keepMu.Lock()
	p.rs.store.Add(rec) // in the order the tally sees: the writer stores the records in the order Add hands them over
	if p.tally != nil {
		p.tally.Add(&rec)
	}
	p.keepMu.Unlock()
	switch {
	case rec.Kind == extractbench.TransportClient:
		p.faults.add(rec.Detail)
	case rec.Kind.Measured():
		p.shown.Add(rec)
	}
}

// clientFaults counts the requests of a pass that failed in the client
// itself: no document of the engine's.
type clientFaults struct {
	mu   sync.Mutex
	n    int
	last string // the last one's detail
}

func (f *clientFaults) add(detail string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	f.last = detail
}

// count is how many requests failed in the client, and the last one's detail.
func (f *clientFaults) count() (int, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n, f.last
}
