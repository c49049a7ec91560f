package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline/client"
	"github.com/extractbench/extractbench/results"
)

// passKey names a pass in the store.
func (rs *runState) passKey(v *Variant, level, rep int) results.PassKey {
	return results.PassKey{RunID: rs.runID, Variant: v.Name, Mode: rs.proto.Sweep.Mode, Level: level, Repetition: rep}
}

// runPass measures one (variant, mode, level, repetition) over the whole
// corpus. On resume it sends only the documents the pass has no row for,
// then recomputes the pass's figures from all its rows.
//
// retryOf is the level whose memory failures this pass retries lower (0 for a planned pass).
func (rs *runState) runPass(ctx context.Context, v *Variant, e *engine, level, rep int, phase string, retryOf int) (*results.Pass, error) {
	key := rs.passKey(v, level, rep)
	done, err := rs.store.DoneDocs(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("read finished documents of pass %s: %w", key, err)
	}
	var todo []corpus.Document
	for _, d := range rs.corpus.Documents {
		if !done[d.ID] {
			todo = append(todo, d)
		}
	}
	if len(todo) == 0 {
		if p, err := rs.store.Pass(ctx, key); err == nil && p != nil && p.Status == "complete" {
			return p, nil // finished before an interruption
		}
	}
	if len(done) > 0 {
		rs.logf("%s: resuming pass level %d repetition %d: %d of %d documents already recorded", v.Name, level, rep, len(done), len(rs.corpus.Documents))
	}

	if _, err := e.client.ResetPeaks(ctx); err != nil {
		rs.logf("%s: warning: reset engine memory peaks: %v", v.Name, err)
	}
	sampler := StartSampler(ctx, rs.clock, SamplerConfig{MetricsURL: e.metricsURL(v), Interval: time.Duration(rs.proto.TelemetryInterval), NvidiaSMI: e.nvidiaSMI}, e.client.HTTPClient())
	bar := rs.newBar(v, level, rep, len(rs.corpus.Documents), len(done))
	transport := ""
	self := startClientSelf(e.inproc != nil)
	switch {
	case rs.proto.Sweep.Mode == results.ModeBatch:
		transport = rs.dispatchBatches(ctx, v, e, level, key, todo, bar)
	case rs.proto.Sweep.Mode == results.ModeRate && level == results.SyncLevel:
		rs.dispatchConcurrent(ctx, v, e, 1, key, todo, bar, self) // the synchronous baseline
	case rs.proto.Sweep.Mode == results.ModeRate:
		rs.dispatchRate(ctx, v, e, key, todo, bar, self)
	default:
		rs.dispatchConcurrent(ctx, v, e, level, key, todo, bar, self)
	}
	self.stop()
	tel := sampler.Stop()

	bg := context.WithoutCancel(ctx) // an interruption still finishes the writes
	if err := rs.store.AddTelemetry(bg, key, toSamples(tel.Samples)); err != nil {
		return nil, fmt.Errorf("record telemetry of pass %s: %w", key, err)
	}
	if err := rs.store.Flush(bg); err != nil {
		return nil, fmt.Errorf("write requests of pass %s: %w", key, err)
	}
	recs, err := rs.store.PassRecords(bg, key)
	if err != nil {
		return nil, fmt.Errorf("read back pass %s: %w", key, err)
	}
	complete := len(recs) == len(rs.corpus.Documents)
	bar.finish(complete)
	p := rs.passRow(key, phase, retryOf, level, recs, tel, transport, complete, self)
	if err := rs.store.PutPass(bg, p); err != nil {
		return nil, fmt.Errorf("record pass %s: %w", key, err)
	}
	return &p, nil
}

// dispatchBatches sends the documents in groups of level: one
// /v1/completions call with a list of prompts where the engine accepts it,
// else level simultaneous chat requests with a barrier. It returns which.
func (rs *runState) dispatchBatches(ctx context.Context, v *Variant, e *engine, level int, key results.PassKey, todo []corpus.Document, bar *passBar) string {
	transport := "completions_list"
	for start := 0; start < len(todo) && ctx.Err() == nil; start += level {
		group := todo[start:min(start+level, len(todo))]
		sched := rs.clock.Now()
		if transport == "completions_list" {
			prompts := make([]string, len(group))
			for i, d := range group {
				prompts[i] = rs.completionPrompt(d)
			}
			resps, err := e.client.Complete(context.WithoutCancel(ctx), rs.clock, sched, prompts, rs.generation())
			if errors.Is(err, client.ErrBatchUnsupported) {
				transport = "barrier"
				rs.decision(ctx, v.Name, results.DecisionBatchMode, level, level, "the engine does not accept a list of prompts on /v1/completions; sending B simultaneous chat requests with a barrier")
			} else {
				for i, d := range group {
					rs.keep(key, rs.score(v, e, d, resps[i]), bar)
				}
				continue
			}
		}
		var wg sync.WaitGroup
		for _, d := range group {
			wg.Go(func() {
				rec := rs.exchange(context.WithoutCancel(ctx), v, e, d, sched)
				rs.keep(key, rec, bar)
			})
		}
		wg.Wait() // the barrier: the next batch starts when this one is done
	}
	return transport
}

