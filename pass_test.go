package extractbench

import "testing"

// TestSentConcurrency is the one rule for sent_concurrency, which the run's
// pass row and the merge's both use: the client's measured most-in-flight,
// bounded by what the mode allows each shard's client.
func TestSentConcurrency(t *testing.T) {
	tests := []struct {
		name                 string
		mode                 Mode
		level, fixed, shards int
		maxInFlight, want    int64
	}{
		{"concurrency at its level", ModeConcurrency, 8, 0, 1, 8, 8},
		{"concurrency: a tick's overlap is bounded", ModeConcurrency, 8, 0, 1, 9, 8},
		{"concurrency: fewer documents than slots", ModeConcurrency, 8, 0, 1, 3, 3},
		{"baseline: one at a time", ModeConcurrency, 1, 0, 1, 2, 1},
		{"batch below its size", ModeBatch, 16, 0, 1, 12, 12},
		{"batch bounded by its size", ModeBatch, 16, 0, 1, 17, 16},
		{"rate is open loop", ModeRate, 4, 0, 1, 40, 40},
		{"rate merged is still open loop", ModeRate, 4, 0, 3, 40, 40},
		{"context: the sweep's concurrency, not the class", ModeContext, 2, 8, 1, 9, 8},
		{"context below its concurrency", ModeContext, 3, 8, 1, 5, 5},
		{"merged shards each keep level in flight", ModeConcurrency, 4, 0, 3, 12, 12},
		{"merged shards bounded", ModeConcurrency, 4, 0, 3, 13, 12},
		{"merged context", ModeContext, 1, 8, 2, 20, 16},
		{"no shards counts as one", ModeConcurrency, 4, 0, 0, 6, 4},
		{"nothing sent", ModeConcurrency, 4, 0, 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SentConcurrency(tt.mode, tt.level, tt.fixed, tt.shards, tt.maxInFlight); got != tt.want {
				t.Errorf("SentConcurrency(%s, level %d, fixed %d, %d shards, %d in flight) = %d, want %d", tt.mode, tt.level, tt.fixed, tt.shards, tt.maxInFlight, got, tt.want)
			}
		})
	}
}
