package passrow

import (
	"testing"

	"github.com/extractbench/extractbench"
)

func TestTokenCountMismatches(t *testing.T) {
	rec := func(usage bool, tokens, chunks int) extractbench.Record {
		return extractbench.Record{Response: extractbench.Response{UsageReported: usage, CompletionTokens: tokens, ClientChunks: chunks}}
	}
	tests := []struct {
		name string
		recs []extractbench.Record
		want *int64
	}{
		{"no usage: nothing to compare", []extractbench.Record{rec(false, 13, 13)}, nil},
		{"equal, and an EOS counted but not sent", []extractbench.Record{rec(true, 13, 13), rec(true, 14, 13)}, ptr(int64(0))},
		{"within 10% of a long answer", []extractbench.Record{rec(true, 100, 90)}, ptr(int64(0))},
		{"beyond tolerance either way", []extractbench.Record{rec(true, 13, 9), rec(true, 5, 9), rec(true, 100, 89)}, ptr(int64(3))},
	}
	for _, tt := range tests {
		got := tokenCountMismatches(tt.recs)
		if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
			t.Errorf("%s: tokenCountMismatches() = %v, want %v", tt.name, deref64(got), deref64(tt.want))
		}
	}
}

func deref64(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}
