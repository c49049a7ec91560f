package eval

import (
	"testing"

	"github.com/extractbench/extractbench"
)

func TestResponse_RefuseImpossibleUsage(t *testing.T) {
	const none = -1 // no cached figure
	tests := []struct {
		name               string
		prompt, completion int
		cached             int
		reported           bool
		refused            bool
		wantCached         int
	}{
		{"plausible", 300, 20, none, true, false, none},
		{"zero", 0, 0, none, true, false, none},
		{"at the ceiling", MaxTokenCount, MaxTokenCount, none, true, false, none},
		{"negative prompt", -5, 20, none, true, true, none},
		{"negative completion", 300, -5, none, true, true, none},
		{"2^63-1", 1<<63 - 1, 1<<63 - 1, none, true, true, none},
		{"over the ceiling", 300, MaxTokenCount + 1, none, true, true, none},
		{"no usage: the client's count is not the engine's", 0, 7, none, false, false, none},
		{"cached within the prompt", 300, 20, 299, true, false, 299},
		{"cached all of the prompt", 300, 20, 300, true, false, 300},
		{"cached more than the prompt", 300, 20, 301, true, true, none},
		{"cached negative", 300, 20, -2, true, true, none},
		{"cached with an impossible prompt", -5, 20, 3, true, true, none},
		{"cached without usage, plausible", 0, 7, 12, false, false, 12},
		{"cached without usage, impossible", 0, 7, MaxTokenCount + 1, false, false, none},
	}
	ptr := func(n int) *int {
		if n == none {
			return nil
		}
		return &n
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := extractbench.Response{PromptTokens: tt.prompt, CompletionTokens: tt.completion, UsageReported: tt.reported, ClientChunks: 7, CachedPromptTokens: ptr(tt.cached)}
			RefuseImpossibleUsage(&r)
			if got := r.UsageRefused != ""; got != tt.refused {
				t.Fatalf("refused %v (%q), want %v", got, r.UsageRefused, tt.refused)
			}
			if got := r.CachedPromptTokens; (got == nil) != (tt.wantCached == none) || got != nil && *got != tt.wantCached {
				t.Errorf("cached = %v, want %d (-1: nil)", got, tt.wantCached)
			}
			r.CachedPromptTokens = nil
			want := extractbench.Response{PromptTokens: tt.prompt, CompletionTokens: tt.completion, UsageReported: tt.reported, ClientChunks: 7}
			if tt.refused {
				want = extractbench.Response{CompletionTokens: 7, ClientChunks: 7, UsageRefused: r.UsageRefused}
			}
			if r != want {
				t.Errorf("got %+v, want %+v", r, want)
			}
		})
	}
}

// TestRecord_TPOT is the TPOT item of the llama.cpp issue: llama.cpp (and
// vLLM) count the end-of-generation token in completion_tokens although no
// chunk carries it, so a 26-token answer streamed in 25 content chunks
// spans 24 steps between its first and last content token, not 25 (TPOT
// 4% low). TPOT divides by the chunks − 1 exactly when the stream stopped
// and its chunks are one fewer than the usage's tokens; otherwise by
// completion_tokens − 1.
func TestRecord_TPOT(t *testing.T) {
	const first, last = 1_000_000, 1_000_000 + 24*12_000 // 24 steps of 12 µs
	tests := []struct {
		name             string
		completion       int
		chunks           int
		reported         bool
		finish           string
		first, last      int64
		wantSteps        int
		wantNS           int64
		wantUndefinedNow bool
	}{
		{"llama.cpp: 26 tokens, 25 chunks, stop (capture chat-stream-cached.sse)", 26, 25, true, "stop", first, last, 24, 12_000, false},
		{"one token a chunk, no unsent token", 25, 25, true, "stop", first, last, 24, 12_000, false},
		{"cut by max_tokens: every token streamed", 25, 25, true, "length", first, last, 24, 12_000, false},
		{"length with one chunk fewer keeps completion − 1", 26, 25, true, "length", first, last, 25, 11_520, false},
		{"chunks of several tokens", 50, 25, true, "stop", first, last, 49, 5_877, false},
		{"no usage: the client's count is the chunks", 25, 25, false, "stop", first, last, 24, 12_000, false},
		{"two tokens, one chunk: one token timed", 2, 1, true, "stop", first, first, 0, 0, true},
		{"all content in one chunk", 5, 1, true, "length", first, first, 4, 0, true},
		{"no token", 0, 0, true, "stop", 0, 0, -1, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := extractbench.Record{Response: extractbench.Response{CompletionTokens: tt.completion, ClientChunks: tt.chunks, UsageReported: tt.reported,
				Timings: extractbench.Timings{FirstTokenNS: tt.first, LastTokenNS: tt.last}, Transport: extractbench.Transport{FinishReason: tt.finish}}}
			if got := r.TPOTSteps(); got != tt.wantSteps {
				t.Errorf("TPOTSteps() = %d, want %d", got, tt.wantSteps)
			}
			ns, ok := r.TPOT()
			if ok == tt.wantUndefinedNow || ok && ns != tt.wantNS {
				t.Errorf("TPOT() = %d, %v, want %d (undefined: %v)", ns, ok, tt.wantNS, tt.wantUndefinedNow)
			}
		})
	}
}
