package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline/client"
	"github.com/extractbench/extractbench/pipeline/dispatch"
	"github.com/extractbench/extractbench/pipeline/telemetry"
	"github.com/extractbench/extractbench/results"
)

// passKey names a pass in the store.
func (rs *runState) passKey(v *extractbench.Variant, level, rep int) extractbench.PassKey {
	return extractbench.PassKey{RunID: rs.runID, Variant: v.Name, Mode: rs.proto.Sweep.Mode, Level: level, Repetition: rep}
}

// runPass measures one (variant, mode, level, repetition) over the pass's
// documents (passDocs: the whole corpus, or a context step's class), in
// its send order (passOrder). On resume it sends only the documents the
// pass has no row for, in the same order, then recomputes the pass's
// figures from all its rows.
//
// retryOf is the level whose memory failures this pass retries lower (0 for a planned pass).
func (rs *runState) runPass(ctx context.Context, v *extractbench.Variant, e *engine, level, rep int, phase string, retryOf int) (*extractbench.Pass, error) {
	key := rs.passKey(v, level, rep)
	done, err := rs.store.DoneDocs(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("read finished documents of pass %s: %w", key, err)
	}
	docs, orderSeed := rs.passOrder(level, rep)
	todo := docs // shared, not copied, when nothing is done yet
	if done.Len() > 0 {
		todo = docList{c: rs.corpus, idx: []int32{}}
		for i := range docs.Len() {
			if !done.Has(docs.At(i).ID) {
				todo.idx = append(todo.idx, docs.pos(i))
			}
		}
	}
	if todo.Len() == 0 {
		if p, err := rs.store.Pass(ctx, key); err == nil && p != nil && p.Status == "complete" {
			return p, nil // finished before an interruption
		}
	}
	if done.Len() > 0 {
		rs.logf("%s: resuming pass level %d repetition %d: %d of %d documents already recorded", v.Name, level, rep, done.Len(), docs.Len())
	}

	cacheReset := rs.resetCache(ctx, v, e, level, rep) // cachereset.go
	for _, r := range e.replicas.all {
		_, err := r.client.ResetPeaks(ctx)
		switch {
		case errors.Is(err, client.ErrNoAnswer):
			rs.noAnswer(ctx, v, r.name, err.Error(), fmt.Sprintf("the pass at level %d, repetition %d goes on: its memory peaks may include what came before", level, rep))
		case err != nil:
			rs.logf("%s: warning: reset engine memory peaks at %s: %v", v.Name, r.name, err)
		}
	}
	flush := func(samples []telemetry.Sample) error { // a long pass's samples are written as they come
		return rs.store.AddTelemetry(context.WithoutCancel(ctx), key, toSamples(samples))
	}
	active := func() bool { return rs.intr.count() > 0 } // the engine's peaks are read while the pass's requests run
	sampler := telemetry.StartSampler(ctx, rs.clock, telemetry.SamplerConfig{Family: e.family.get(), Endpoints: e.metricsEndpoints(v), Interval: time.Duration(rs.proto.TelemetryInterval),
		NvidiaSMI: e.nvidiaSMI, Flush: flush, Active: active}, e.client.HTTPClient())
	rs.intr.watchPass(todo.Len(), sampler.Kick) // sampled at its first send and its last, however short it is
	bar := rs.newBar(v, level, rep, phase, docs.Len(), done.Len())
	self := startClientSelf(e.inproc != nil)
	transport, dispatchErr := dispatch.Run(ctx, rs.proto.Sweep, rs.proto.Generation.Seed, level, rep,
		&passDispatch{ctx: ctx, rs: rs, v: v, e: e, level: level, key: key, todo: todo, bar: bar, self: self})
	self.stop()
	rs.intr.watchPass(0, nil)
	tel := sampler.Stop()

	bg := context.WithoutCancel(ctx) // an interruption still finishes the writes
	rs.telemetryErrors(bg, v, level, rep, tel)
	rs.numbersRefused(bg, v, key, tel)
	if err := errors.Join(tel.FlushErr, rs.store.AddTelemetry(bg, key, toSamples(tel.Samples))); err != nil {
		return nil, fmt.Errorf("record telemetry of pass %s: %w", key, err)
	}
	if err := rs.store.Flush(bg); err != nil {
		return nil, fmt.Errorf("write requests of pass %s: %w", key, err)
	}
	if err := rs.fillExpected(bg, key); err != nil {
		return nil, fmt.Errorf("record expected prompt tokens of pass %s: %w", key, err)
	}
	acct := rs.account()
	tally, err := acct.TallyPass(bg, key, e.replicas.names()) // streamed: no record of the pass is held
	if err != nil {
		return nil, fmt.Errorf("read back pass %s: %w", key, err)
	}
	faults, lastFault := bar.clientFaults()
	complete := tally.Docs()+int64(faults) == int64(docs.Len())
	bar.finish(complete)
	self.faults = faults
	p := acct.Row(key, phase, retryOf, level, tally, tel, transport, complete, self)
	p.CacheReset = cacheReset
	p.OrderSeed = orderSeed
	if faults > 0 {
		detail := fmt.Sprintf("pass level %d, repetition %d: %d of %d requests failed in the client itself (last: %s): left out of the engine's figures, the pass is client_bound, and -resume sends them again",
			level, rep, faults, docs.Len(), lastFault)
		rs.logf("%s: warning: %s", v.Name, detail)
		rs.event(bg, v.Name, results.EventClientFaults, 0, detail)
	}
	if err := rs.store.PutPass(bg, p); err != nil {
		return nil, fmt.Errorf("record pass %s: %w", key, err)
	}
	if dispatchErr != nil {
		rs.logf("%s: %v", v.Name, dispatchErr)
		return &p, fmt.Errorf("pass at level %d, repetition %d: dispatch stopped, %d of %d documents not recorded: %w", level, rep, int64(docs.Len())-tally.Docs(), docs.Len(), dispatchErr)
	}
	if err := rs.readFailure.err(); err != nil {
		return &p, fmt.Errorf("pass at level %d, repetition %d: dispatch stopped, %d of %d documents not sent: %w", level, rep, int64(docs.Len())-tally.Docs(), docs.Len(), err)
	}
	if e.died() {
		return &p, rs.engineDead(bg, v, e, fmt.Sprintf("during the pass at level %d, repetition %d: dispatch stopped at once, %d of %d documents not sent",
			level, rep, int64(docs.Len())-tally.Docs(), docs.Len()))
	}
	return &p, nil
}

