package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/pipeline/client"
	"github.com/extractbench/extractbench/pipeline/dispatch"
	"github.com/extractbench/extractbench/results"
)

// passDispatch is the run's side of one pass for package dispatch
// (dispatch.Batcher): a request is read back, sent to the least-loaded
// replica, scored and kept by the runState, as the dispatcher decides when.
type passDispatch struct {
	ctx   context.Context // the pass's: the batch decision is recorded on it
	rs    *runState
	v     *extractbench.Variant
	e     *engine
	level int
	key   extractbench.PassKey
	todo  docList
	bar   *passBar
	self  *clientSelf
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

func (p *passDispatch) Len() int    { return p.todo.Len() }
func (p *passDispatch) Died() bool  { return p.e.died() }
func (p *passDispatch) Now() int64  { return p.rs.clock.Now() }
func (p *passDispatch) BeforeSend() { p.rs.beforeSend() }

func (p *passDispatch) Read(i int) (request, bool) {
	d, ok := p.rs.readDoc(p.todo.At(i))
	return request{i: i, d: d}, ok
}

func (p *passDispatch) Send(r *request, sched int64) bool {
	var ok bool
	r.resp, r.endpoint, ok = p.rs.send(p.lockstep(r), p.v, p.e, r.d, sched)
	return ok
}

// lockstep is the context r is sent under: on an engine clock, with its
// place in the closed loop (client.WithLockstep), so that the simulated
// engine steps only once every request this pass has promised is in.
func (p *passDispatch) lockstep(r *request) context.Context {
	ctx := p.rs.intr.reqs
	if p.rs.clock.Engine() == nil || p.key.Mode == extractbench.ModeRate || p.key.Mode == extractbench.ModeBatch {
		return ctx
	}
	level := p.level
	if p.key.Mode == extractbench.ModeContext {
		level = p.rs.proto.Sweep.Concurrency
	}
	k := p.key
	return client.WithLockstep(ctx, extractbench.Lockstep{
		Pass: fmt.Sprintf("%s.%s.%s.%d.%d", k.RunID, k.Variant, k.Mode, k.Level, k.Repetition),
		N:    p.Len(), Level: max(level, 1), Seq: r.i,
	})
}

func (p *passDispatch) Times(r *request) (sendNS, doneNS int64, failed bool) {
	return r.resp.SendNS, r.resp.DoneNS, r.resp.Transport.Kind != extractbench.TransportOK
}

func (p *passDispatch) Score(r *request) { r.rec = p.rs.score(p.v, p.e, r.endpoint, r.d, r.resp) }
func (p *passDispatch) Keep(r *request)  { p.rs.keep(p.key, r.rec, p.bar) }

func (p *passDispatch) Delay(sendNS, dueNS int64) { p.self.sent(sendNS, dueNS) }

// SendList sends the group as one /v1/completions call with a list of
// prompts.
func (p *passDispatch) SendList(group []request, sched int64) (ok, unsupported bool) {
	rs, e := p.rs, p.e
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
		rs.checkReplica(p.v, e, r, resps[i].Transport)
		rec := rs.score(p.v, e, r.name, group[i].d, resps[i])
		rec.ExpectedPromptTokens = nil // a plain-text prompt, no chat template: the tokenizer's count of a chat prompt is not its count
		rs.keep(p.key, rec, p.bar)
	}
	return true, false
}

// Barrier records that the engine takes no list of prompts.
func (p *passDispatch) Barrier() {
	p.rs.decision(p.ctx, p.v.Name, results.DecisionBatchMode, p.level, p.level, "the engine does not accept a list of prompts on /v1/completions; sending B simultaneous chat requests with a barrier")
}

// Exchange sends one chat request of a barrier batch.
func (p *passDispatch) Exchange(r *request, sched int64) bool {
	rep := p.e.replicas.acquire(1)
	if rep == nil {
		return false // every replica is dead: never sent
	}
	rec := p.rs.exchange(p.rs.intr.reqs, p.v, p.e, rep, r.d, sched)
	p.e.replicas.release(rep, 1)
	p.rs.keep(p.key, rec, p.bar)
	return true
}
