package merge

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
	"github.com/extractbench/extractbench/pipeline/protocol"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenProtocol is the protocol of the golden merge's shards: two levels,
// two repetitions, two replicas.
const goldenProtocol = `name: golden
corpus: default
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1, 4], repetitions: 2, warmup: 0}
variants:
  - name: bf16
    engine: {urls: ["http://127.0.0.1:9", "http://127.0.0.1:10"], model: m}
`

// TestMerge_GoldenPasses: the merged pass rows of a fixed set of shards,
// whose requests vary in every figure a pass row reads (latencies spread
// and tied, instants missing, failures of each class, replicas, cached and
// drifting prompts, late requests) and one of which was written twice, are
// the rows testdata/merge-golden/passes.json holds, bit for bit: the rows
// the merge made before its copy and its pass recomputation were made
// fast (-update rewrites it).
func TestMerge_GoldenPasses(t *testing.T) {
	root := t.TempDir()
	dirs := writeGoldenShards(t, root)
	sum, err := Merge(pipelinetest.Context(t), Options{OutDir: filepath.Join(root, "merged"), Dirs: dirs})
	if err != nil {
		t.Fatal(err)
	}
	passes := sum.Passes
	for i := range passes {
		passes[i].RunID = "" // the shards' fingerprint holds the temporary protocol path
	}
	var dupRows []string // the duplicates named, by their directory under root
	for _, d := range sum.DuplicateRows {
		dupRows = append(dupRows, strings.ReplaceAll(d, root, ""))
	}
	got, err := json.MarshalIndent(struct {
		Rows, Duplicates int64
		DuplicateRows    []string
		Passes           []extractbench.Pass
	}{sum.Rows, sum.Duplicates, dupRows, passes}, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "merge-golden", "passes.json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(got, '\n'), want) {
		t.Errorf("merged passes differ from %s (go test -run TestMerge_GoldenPasses -update rewrites it):\n%s", golden, got)
	}
}

// writeGoldenShards writes three shards of 150 documents and a second copy
// of shard 1 whose rows differ (the duplicates the merge drops), each pass
// of every shard from one seeded generator.
func writeGoldenShards(tb testing.TB, root string) []string {
	tb.Helper()
	const docs, count = 150, 3
	protoPath := filepath.Join(root, "golden.yaml")
	if err := os.WriteFile(protoPath, []byte(goldenProtocol), 0o644); err != nil {
		tb.Fatal(err)
	}
	p, err := protocol.Load(protoPath)
	if err != nil {
		tb.Fatal(err)
	}
	ids := make([][]string, count)
	for i := range docs {
		id := fmt.Sprintf("doc-%04d", i)
		ids[extractbench.ShardOf(id, count)] = append(ids[extractbench.ShardOf(id, count)], id)
	}
	urls := []string{"http://127.0.0.1:9", "http://127.0.0.1:10"}
	var dirs []string
	for n, idx := range []int{0, 1, 2, 1} {
		dir := filepath.Join(root, fmt.Sprintf("shard-%d-%d", idx, n))
		m := extractbench.Manifest{Tool: extractbench.ToolInfo{Name: "extractbench", Version: extractbench.ToolVersion, ScorerVersion: extractbench.ScorerVersion}, ProtocolName: p.Name,
			ProtocolSource: protoPath, Protocol: p.Canonical(), Acceptance: p.Acceptance, Sweep: p.Sweep,
			Corpus:   extractbench.CorpusInfo{Path: "synthetic", SHA256: "synthetic", Count: docs, Classes: map[string]int{"short": docs}},
			Variants: []extractbench.VariantManifest{{Name: "bf16", Engine: extractbench.EngineInfo{Model: "m", Endpoints: urls}}},
			Shard:    &extractbench.Shard{Index: idx, Count: count, Documents: len(ids[idx]), Hash: extractbench.ShardHash}}
		m.Fingerprint = extractbench.Fingerprint(&m)
		writeGoldenShard(tb, dir, &m, fmt.Sprintf("golden-%d", n), int64(n)*int64(3*time.Millisecond), ids[idx], urls, rand.New(rand.NewPCG(7, uint64(n))))
		dirs = append(dirs, dir)
	}
	return dirs
}