// passDocs are the documents a pass at level sends, listed in corpus order
// (passOrder puts them in send order): the whole corpus, or in a context
// sweep the documents of the level's length class only. A pass is
// complete, and resume sends what is left, against this set.
func (rs *runState) passDocs(level int) docList {
	if rs.proto.Sweep.Mode != extractbench.ModeContext {
		return docList{c: rs.corpus}
	}
	class := extractbench.LengthClassOf(level)
	out := docList{c: rs.corpus, idx: []int32{}}
	for i := range rs.corpus.Len() {
		if string(rs.corpus.Doc(i).LengthClass) == class {
			out.idx = append(out.idx, int32(i))
		}
	}
	return out
}

// passOrder is the documents a pass at level, repetition rep sends, in the
// order it sends them, and the seed of that order (passes.order_seed; nil
// for corpus order): the one place the send order is made, for every mode
// (the dispatchers send position 0 first, and a rate pass's planned
// arrivals go to the documents in this order). It is a function of the
// protocol, the corpus (or shard) and the pass's level and repetition
// only, never the variant or what was sent before, so every variant sends
// a level and repetition in the same order and a resumed pass recomputes
// it exactly.
func (rs *runState) passOrder(level, rep int) (docList, *int64) {
	docs := rs.passDocs(level)
	seed := dispatch.OrderSeed(rs.proto.Sweep, rs.proto.Generation.Seed, level, rep)
	if seed == nil {
		return docs, nil
	}
	idx := dispatch.Permute(docs.Len(), *seed)
	for i, j := range idx {
		idx[i] = docs.pos(int(j))
	}
	return docList{c: rs.corpus, idx: idx}, seed
}

// docList is a list of the corpus's documents: all of them in corpus order
// (idx nil), or those at idx in idx's order. It holds 4 bytes a document at
// most, never a Document each: corpus.Corpus.Doc makes one when it is sent.
type docList struct {
	c   *corpus.Corpus
	idx []int32
}

// Len is the number of documents listed.
func (l docList) Len() int {
	if l.idx == nil {
		return l.c.Len()
	}
	return len(l.idx)
}

