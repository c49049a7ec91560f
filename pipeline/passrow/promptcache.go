package passrow

import (
	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// cacheTally adds up, over a pass, the prompt tokens the engine took from
// its prompt cache (extractbench.Response.CachedPromptTokens) and the prompt tokens
// of the same requests, so that the pass says how much of its prefill it
// never computed: a TTFT over cached prompts is not a TTFT over prompts.
// Only requests whose usage the engine reported count: the share's two
// figures come from one usage.
type cacheTally struct {
	requests, cached, prompt int64
}

func (c *cacheTally) add(r *extractbench.Record) {
	if r.CachedPromptTokens == nil || !r.UsageReported {
		return
	}
	// Checked when the record was made (RefuseImpossibleUsage); a row an
	// older or foreign build stored is checked again, never summed blind.
	n := *r.CachedPromptTokens
	if !eval.PlausibleTokens(n) || !eval.PlausibleTokens(r.PromptTokens) || n > r.PromptTokens {
		return
	}
	c.requests++
	c.cached += int64(n)
	c.prompt += int64(r.PromptTokens)
}

// fill sets the pass's cached_prompt_tokens and cached_prompt_share; both
// stay NULL when no request reported the cache (an engine that does not
// say, or a database written before schema version 8).
func (c *cacheTally) fill(p *extractbench.Pass) {
	if c.requests == 0 {
		return
	}
	p.CachedPromptTokens = ptr(c.cached)
	if c.prompt > 0 {
		p.CachedPromptShare = ptr(float64(c.cached) / float64(c.prompt))
	}
}
