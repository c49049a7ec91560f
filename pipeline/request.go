package pipeline

import (
	"context"
	"strings"
	"sync"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline/client"
	"github.com/extractbench/extractbench/results"
)

// send is one measured request of a pass (d read back: readDoc), to the
// least-loaded replica: on the run's request context (the in-flight
// requests finish after a first signal and are cancelled when the interrupt
// grace ends, then stored as interrupted), counted in flight. endpoint is the replica's name; ok is
// false when every replica is dead and nothing was sent.
func (e *engine) send(ctx context.Context, d corpus.Document, sched int64) (resp extractbench.Response, endpoint string, ok bool) {
	r := e.replicas.acquire(1)
	if r == nil {
		return resp, "", false
	}
	defer e.replicas.release(r, 1)
	rs := e.rs
	rs.intr.begin(1)
	defer rs.intr.end(1)
	resp = r.client.Chat(ctx, rs.clock, sched, rs.proto.Prompt.System, rs.userPrompt(d), rs.generation())
	e.checkReplica(r, resp.Transport)
	return resp, r.name, true
}

// exchange sends one document (read back: readDoc) to replica r and
// scores the answer.
func (e *engine) exchange(ctx context.Context, r *replica, d corpus.Document, sched int64) extractbench.Record {
	rs := e.rs
	rs.intr.begin(1)
	defer rs.intr.end(1)
	resp := r.client.Chat(ctx, rs.clock, sched, rs.proto.Prompt.System, rs.userPrompt(d), rs.generation())
	e.checkReplica(r, resp.Transport)
	return rs.score(e.v, e, r.name, d, resp)
}

// checkReplica drops a replica that stopped answering from dispatch (one of
// several: see replicaSet.failed) and records it; it returns once the
// replica's health is known, so that the caller's next request goes to a
// live one.
func (e *engine) checkReplica(r *replica, tr extractbench.Transport) {
	if dead, detail := e.replicas.failed(e.rs.intr.reqs, r, tr); dead && e.replicas.multi() {
		e.rs.logf("%s: %s", e.v.Name, detail)
		e.rs.event(context.Background(), e.v.Name, results.EventReplicaDead, 0, detail)
	}
}

// score judges one answer of the replica named endpoint to document d,
// read back (readDoc) before it was sent.
func (rs *runState) score(v *extractbench.Variant, e *engine, endpoint string, d corpus.Document, resp extractbench.Response) extractbench.Record {
	// A failure the engine's death explains is memory only with evidence
	// (engine.attribute); an HTTP answer, even a 404, came from a live server.
	var evidence string
	resp.Transport, evidence = e.attribute(resp.Transport)
	resp.Transport = e.deadEngine(resp.Transport, evidence)
	eval.RefuseImpossibleUsage(&resp) // before anything reads its tokens (OnTime's TPOT)
	rec := extractbench.Record{
		RunID: rs.runID, Variant: v.Name, Mode: rs.proto.Sweep.Mode, DocID: d.ID, LengthClass: string(d.LengthClass),
		Response: resp, Endpoint: endpoint,
		Score: eval.Evaluate(resp.Output, d.Expected, resp.Transport, rs.evalOpts),
	}
	rs.expectPromptTokens(v, d, &rec)
	onTime := rs.proto.Acceptance.OnTime(&rec)
	rec.OnTime = &onTime
	if evidence != "" && (rec.Failure == extractbench.Memory || rec.Failure == extractbench.Error) {
		rec.FailureDetail += "; " + evidence
	}
	return rec
}

func (rs *runState) userPrompt(d corpus.Document) string {
	return strings.ReplaceAll(rs.proto.Prompt.User, "{{document}}", d.Text)
}

// completionPrompt is the plain-text prompt of batch mode's /v1/completions
// (no chat template: the manifest says so).
func (rs *runState) completionPrompt(d corpus.Document) string {
	if rs.proto.Prompt.System == "" {
		return rs.userPrompt(d)
	}
	return rs.proto.Prompt.System + "\n\n" + rs.userPrompt(d)
}

func (rs *runState) generation() client.Generation {
	return client.Generation{MaxTokens: rs.proto.Generation.MaxTokens, Temperature: rs.proto.Generation.Temperature,
		Seed: rs.proto.Generation.Seed, ResponseFormat: rs.responseFormat}
}

// readDoc reads a document held by reference (its text and expectations)
// before it is sent. A document that cannot be read back as the run indexed
// it (the corpus file changed under the run, or reading it failed) cannot be
// measured: it is not sent and has no row, the first such failure is kept
// in rs.readFailure, and every dispatcher stops sending (ok false): the run
// ends as an infrastructure failure that -resume completes once the file is
// restored.
func (rs *runState) readDoc(d corpus.Document) (full corpus.Document, ok bool) {
	if rs.readFailure.err() != nil {
		return d, false
	}
	full, err := rs.corpus.Resolve(d)
	if err != nil {
		rs.readFailure.set(err)
		return d, false
	}
	return full, true
}

// docFault is the run's first document that could not be read back; every
// dispatcher reads it before it sends.
type docFault struct {
	mu    sync.Mutex
	first error
}

func (f *docFault) set(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.first == nil {
		f.first = err
	}
}

func (f *docFault) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.first
}
