package eval

import "testing"

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
			r := Response{PromptTokens: tt.prompt, CompletionTokens: tt.completion, UsageReported: tt.reported, ClientChunks: 7, CachedPromptTokens: ptr(tt.cached)}
			r.RefuseImpossibleUsage()
			if got := r.UsageRefused != ""; got != tt.refused {
				t.Fatalf("refused %v (%q), want %v", got, r.UsageRefused, tt.refused)
			}
			if got := r.CachedPromptTokens; (got == nil) != (tt.wantCached == none) || got != nil && *got != tt.wantCached {
				t.Errorf("cached = %v, want %d (-1: nil)", got, tt.wantCached)
			}
			r.CachedPromptTokens = nil
			want := Response{PromptTokens: tt.prompt, CompletionTokens: tt.completion, UsageReported: tt.reported, ClientChunks: 7}
			if tt.refused {
				want = Response{CompletionTokens: 7, ClientChunks: 7, UsageRefused: r.UsageRefused}
			}
			if r != want {
				t.Errorf("got %+v, want %+v", r, want)
			}
		})
	}
}
