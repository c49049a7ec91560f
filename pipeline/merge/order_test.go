package merge

import (
	"testing"

	"github.com/extractbench/extractbench"
)

// TestSharedOrderSeed: a merged pass keeps its shards' order_seed when they
// share it (shards of one protocol do), and stores none otherwise.
func TestSharedOrderSeed(t *testing.T) {
	seed := func(v int64) *int64 { return &v }
	rows := func(seeds ...*int64) []shardPass {
		out := make([]shardPass, len(seeds))
		for i, s := range seeds {
			out[i].row = extractbench.Pass{OrderSeed: s}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		rows []shardPass
		want *int64
	}{
		{"one shard", rows(seed(5)), seed(5)},
		{"shards of one seed", rows(seed(5), seed(5), seed(5)), seed(5)},
		{"corpus order", rows(nil, nil), nil},
		{"seeds differ", rows(seed(5), seed(6)), nil},
		{"a shard without one", rows(seed(5), nil), nil},
		{"the first without one", rows(nil, seed(5)), nil},
	} {
		got := sharedOrderSeed(tc.rows)
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