// writeGoldenShard writes one shard run: each pass with one request per
// document, their figures drawn from rng.
func writeGoldenShard(tb testing.TB, dir string, m *extractbench.Manifest, runID string, origin int64, ids, urls []string, rng *rand.Rand) {
	b, _ := json.Marshal(m)
	run := resultstest.Run{RunID: runID, Fingerprint: m.Fingerprint, ProtocolName: m.ProtocolName, Manifest: json.RawMessage(b),
		StartedAt: 1, EndedAt: 2, Status: results.RunComplete, ClockOriginNS: 1_700_000_000_000_000_000 + origin, Sealed: true}
	ms := func(lo, hi int) int64 { return int64(lo+rng.IntN(hi-lo+1)) * 1e6 / 4 } // quarter milliseconds: ties happen
	at := int64(1e12)
	for _, rep := range []int{1, 2} {
		for _, level := range []int{1, 4} {
			key := extractbench.PassKey{RunID: runID, Variant: "bf16", Mode: extractbench.ModeConcurrency, Level: level, Repetition: rep}
			var docs, accepted int64
			for i, id := range ids {
				sched := at + int64(i)*ms(1, 8)
				send := sched + ms(0, 3)
				first := send + ms(1, 400)
				last := first + ms(0, 900)
				done := last + ms(0, 2)
				tokens := 5 + rng.IntN(40)
				r := extractbench.Record{RunID: runID, Variant: key.Variant, Mode: key.Mode, Level: level, Repetition: rep, DocID: id, LengthClass: "short",
					Response: extractbench.Response{Timings: extractbench.Timings{SchedNS: sched, SendNS: send, FirstByteNS: first - ms(0, 1), FirstTokenNS: first, LastTokenNS: last, DoneNS: done},
						PromptTokens: 300 + rng.IntN(30), CompletionTokens: tokens, UsageReported: rng.IntN(10) > 0, ClientChunks: tokens - rng.IntN(2),
						Transport: extractbench.Transport{FinishReason: "stop", HTTPStatus: 200},
						Output:    fmt.Sprintf(`{"date": "2025-01-%02d", "amount": %d.50, "category": "rent"}`, 1+rng.IntN(28), rng.IntN(5000))},
					Endpoint: urls[rng.IntN(len(urls))]}
				if rng.IntN(4) == 0 {
					c := rng.IntN(200)
					r.CachedPromptTokens = &c
				}
				if rng.IntN(3) == 0 {
					e := r.PromptTokens + rng.IntN(3) - 1
					r.ExpectedPromptTokens = &e
				}
				onTime := rng.IntN(5) > 0
				r.OnTime = &onTime
				right := func() extractbench.FieldResult {
					if rng.IntN(12) == 0 {
						return extractbench.FPFN
					}
					return extractbench.TP
				}
				r.Score = extractbench.Score{StrictParseOK: true, LenientParseOK: true, SchemaOK: true, Date: right(), Amount: right(), Category: right()}
				switch k := rng.IntN(30); {
				case k == 0:
					r.FinishReason, r.Score = "length", extractbench.Score{Failure: extractbench.Truncation, FailureDetail: "finish_reason=length"}
				case k == 1:
					r.FirstTokenNS, r.LastTokenNS, r.Output, r.CompletionTokens, r.HTTPStatus = 0, 0, "", 0, 500
					r.ErrorBody = `{"error": "out of memory"}`
					r.Score = extractbench.Score{Failure: extractbench.Memory, FailureDetail: "out of memory"}
				case k == 2:
					r.Score = extractbench.Score{LenientParseOK: true, Failure: extractbench.Format, FailureDetail: "not strict JSON"}
				case r.Date != extractbench.TP || r.Amount != extractbench.TP || r.Category != extractbench.TP:
					r.Failure, r.FailureDetail = extractbench.Quality, "a field is wrong"
				default:
					r.Accepted = true
				}
				docs++
				if r.Accepted {
					accepted++
				}
				run.Records = append(run.Records, r)
			}
			phase := extractbench.PhaseSweep
			if level == 1 {
				phase = extractbench.PhaseBaseline
			}
			run.Passes = append(run.Passes, extractbench.Pass{RunID: runID, Variant: key.Variant, Mode: key.Mode, Level: level, Repetition: rep,
				Phase: phase, Attempt: 1, Status: extractbench.PassComplete, Docs: docs, Accepted: accepted, SentConcurrency: int64(level)})
			at += 1e12
		}
	}
	resultstest.Write(tb, dir, run)
}