// At is the i-th document listed.
func (l docList) At(i int) corpus.Document { return l.c.Doc(int(l.pos(i))) }

// pos is the i-th document's place in the corpus.
func (l docList) pos(i int) int32 {
	if l.idx == nil {
		return int32(i)
	}
	return l.idx[i]
}

// levels is the pass plan's levels for this corpus: the protocol's, less a
// context sweep's length classes that have no document.
func (rs *runState) levels() []int {
	levels := rs.proto.Levels()
	if rs.proto.Sweep.Mode != extractbench.ModeContext {
		return levels
	}
	return slices.DeleteFunc(levels, func(l int) bool { return rs.passDocs(l).Len() == 0 })
}

// engineDead records that a started engine died (the requests it failed
// carry the evidence in failure_detail) and returns the variant's error: no
// more passes, and no retry, are sent to a dead engine; the run goes on
// with the next variant.
func (rs *runState) engineDead(ctx context.Context, v *extractbench.Variant, e *engine, what string) error {
	detail := what + "; no further pass or retry against it (" + e.deathDetail() + ")"
	rs.event(ctx, v.Name, results.EventEngineDead, 0, detail)
	return fmt.Errorf("engine died %s", detail)
}

// exchange sends one document (read back: readDoc) to replica r and
// scores the answer.
func (rs *runState) exchange(ctx context.Context, v *extractbench.Variant, e *engine, r *replica, d corpus.Document, sched int64) extractbench.Record {
	rs.intr.begin(1)
	defer rs.intr.end(1)
	resp := r.client.Chat(ctx, rs.clock, sched, rs.proto.Prompt.System, rs.userPrompt(d), rs.generation())
	rs.checkReplica(v, e, r, resp.Transport)
	return rs.score(v, e, r.name, d, resp)
}

// send is one measured request of a pass (d read back: readDoc), to the
// least-loaded replica: on the run's request context (the in-flight
// requests finish after a first signal and are cancelled when the interrupt
// grace ends, then stored as interrupted), counted in flight. endpoint is the replica's name; ok is
// false when every replica is dead and nothing was sent.
func (rs *runState) send(ctx context.Context, v *extractbench.Variant, e *engine, d corpus.Document, sched int64) (resp extractbench.Response, endpoint string, ok bool) {
	r := e.replicas.acquire(1)
	if r == nil {
		return resp, "", false
	}
	defer e.replicas.release(r, 1)
	rs.intr.begin(1)
	defer rs.intr.end(1)
	resp = r.client.Chat(ctx, rs.clock, sched, rs.proto.Prompt.System, rs.userPrompt(d), rs.generation())
	rs.checkReplica(v, e, r, resp.Transport)
	return resp, r.name, true
}

// checkReplica drops a replica that stopped answering from dispatch (one of
// several: see replicaSet.failed) and records it; it returns once the
// replica's health is known, so that the caller's next request goes to a
// live one.
func (rs *runState) checkReplica(v *extractbench.Variant, e *engine, r *replica, tr extractbench.Transport) {
	if dead, detail := e.replicas.failed(rs.intr.reqs, r, tr); dead {
		rs.logf("%s: %s", v.Name, detail)
		rs.event(context.Background(), v.Name, results.EventReplicaDead, 0, detail)
	}
}