// exchange sends one document and scores the answer.
func (rs *runState) exchange(ctx context.Context, v *Variant, e *engine, d corpus.Document, sched int64) eval.Record {
	resp := e.client.Chat(ctx, rs.clock, sched, rs.proto.Prompt.System, rs.userPrompt(d), rs.generation())
	return rs.score(v, e, d, resp)
}

func (rs *runState) score(v *Variant, e *engine, d corpus.Document, resp eval.Response) eval.Record {
	// A failure the engine's death explains is memory only with evidence
	// (engine.attribute); an HTTP answer, even a 404, came from a live server.
	var evidence string
	resp.Transport, evidence = e.attribute(resp.Transport)
	rec := eval.Record{
		RunID: rs.runID, Variant: v.Name, Mode: rs.proto.Sweep.Mode, DocID: d.ID, LengthClass: string(d.LengthClass),
		Response: resp,
		Outcome:  eval.Evaluate(resp.Output, d.Expected, resp.Transport, rs.evalOpts),
	}
	onTime := rs.proto.Acceptance.OnTime(&rec)
	rec.OnTime = &onTime
	if evidence != "" && (rec.Failure == eval.Memory || rec.Failure == eval.Error) {
		rec.FailureDetail += "; " + evidence
	}
	return rec
}

// keep stores a measured record. A request cut by the run's own
// interruption is not a measurement: it is left out, so that resume sends
// the document again.
func (rs *runState) keep(key results.PassKey, rec eval.Record, bar *passBar) {
	if rec.Kind == eval.TransportCanceled {
		return
	}
	rec.Level, rec.Repetition = key.Level, key.Repetition
	rs.store.Add(rec)
	bar.add(rec)
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

func (e *engine) metricsURL(v *Variant) string {
	if v.Engine.MetricsURL != "" {
		return v.Engine.MetricsURL
	}
	return strings.TrimRight(e.url, "/") + "/metrics"
}

// passBar is the per-pass progress bar: done/total, accepted, failures by
// class, rate and ETA.
type passBar struct {
	mu       sync.Mutex
	bar      *progressbar.ProgressBar
	plain    bool      // not a terminal: one line per pass instead of a bar
	out      io.Writer // where the plain line goes
	total    int
	done     int
	start    time.Time
	label    string
	accepted int
	failures map[eval.Failure]int
}

func (rs *runState) newBar(v *Variant, level, rep, total, already int) *passBar {
	var what string
	switch {
	case rs.proto.Sweep.Mode == results.ModeBatch:
		what = fmt.Sprintf("B=%-4d", level)
	case rs.proto.Sweep.Mode == results.ModeRate && level == results.SyncLevel:
		what = "sync  "
	case rs.proto.Sweep.Mode == results.ModeRate:
		what = fmt.Sprintf("%d/s", level)
	default:
		what = fmt.Sprintf("c=%-4d", level)
	}
	b := &passBar{label: fmt.Sprintf("%-6s %s rep %d", v.Name, what, rep), failures: map[eval.Failure]int{}}
	if rs.opts.Quiet {
		return b
	}
	if !rs.opts.TTY {
		b.plain, b.out, b.total, b.done = true, rs.progress, total, already
		return b
	}
	b.out = rs.progress
	b.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(rs.progress),
		progressbar.OptionSetDescription(b.label),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("doc"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(20),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(rs.progress) }),
	)
	if already > 0 {
		_ = b.bar.Set(already)
	}
	return b
}

func (b *passBar) add(rec eval.Record) {
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
	if b.bar == nil {
		return
	}
	b.bar.Describe(b.describe())
	_ = b.bar.Add(1)
}

func (b *passBar) describe() string {
	desc := fmt.Sprintf("%s ok %d", b.label, b.accepted)
	for _, f := range eval.Failures {
		if n := b.failures[f]; n > 0 {
			desc += fmt.Sprintf(" %s %d", f, n)
		}
	}
	return desc
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
		rate := 0.0
		if el := time.Since(b.start).Seconds(); el > 0 && !b.start.IsZero() {
			rate = float64(b.done) / el
		}
		state := "done"
		if !complete {
			state = "stopped"
		}
		fmt.Fprintf(b.out, "%s %s %d/%d (%.0f doc/s)\n", b.describe(), state, b.done, b.total, rate)
	}
}
