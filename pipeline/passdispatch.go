package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/pipeline/client"
	"github.com/extractbench/extractbench/pipeline/dispatch"
	"github.com/extractbench/extractbench/results"
)

// passDispatch is the run's side of one pass for package dispatch
// (dispatch.Batcher): a request is read back, sent to the least-loaded
// replica, scored and kept by the passRun, as the dispatcher decides when.
type passDispatch struct {
	ctx  context.Context // the pass's: the batch decision is recorded on it
	pass *passRun
	self *clientSelf
	// planned is a rate pass's schedule (Plan), which its requests name
	// on the engine clock.
	planned []int64
}

// request is one document's request while dispatch holds it.
type request struct {
	i        int // its place in the pass's send order
	d        corpus.Document
	resp     extractbench.Response
	endpoint string
	rec      extractbench.Record
}

var _ dispatch.Batcher[request] = (*passDispatch)(nil)

func (p *passDispatch) Len() int   { return p.pass.todo.Len() }
func (p *passDispatch) Died() bool { return p.pass.e.died() }
func (p *passDispatch) Now() int64 { return p.pass.rs.clock.Now() }

// Plan starts a rate pass's schedule a millisecond from now on the wall
// clock, so that the first send is on time; at once on the engine clock,
// whose idle engine waits for the first request without moving.
func (p *passDispatch) Plan(offsets []int64) []int64 {
	start := p.Now()
	if p.pass.rs.clock.Engine() == nil {
		start += int64(time.Millisecond)
	}
	p.planned = make([]int64, len(offsets))
	for i, o := range offsets {
		p.planned[i] = start + o
	}
	return p.planned
}

func (p *passDispatch) Sleep(ctx context.Context, ns int64) bool {
	return p.pass.rs.clock.Sleep(ctx, ns)
}

// BeforeSend runs the test hook that slows the client, if any.
func (p *passDispatch) BeforeSend() {
	if f := p.pass.rs.opts.BeforeSend; f != nil {
		f()
	}
}

func (p *passDispatch) Read(i int) (request, bool) {
	d, ok := p.pass.rs.readDoc(p.pass.todo.At(i))
	return request{i: i, d: d}, ok
}

func (p *passDispatch) Send(r *request, sched int64) bool {
	var ok bool
	r.resp, r.endpoint, ok = p.pass.e.send(p.lockstep(r), r.d, sched)
	return ok
}

// lockstep is the context r is sent under: on an engine clock, with its
// place in the pass (client.WithLockstep), so that the simulated engine
// steps only once every request this pass has promised is in. A rate
// pass's request names its planned arrival and the next one's; its
// synchronous baseline is a closed loop of one.
func (p *passDispatch) lockstep(r *request) context.Context {
	rs, k := p.pass.rs, p.pass.key
	ctx := rs.intr.reqs
	if rs.clock.Engine() == nil || k.Mode == extractbench.ModeBatch {
		return ctx
	}
	l := extractbench.Lockstep{
		Pass: fmt.Sprintf("%s.%s.%s.%d.%d", k.RunID, k.Variant, k.Mode, k.Level, k.Repetition),
		N:    p.Len(), Level: max(p.pass.level, 1), Seq: r.i,
	}
	switch {
	case k.Mode == extractbench.ModeContext:
		l.Level = max(rs.proto.Sweep.Concurrency, 1)
	case k.Mode == extractbench.ModeRate && p.pass.level != extractbench.SyncLevel:
		l.Level, l.At = 0, p.planned[r.i]
		if r.i+1 < len(p.planned) {
			l.Next = p.planned[r.i+1]
		}
	}
	return client.WithLockstep(ctx, l)
}

func (p *passDispatch) Times(r *request) (sendNS, doneNS int64, failed bool) {
	return r.resp.SendNS, r.resp.DoneNS, r.resp.Transport.Kind != extractbench.TransportOK
}

func (p *passDispatch) Score(r *request) {
	r.rec = p.pass.rs.score(p.pass.v, p.pass.e, r.endpoint, r.d, r.resp)
}
func (p *passDispatch) Keep(r *request) { p.pass.keep(r.rec) }

func (p *passDispatch) Delay(sendNS, dueNS int64) { p.self.sent(sendNS, dueNS) }

// SendList sends the group as one /v1/completions call with a list of
// prompts.
func (p *passDispatch) SendList(group []request, sched int64) (ok, unsupported bool) {
	rs, e := p.pass.rs, p.pass.e
	prompts := make([]string, len(group))
	for i := range group {
		prompts[i] = rs.completionPrompt(group[i].d)
	}
	r := e.replicas.acquire(len(group))
	if r == nil {
		return false, false // every replica is dead: nothing is sent
	}
	rs.intr.begin(len(group))
	resps, err := r.client.Complete(rs.intr.reqs, rs.clock, sched, prompts, rs.generation())
	rs.intr.end(len(group))
	e.replicas.release(r, len(group))
	if errors.Is(err, client.ErrBatchUnsupported) {
		return true, true
	}
	for i := range group {
		e.checkReplica(r, resps[i].Transport)
		rec := rs.score(p.pass.v, e, r.name, group[i].d, resps[i])
		rec.ExpectedPromptTokens = nil // a plain-text prompt, no chat template: the tokenizer's count of a chat prompt is not its count
		p.pass.keep(rec)
	}
	return true, false
}

// Barrier records that the engine takes no list of prompts.
func (p *passDispatch) Barrier() {
	p.pass.rs.decision(p.ctx, p.pass.v.Name, results.DecisionBatchMode, p.pass.level, p.pass.level, "the engine does not accept a list of prompts on /v1/completions; sending B simultaneous chat requests with a barrier")
}

// Exchange sends one chat request of a barrier batch.
func (p *passDispatch) Exchange(r *request, sched int64) bool {
	e := p.pass.e
	rep := e.replicas.acquire(1)
	if rep == nil {
		return false // every replica is dead: never sent
	}
	rec := e.exchange(p.pass.rs.intr.reqs, rep, r.d, sched)
	e.replicas.release(rep, 1)
	p.pass.keep(rec)
	return true
}
