package pipeline

import (
	"context"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
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

// warmupExchange sends one warm-up document to replica r, its prompt opened
// by WarmupMarker, and scores the answer (the warm-up event counts those
// not accepted).
func (rs *runState) warmupExchange(ctx context.Context, v *extractbench.Variant, e *engine, r *replica, d corpus.Document) extractbench.Record {
	rs.intr.begin(1)
	defer rs.intr.end(1)
	system, user := warmupPrompt(rs.proto.Prompt.System, rs.userPrompt(d))
	resp := r.client.Chat(ctx, rs.clock, rs.clock.Now(), system, user, rs.generation())
	rs.checkReplica(v, e, r, resp.Transport)
	return rs.score(v, e, r.name, d, resp)
}

// warmupPrompt is the warm-up's form of a measured prompt.
func warmupPrompt(system, user string) (string, string) {
	if system != "" {
		return WarmupMarker + system, user
	}
	return system, WarmupMarker + user
}