// score judges one answer of the replica named endpoint to document d,
// read back (readDoc) before it was sent.
func (rs *runState) score(v *extractbench.Variant, e *engine, endpoint string, d corpus.Document, resp extractbench.Response) extractbench.Record {
	// A failure the engine's death explains is memory only with evidence
	// (engine.attribute); an HTTP answer, even a 404, came from a live server.
	var evidence string
	resp.Transport, evidence = e.attribute(resp.Transport)
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

// keep stores a record. A request cut by the run's own interruption, or
// failed in the client itself, is stored as it is (no class, no verdict):
// readers leave it out, and resume sends the document again and replaces
// the row. The client's failures are counted for the pass (client_bound).
func (rs *runState) keep(key extractbench.PassKey, rec extractbench.Record, bar *passBar) {
	rec.Level, rec.Repetition = key.Level, key.Repetition
	rs.refusedUsage.note(key, &rec)
	rs.store.Add(rec)
	switch {
	case rec.Kind == extractbench.TransportClient:
		bar.clientFault(rec.Detail)
	case rec.Kind.Measured():
		bar.add(rec)
	}
}

func (rs *runState) userPrompt(d corpus.Document) string {
	return strings.ReplaceAll(rs.proto.Prompt.User, "{{document}}", d.Text)
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

// metricsEndpoints are the telemetry endpoints sampled during a pass: the
// engine's metrics_url, or each replica's URL + its family's telemetry path
// (/metrics, Ollama's /api/ps); none when the family has none.
func (e *engine) metricsEndpoints(v *extractbench.Variant) []telemetry.MetricsEndpoint {
	if v.Engine.MetricsURL != "" {
		return []telemetry.MetricsEndpoint{{Name: e.replicas.all[0].name, URL: v.Engine.MetricsURL}}
	}
	path := e.family.get().Telemetry.Path
	if path == "" {
		return nil
	}
	out := make([]telemetry.MetricsEndpoint, len(e.replicas.all))
	for i, r := range e.replicas.all {
		out[i] = telemetry.MetricsEndpoint{Name: r.name, URL: strings.TrimRight(r.url, "/") + path}
	}
	return out
}

// ProgressInterval is how often a pass that is not drawn on a terminal
// (a log, CI) prints a progress line between its start and its end, so that
// a long pass is never silent.
var ProgressInterval = 30 * time.Second

// passBar is the per-pass progress line: the pass's place in the run, its
// variant, level and repetition, done/total, accepted, failures by class,
// rate and ETA. On a terminal it is a bar; elsewhere a line at the start,
// every ProgressInterval, and at the end.
type passBar struct {
	mu       sync.Mutex
	bar      *progressbar.ProgressBar
	plain    bool      // not a terminal: lines instead of a bar
	out      io.Writer // where the plain lines go
	total    int
	done     int
	already  int // documents recorded before this invocation (resume)
	start    time.Time
	lastLine time.Time
	label    string
	accepted int
	failures map[extractbench.Failure]int
	faults   int    // requests that failed in the client itself: no document of the engine's
	fault    string // the last one's detail

	// short and maxDesc fit the bar to a narrow terminal (progressfit.go).
	short   shortLabel
	maxDesc int
}

// clientFault counts a request that failed in the client itself.
func (b *passBar) clientFault(detail string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.faults++
	b.fault = detail
}

// clientFaults is how many requests of this invocation of the pass failed in
// the client itself, and the last one's detail.
func (b *passBar) clientFaults() (int, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.faults, b.fault
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

func (rs *runState) newBar(v *extractbench.Variant, level, rep int, phase string, total, already int) *passBar {
	var what string
	switch {
	case rs.proto.Sweep.Mode == extractbench.ModeBatch:
		what = fmt.Sprintf("batch %d", level)
	case rs.proto.Sweep.Mode == extractbench.ModeRate && level == extractbench.SyncLevel:
		what = "rate sync"
	case rs.proto.Sweep.Mode == extractbench.ModeContext:
		what = fmt.Sprintf("context %s (concurrency %d)", eval.LevelName(extractbench.ModeContext, level), rs.proto.Sweep.Concurrency)
	case phase == extractbench.PhaseProbe:
		what = fmt.Sprintf("rate %d/s (saturation probe)", level)
	case rs.proto.Sweep.Mode == extractbench.ModeRate:
		what = fmt.Sprintf("rate %d/s", level)
	default:
		what = fmt.Sprintf("concurrency %d", level)
	}
	rs.passNo++
	b := &passBar{label: fmt.Sprintf("pass %d/%d  %s  %s  rep %d/%d", rs.passNo, rs.plannedPasses(), v.Name, strings.TrimSpace(what), rep, rs.proto.Sweep.Repetitions),
		failures: map[extractbench.Failure]int{}}
	if rs.opts.Quiet {
		return b
	}
	if !rs.opts.TTY {
		b.plain, b.out, b.total, b.done, b.already = true, rs.progress, total, already, already
		b.start, b.lastLine = time.Now(), time.Now()
		fmt.Fprintf(b.out, "%s  started: %d documents", b.label, total)
		if already > 0 {
			fmt.Fprintf(b.out, " (%d already recorded)", already)
		}
		fmt.Fprintln(b.out)
		return b
	}
	b.out = rs.progress
	fit := fitBar(TerminalWidth(rs.opts.Progress), total, b.label) // rs.progress wraps it (secrets)
	b.maxDesc = fit.maxDesc
	b.short = shortLabel{place: fmt.Sprintf("%d/%d", rs.passNo, rs.plannedPasses()), variant: v.Name,
		where: fmt.Sprintf("%s r%d/%d", shortLevel(rs.proto.Sweep.Mode, phase, level), rep, rs.proto.Sweep.Repetitions)}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(rs.progress),
		progressbar.OptionSetDescription(b.barText()),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(fit.bar),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(rs.progress) }),
	}
	if fit.its {
		opts = append(opts, progressbar.OptionShowIts(), progressbar.OptionSetItsString("doc"))
	}
	b.bar = progressbar.NewOptions(total, opts...)
	if already > 0 {
		_ = b.bar.Set(already)
	}
	return b
}

