package eval

import "testing"

func TestResponse_RefuseImpossibleUsage(t *testing.T) {
	tests := []struct {
		name               string
		prompt, completion int
		reported           bool
		refused            bool
	}{
		{"plausible", 300, 20, true, false},
		{"zero", 0, 0, true, false},
		{"at the ceiling", MaxTokenCount, MaxTokenCount, true, false},
		{"negative prompt", -5, 20, true, true},
		{"negative completion", 300, -5, true, true},
		{"2^63-1", 1<<63 - 1, 1<<63 - 1, true, true},
		{"over the ceiling", 300, MaxTokenCount + 1, true, true},
		{"no usage: the client's count is not the engine's", 0, 7, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Response{PromptTokens: tt.prompt, CompletionTokens: tt.completion, UsageReported: tt.reported, ClientChunks: 7}
			r.RefuseImpossibleUsage()
			if got := r.UsageRefused != ""; got != tt.refused {
				t.Fatalf("refused %v (%q), want %v", got, r.UsageRefused, tt.refused)
			}
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
