package extractbench

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// ShardHash names the rule that assigns a document to a shard, recorded in
// every shard's manifest: FNV-1a 64 of the document id's UTF-8 bytes,
// modulo the shard count. It depends on the id alone, so a document keeps
// its shard whatever the corpus's order, the machine or the Go version.
const ShardHash = "fnv1a64(id) mod count"

// Shard is the part of a corpus one `run -shard I/N` measures: the
// documents whose id hashes to Index (ShardOf). Stored in the shard run's
// manifest (manifest.shard); the manifest's corpus block and the
// fingerprint stay the full corpus's, so the shards of one run share a
// fingerprint and `merge` can check it.
type Shard struct {
	Index     int    `json:"index"`     // 0-based, < Count
	Count     int    `json:"count"`     // how many shards the corpus is split into
	Documents int    `json:"documents"` // the corpus's documents in this shard
	Hash      string `json:"hash"`      // ShardHash
}

// String is the shard as -shard writes it: "I/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// MaxShards bounds the shard count: a Kubernetes Indexed Job allows at most
// 100,000 completions when parallelism is high, and more would not help.
const MaxShards = 100000

// ParseShard reads "I/N": 0 ≤ I < N ≤ MaxShards, each written in ASCII
// digits alone (no sign, no space: "+1/3" and " 1/3" are refused, as a
// spec that is not what it looks like).
func ParseShard(spec string) (Shard, error) {
	i, n, ok := strings.Cut(spec, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want INDEX/COUNT, e.g. 0/4 (indexes count from 0)", spec)
	}
	return NewShard(i, n)
}

// NewShard checks an index and a count given apart (JOB_COMPLETION_INDEX
// and the shard count) and returns the shard.
func NewShard(index, count string) (Shard, error) {
	n, err := shardNumber(count)
	if err != nil || n < 1 || n > MaxShards {
		return Shard{}, fmt.Errorf("shard count %q: want a whole number from 1 to %d, in digits alone", count, MaxShards)
	}
	i, err := shardNumber(index)
	if err != nil || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard index %q: want a whole number from 0 to %d (the count is %d; indexes count from 0)", index, n-1, n)
	}
	return Shard{Index: i, Count: n, Hash: ShardHash}, nil
}

// shardNumber reads a number written in ASCII digits alone: strconv.Atoi
// would take "+1" and "-0" too.
func shardNumber(s string) (int, error) {
	if s == "" || len(s) > 6 || strings.Trim(s, "0123456789") != "" {
		return 0, strconv.ErrSyntax
	}
	return strconv.Atoi(s)
}

// ShardOf is the shard of document id among count shards (ShardHash).
func ShardOf(id string, count int) int {
	if count <= 1 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	return int(h.Sum64() % uint64(count))
}

// Holds reports whether document id belongs to shard s.
func (s Shard) Holds(id string) bool { return ShardOf(id, s.Count) == s.Index }

// Merge describes a merged run (manifest.merge): the shards it was built
// from, which of the expected indexes were missing, and the (pass,
// document) rows found in more than one shard (the first, by shard index
// then directory order, is kept).
type Merge struct {
	Count      int           `json:"count"`             // the shards' count, N
	Shards     []MergedShard `json:"shards"`            // in index order
	Missing    []int         `json:"missing,omitempty"` // indexes 0..N-1 no directory held
	Duplicates int64         `json:"duplicates"`        // (pass, document) rows dropped because another shard had them
	// ClockOriginNS is the merged run's clock origin: the earliest shard's;
	// each shard's instants are shifted by its ClockOffsetNS onto it.
	ClockOriginNS int64 `json:"clock_origin_unix_ns"`
}

// ShardList writes shard indexes as a reader expects them: "1, 3".
func ShardList(indexes []int) string {
	s := make([]string, len(indexes))
	for i, x := range indexes {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// MergedShard is one shard directory a merge read.
type MergedShard struct {
	Index         int    `json:"index"`
	Dir           string `json:"dir"`
	RunID         string `json:"run_id"`
	Status        string `json:"status"`       // the shard run's status: complete, interrupted, failed, running
	Documents     int    `json:"documents"`    // the corpus's documents in the shard
	Rows          int64  `json:"rows"`         // measured request rows copied into the merged run
	Duplicates    int64  `json:"duplicates"`   // rows of this shard dropped as duplicates
	ClockOffsetNS int64  `json:"clock_offset"` // ns added to the shard's instants: its clock origin − the merged origin
}