func (b *passBar) add(rec extractbench.Record) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rec.Accepted {
		b.accepted++
	} else {
		b.failures[rec.Failure]++
	}
	if b.start.IsZero() {
		b.start = time.Now()
	}
	b.done++
	if b.plain && time.Since(b.lastLine) >= ProgressInterval && b.done < b.total {
		b.lastLine = time.Now()
		fmt.Fprintf(b.out, "%s  %s\n", b.describe(), b.position())
	}
	if b.bar == nil {
		return
	}
	b.bar.Describe(b.barText())
	_ = b.bar.Add(1)
}

func (b *passBar) describe() string {
	desc := fmt.Sprintf("%s  accepted %d", b.label, b.accepted)
	for _, f := range extractbench.Failures {
		if n := b.failures[f]; n > 0 {
			desc += fmt.Sprintf(" %s %d", f, n)
		}
	}
	return desc
}

// position is done/total with the rate over this invocation and the time
// the rest of the pass needs at that rate.
func (b *passBar) position() string {
	el := time.Since(b.start)
	sent := b.done - b.already
	if sent <= 0 || el <= 0 {
		return fmt.Sprintf("%d/%d", b.done, b.total)
	}
	rate := float64(sent) / el.Seconds()
	eta := time.Duration(float64(b.total-b.done) / rate * float64(time.Second))
	return fmt.Sprintf("%d/%d  %.1f doc/s  elapsed %s  left ~%s", b.done, b.total, rate, eval.FormatDuration(el.Nanoseconds()), eval.FormatDuration(eta.Nanoseconds()))
}

// finish ends the bar; complete says whether every document was sent (an
// interrupted pass leaves its bar where it stopped).
func (b *passBar) finish(complete bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.bar != nil && complete:
		_ = b.bar.Finish()
	case b.bar != nil:
		_ = b.bar.Exit()
		fmt.Fprintln(b.out)
	case b.plain:
		state := "done"
		if !complete {
			state = "stopped"
		}
		rate := ""
		if el := time.Since(b.start); el > 0 && b.done > b.already {
			rate = fmt.Sprintf("  %.1f doc/s in %s", float64(b.done-b.already)/el.Seconds(), eval.FormatDuration(el.Nanoseconds()))
		}
		fmt.Fprintf(b.out, "%s  %s %d/%d%s\n", b.describe(), state, b.done, b.total, rate)
	}
}

// telemetryErrors says, on stderr and as an event, that a pass's engine
// metrics or device readings failed: the pass's engine figures (running,
// waiting, KV cache, captures, peaks) then come from the scrapes that
// worked, or are missing, and a reader must not take a missing figure for
// a zero.
func (rs *runState) telemetryErrors(ctx context.Context, v *extractbench.Variant, level, rep int, tel telemetry.Telemetry) {
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
	detail := fmt.Sprintf("pass at level %d, repetition %d: %s", level, rep, strings.Join(parts, "; "))
	rs.logf("%s: warning: %s", v.Name, detail)
	rs.event(ctx, v.Name, results.EventTelemetryErrors, 0, detail)
}

func toSamples(in []telemetry.Sample) []results.TelemetrySample {
	out := make([]results.TelemetrySample, len(in))
	for i, s := range in {
		out[i] = results.TelemetrySample{TNS: s.TNS, Metric: s.Metric, Value: s.Value, Endpoint: s.Endpoint}
	}
	return out
}
