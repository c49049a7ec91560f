package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/results"
)

// WarmupMarker opens every warm-up prompt (its system message, or its user
// message when the protocol has no system prompt), so that a warm-up prompt
// shares no more than the chat template's first tokens with any measured
// one. Every document of the corpus is measured, so the warm-up has none of
// its own; sent as measured, its prompts would stay in the engine's prompt
// cache (llama.cpp's slots and --cache-ram, vLLM's and SGLang's prefix
// caches) and the pass's first requests of those documents would be served
// from it: 1 token evaluated instead of 1,251 on llama.cpp. With the
// marker the warm-up still sends the longest document at its full length
// (the hardest shape), and no measured request is served from it. What the
// measured requests cache among themselves (the instructions every prompt
// shares, a document sent again in a later pass) is the engine's own
// behaviour and is recorded (requests.cached_prompt_tokens).
const WarmupMarker = "Warm-up request, not measured. "

// warmup sends the warm-up requests, always including the longest document,
// each prompt opened by WarmupMarker so that no measured request is served
// from the engine's prompt cache of them; they are excluded from every
// figure and recorded as an event. Every replica is an engine of its own,
// warmed up on the same documents.
func (vr *variantRun) warmup(ctx context.Context) error {
	n := vr.rs.proto.Sweep.Warmup
	if n <= 0 || ctx.Err() != nil {
		return nil
	}
	e := vr.eng
	picked := warmupDocs(vr.rs.corpus, n)
	longest := picked[0]
	start := time.Now()
	failed := 0
	var longestFailure string
	for _, r := range e.replicas.all {
		for _, d := range picked {
			if e.died() || e.replicas.isDead(r) {
				break
			}
			d, ok := vr.rs.readDoc(d)
			if !ok {
				return fmt.Errorf("warm-up: %w", vr.rs.readFailure.err())
			}
			rec := e.warmupExchange(ctx, r, d)
			if rec.Accepted {
				continue
			}
			failed++
			if d.ID == longest.ID {
				on := ""
				if e.replicas.multi() {
					on = " on " + r.name
				}
				longestFailure += fmt.Sprintf("; the longest document (%s) failed%s: %s %s", d.ID, on, rec.Failure, rec.FailureDetail)
			}
		}
	}
	detail := fmt.Sprintf("%d warm-up requests (excluded), %d not accepted%s", len(picked), failed, longestFailure)
	if e.replicas.multi() {
		detail = fmt.Sprintf("%d warm-up requests on each of %d replicas (excluded), %d not accepted%s", len(picked), len(e.replicas.all), failed, longestFailure)
	}
	vr.event(ctx, results.EventWarmup, time.Since(start).Nanoseconds(), detail)
	if longestFailure != "" {
		vr.rs.logf("%s: warm-up: %s", vr.v.Name, detail)
	}
	return nil
}

// warmupDocs are the n documents a warm-up sends: the longest first (the
// first of the longest, as slices.MaxFunc picks), then the corpus's first.
func warmupDocs(c *corpus.Corpus, n int) []corpus.Document {
	longest := c.Doc(0)
	for i := 1; i < c.Len(); i++ {
		if d := c.Doc(i); c.TextSize(d) > c.TextSize(longest) {
			longest = d
		}
	}
	picked := []corpus.Document{longest}
	for i := 0; i < c.Len() && len(picked) < n; i++ {
		if d := c.Doc(i); d.ID != longest.ID {
			picked = append(picked, d)
		}
	}
	return picked
}

// warmupExchange sends one warm-up document to replica r, its prompt opened
// by WarmupMarker, and scores the answer (the warm-up event counts those
// not accepted).
func (e *engine) warmupExchange(ctx context.Context, r *replica, d corpus.Document) extractbench.Record {
	rs := e.rs
	rs.intr.begin(1)
	defer rs.intr.end(1)
	system, user := warmupPrompt(rs.proto.Prompt.System, rs.userPrompt(d))
	resp := r.client.Chat(ctx, rs.clock, rs.clock.Now(), system, user, rs.generation())
	e.checkReplica(r, resp.Transport)
	return rs.score(e.v, e, r.name, d, resp)
}

// warmupPrompt is the warm-up's form of a measured prompt.
func warmupPrompt(system, user string) (string, string) {
	if system != "" {
		return WarmupMarker + system, user
	}
	return system, WarmupMarker + user
}
