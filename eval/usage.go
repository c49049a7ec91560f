package eval

import (
	"fmt"

	"github.com/extractbench/extractbench"
)

// MaxTokenCount is the largest token count an engine's usage may report
// (2^40, a thousand billion tokens for one request): a count above it, or a
// negative one, cannot be true, and summing it would overflow a pass's total
// or turn its tokens per second negative.
const MaxTokenCount = 1 << 40

// PlausibleTokens reports whether n can be a request's token count.
func PlausibleTokens(n int) bool { return n >= 0 && n <= MaxTokenCount }

// RefuseImpossibleUsage drops an engine usage that cannot be true (a
// negative count, one above MaxTokenCount, or more cached prompt tokens
// than prompt tokens) from r before it becomes a record: the prompt tokens
// become unknown (NULL), the completion tokens are the client's own count,
// as when the engine sends no usage, the cached prompt tokens unknown,
// UsageReported is false and UsageRefused says what the engine sent. A usage
// one of whose counts is impossible is not trusted for the others either.
func RefuseImpossibleUsage(r *extractbench.Response) {
	cachedOK := r.CachedPromptTokens == nil || PlausibleTokens(*r.CachedPromptTokens) &&
		(!r.UsageReported || *r.CachedPromptTokens <= r.PromptTokens)
	if !r.UsageReported {
		if !cachedOK {
			r.CachedPromptTokens = nil // a cache figure without a usage: nothing else to refuse
		}
		return
	}
	if PlausibleTokens(r.PromptTokens) && PlausibleTokens(r.CompletionTokens) && cachedOK {
		return
	}
	r.UsageRefused = fmt.Sprintf("usage prompt_tokens %d, completion_tokens %d", r.PromptTokens, r.CompletionTokens)
	if r.CachedPromptTokens != nil {
		r.UsageRefused += fmt.Sprintf(", cached_tokens %d", *r.CachedPromptTokens)
	}
	r.PromptTokens, r.CompletionTokens, r.UsageReported, r.CachedPromptTokens = 0, r.ClientChunks, false, nil
}
