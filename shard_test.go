package extractbench

import (
	"strings"
	"testing"
)

// TestShardOf_Pinned pins documents to their shards: FNV-1a 64 of the id's
// UTF-8 bytes mod the count, computed apart (Python, the FNV reference
// constants). A change here moves documents between the shards of runs
// already measured, so a merge of old and new shards would be wrong.
func TestShardOf_Pinned(t *testing.T) {
	tests := []struct {
		id              string
		of3, of4, of100 int
	}{
		{"doc-0001", 0, 3, 59},          // fnv1a64 = 0x5092679f39e8367b
		{"doc-0002", 1, 2, 70},          // 0x5092689f39e8382e
		{"doc-0042", 2, 2, 98},          // 0x509fe09f39f38e72
		{"invoice/2024/ä-17", 0, 0, 28}, // 0x274d6a123e0b008c: bytes, not runes
		{"a", 1, 0, 96},                 // 0xaf63dc4c8601ec8c, the FNV-1a test vector
	}
	for _, tt := range tests {
		for n, want := range map[int]int{3: tt.of3, 4: tt.of4, 100: tt.of100} {
			if got := ShardOf(tt.id, n); got != want {
				t.Errorf("ShardOf(%q, %d) = %d, want %d", tt.id, n, got, want)
			}
		}
		if got := ShardOf(tt.id, 1); got != 0 {
			t.Errorf("ShardOf(%q, 1) = %d, want 0", tt.id, got)
		}
	}
}

func TestParseShard(t *testing.T) {
	good := map[string]Shard{"0/1": {0, 1, 0, ShardHash}, "2/3": {2, 3, 0, ShardHash}, "7/8": {7, 8, 0, ShardHash}, "99999/100000": {99999, 100000, 0, ShardHash}}
	for spec, want := range good {
		if got, err := ParseShard(spec); err != nil || got != want {
			t.Errorf("ParseShard(%q) = %+v, %v; want %+v", spec, got, err, want)
		}
	}
	bad := map[string]string{
		"3/3": "from 0 to 2", "-1/3": "from 0 to 2", "1": "INDEX/COUNT", "1/0": "from 1 to", "a/3": "shard index",
		"1/x": "shard count", "1/100001": "from 1 to 100000", "": "INDEX/COUNT",
		// Digits alone: strconv.Atoi takes a sign, the old parser trimmed spaces.
		"+1/3": "shard index", " 1/3": "shard index", "-0/3": "shard index", "1/+3": "shard count", "1/3 ": "shard count",
		" 7/8 ": "digits alone", "1/ 3": "shard count", "0x1/3": "shard index", "1/3/3": "shard count", "1/0000001": "shard count",
	}
	for spec, want := range bad {
		if _, err := ParseShard(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseShard(%q) error %v, want one saying %q", spec, err, want)
		}
	}
}
