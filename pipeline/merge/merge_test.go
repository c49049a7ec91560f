package merge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
	"github.com/extractbench/extractbench/pipeline/protocol"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// synthProtocol is the protocol of the synthetic shards: one variant, a
// concurrency sweep whose levels give the passes.
const synthProtocol = `name: synth
corpus: default
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [%s], repetitions: 1, warmup: 0}
variants:
  - name: bf16
    engine: {url: "http://127.0.0.1:9", model: m}
`

// synthShards describes synthetic shards written straight through
// results.Store (no engine): docs documents split by extractbench.ShardOf over
// count shards, one pass per level, every request accepted.
type synthShards struct {
	docs, count int
	levels      []int
	// extra: shard directories beyond the count's, each a copy of shard
	// 0's documents (a retried shard written twice).
	extra int
	// sealed: each shard's digests written, as a shard's run writes them
	// when it ends.
	sealed bool
	// score, when set, is document i's score (of the corpus's order);
	// nil: every request accepted, every field TP.
	score func(i int) extractbench.Score
}

// write creates the shards' directories under root and returns them.
func (s synthShards) write(tb testing.TB, root string) []string {
	tb.Helper()
	levels := ""
	for i, l := range s.levels {
		if i > 0 {
			levels += ", "
		}
		levels += strconv.Itoa(l)
	}
	protoPath := filepath.Join(root, "synth.yaml")
	if err := os.WriteFile(protoPath, []byte(fmt.Sprintf(synthProtocol, levels)), 0o644); err != nil {
		tb.Fatal(err)
	}
	p, err := protocol.Load(protoPath)
	if err != nil {
		tb.Fatal(err)
	}
	ids := make([][]string, s.count)
	for i := range s.docs {
		id := fmt.Sprintf("doc-%07d", i)
		sh := extractbench.ShardOf(id, s.count)
		ids[sh] = append(ids[sh], id)
	}
	var dirs []string
	for n := range s.count + s.extra {
		idx := n
		if n >= s.count {
			idx = 0
		}
		dir := filepath.Join(root, fmt.Sprintf("shard-%d-%d", idx, n))
		m := extractbench.Manifest{Tool: extractbench.ToolInfo{Name: "extractbench", Version: extractbench.ToolVersion, ScorerVersion: extractbench.ScorerVersion}, ProtocolName: p.Name,
			ProtocolSource: protoPath, Protocol: p.Canonical(), Acceptance: p.Acceptance, Sweep: p.Sweep,
			Corpus:   extractbench.CorpusInfo{Path: "synthetic", SHA256: "synthetic", Count: s.docs, Classes: map[string]int{"short": s.docs}},
			Variants: []extractbench.VariantManifest{{Name: "bf16", Engine: extractbench.EngineInfo{Model: "m"}}},
			Shard:    &extractbench.Shard{Index: idx, Count: s.count, Documents: len(ids[idx]), Hash: extractbench.ShardHash}}
		m.Fingerprint = extractbench.Fingerprint(&m)
		writeSynthShard(tb, dir, &m, fmt.Sprintf("synth-%d", n), int64(n)*int64(time.Millisecond), ids[idx], s.levels, s.sealed, s.score)
		dirs = append(dirs, dir)
	}
	return dirs
}

// writeSynthShard writes one shard run: each level's pass with one request
// per document, 2 ms apart, its clock origin offset from the others'.
func writeSynthShard(tb testing.TB, dir string, m *extractbench.Manifest, runID string, origin int64, ids []string, levels []int, sealed bool,
	score func(i int) extractbench.Score) {
	run := resultstest.Run{RunID: runID, Fingerprint: m.Fingerprint, ProtocolName: m.ProtocolName, Manifest: m,
		StartedAt: 1, EndedAt: 2, Status: results.RunComplete, ClockOriginNS: 1_700_000_000_000_000_000 + origin, Sealed: sealed}
	yes := true
	for li, level := range levels {
		key := extractbench.PassKey{RunID: runID, Variant: "bf16", Mode: extractbench.ModeConcurrency, Level: level, Repetition: 1}
		t0 := int64(li+1) * 1e12
		for i, id := range ids {
			send := t0 + int64(i)*2e6
			run.Records = append(run.Records, extractbench.Record{RunID: runID, Variant: key.Variant, Mode: key.Mode, Level: level, Repetition: 1, DocID: id, LengthClass: "short",
				Response: extractbench.Response{Timings: extractbench.Timings{SchedNS: send, SendNS: send + 1e3, FirstByteNS: send + 4e5, FirstTokenNS: send + 5e5, LastTokenNS: send + 15e5, DoneNS: send + 16e5},
					PromptTokens: 310, CompletionTokens: 24, UsageReported: true, ClientChunks: 24,
					Transport: extractbench.Transport{FinishReason: "stop", HTTPStatus: 200},
					Output:    `{"date": "2025-01-02", "amount": 1234.50, "category": "rent"}`},
				Score:  extractbench.Score{StrictParseOK: true, LenientParseOK: true, SchemaOK: true, Date: extractbench.TP, Amount: extractbench.TP, Category: extractbench.TP, Accepted: true},
				OnTime: &yes})
			if score != nil {
				doc, _ := strconv.Atoi(strings.TrimPrefix(id, "doc-"))
				rec := &run.Records[len(run.Records)-1]
				rec.Score = score(doc)
			}
		}
		phase := extractbench.PhaseSweep
		if li == 0 {
			phase = extractbench.PhaseBaseline
		}
		run.Passes = append(run.Passes, extractbench.Pass{RunID: runID, Variant: key.Variant, Mode: key.Mode, Level: level, Repetition: 1,
			Phase: phase, Attempt: 1, Status: extractbench.PassComplete, Docs: int64(len(ids)), Accepted: int64(len(ids)), SentConcurrency: 1})
	}
	resultstest.Write(tb, dir, run)
}

// TestMerge_Duplicates: a shard written twice (two directories claim index
// 0) gives every row of it once; the repeats are counted and named, the
// index reported, and the merged passes still hold each document once.
func TestMerge_Duplicates(t *testing.T) {
	root := t.TempDir()
	dirs := synthShards{docs: 40, count: 2, levels: []int{1, 2}, extra: 1}.write(t, root)
	sum, err := Merge(pipelinetest.Context(t), Options{OutDir: filepath.Join(root, "merged"), Dirs: dirs})
	if err != nil {
		t.Fatal(err)
	}
	shard0 := 0
	for i := range 40 {
		if extractbench.ShardOf(fmt.Sprintf("doc-%07d", i), 2) == 0 {
			shard0++
		}
	}
	if sum.Rows != 80 || sum.Duplicates != int64(2*shard0) || len(sum.DuplicateIndexes) != 1 || sum.DuplicateIndexes[0] != 0 || len(sum.DuplicateRows) == 0 {
		t.Errorf("rows %d duplicates %d (want 80 and %d) indexes %v examples %d", sum.Rows, sum.Duplicates, 2*shard0, sum.DuplicateIndexes, len(sum.DuplicateRows))
	}
	if sum.Status != results.RunComplete || len(sum.Missing) != 0 {
		t.Errorf("status %s missing %v", sum.Status, sum.Missing)
	}
	for _, p := range sum.Passes {
		if p.Docs != 40 || !p.Complete() || p.Accepted != 40 {
			t.Errorf("merged pass level %d: %d docs, %d accepted, %s", p.Level, p.Docs, p.Accepted, p.Status)
		}
	}
}

// BenchmarkMerge merges synthetic shards of EXTRACTBENCH_MERGE_ROWS request
// rows in all (default 1,000,000: 4 shards × 4 passes × 62,500 documents)
// and reports rows per second and CPU per row (cpu-ns/row, the process's
// user and system time), the whole merge included: reading the
// shards and checking them against their digests (each shard is sealed,
// as a shard's run seals itself), writing results.db, each pass's row, the
// Parquet and CSV export.
// EXTRACTBENCH_MERGE_KEEP=DIR writes the shards into DIR (shard-*) and
// keeps them, without merging, for scripts/rss-scale.sh (MERGE=1) to
// measure the command's CPU and peak RSS on.
// It is not run by go test without -bench, and not with -short:
//
//	go test ./pipeline/merge -run '^$' -bench BenchmarkMerge -benchtime 1x
func BenchmarkMerge(b *testing.B) {
	if testing.Short() {
		b.Skip("a 1M-row merge; run without -short")
	}
	rows := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("EXTRACTBENCH_MERGE_ROWS")); err == nil && v > 0 {
		rows = v
	}
	levels := []int{1, 2, 4, 8}
	root := os.Getenv("EXTRACTBENCH_MERGE_KEEP")
	if root == "" {
		root = b.TempDir()
	} else if err := os.MkdirAll(root, 0o755); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	dirs := synthShards{docs: rows / len(levels), count: 4, levels: levels, sealed: true}.write(b, root)
	b.Logf("wrote %d shards of %d rows in all in %s", len(dirs), rows, time.Since(start).Round(time.Millisecond))
	if os.Getenv("EXTRACTBENCH_MERGE_KEEP") != "" {
		return
	}
	runtime.GC() // the shards' garbage is not the merge's
	cpu0 := resultstest.ProcessCPU()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		sum, err := Merge(context.Background(), Options{OutDir: filepath.Join(root, fmt.Sprintf("merged-%d", i)), Dirs: dirs})
		if err != nil {
			b.Fatal(err)
		}
		if sum.Rows != int64(rows/len(levels)*len(levels)) {
			b.Fatalf("merged %d rows, want %d", sum.Rows, rows)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	if cpu := resultstest.ProcessCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(rows*b.N), "cpu-ns/row")
	}
}

// crashAt is a Progress writer that panics at the first line containing
// at, as a kill -9 would stop the merge there (the panic is recovered by
// the test; nothing after that point runs).
type crashAt struct{ at string }

func (c crashAt) Write(p []byte) (int, error) {
	if strings.Contains(string(p), c.at) {
		panic("killed: " + c.at)
	}
	return len(p), nil
}

// TestMerge_KilledAfterReplace: a merge killed once its new results.db is
// in place, before it exported and reported, leaves no report or export of
// the previous merge beside the new db: they are removed before the db is
// replaced.
func TestMerge_KilledAfterReplace(t *testing.T) {
	root := t.TempDir()
	dirs := synthShards{docs: 40, count: 2, levels: []int{1, 2}}.write(t, root)
	out := filepath.Join(root, "merged")
	derived := []string{"report.html", "report.md"}
	first, err := Merge(pipelinetest.Context(t), Options{OutDir: out, Dirs: dirs[:1], Derived: derived})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range derived { // what cmd's report.Write makes of the first merge
		if err := os.WriteFile(filepath.Join(out, name), []byte("the merge of shard 0 alone"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stale := append(results.ExportFiles(), derived...)
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Fatalf("the first merge left no %s: %v", name, err)
		}
	}

	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Fatal("the merge never announced its new results.db")
			}
		}()
		_, _ = Merge(pipelinetest.Context(t), Options{OutDir: out, Dirs: dirs, Derived: derived, Progress: crashAt{"wrote " + filepath.Join(out, results.DBName)}})
	}()
	d, err := results.LoadRun(pipelinetest.Context(t), out)
	if err != nil {
		t.Fatal(err)
	}
	if d.Run.RunID == first.RunID || d.Manifest.Merge == nil || len(d.Manifest.Merge.Shards) != 2 {
		t.Fatalf("results.db holds run %s, want the second merge's (both shards), not %s", d.Run.RunID, first.RunID)
	}
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(out, name)); !os.IsNotExist(err) {
			t.Errorf("%s of the previous merge is still beside the new results.db (stat: %v)", name, err)
		}
	}
}

// TestMerge_Audit: shards sealed as a shard's run seals itself merge to the
// same passes as unsealed ones (which are named as such); an unsealed
// shard whose row's verdict contradicts its scores, or whose row is of a
// document outside it, is refused naming the shard, the pass and the row.
func TestMerge_Audit(t *testing.T) {
	ctx := pipelinetest.Context(t)
	merge := func(t *testing.T, dirs []string) (*Report, error) {
		return Merge(ctx, Options{OutDir: filepath.Join(t.TempDir(), "merged"), Dirs: dirs})
	}
	plain := synthShards{docs: 40, count: 2, levels: []int{1, 2}}.write(t, t.TempDir())
	unsealed, err := merge(t, plain)
	if err != nil {
		t.Fatal(err)
	}
	if len(unsealed.Unsealed) != 2 {
		t.Errorf("unsealed shards named %q, want both", unsealed.Unsealed)
	}
	got, err := merge(t, synthShards{docs: 40, count: 2, levels: []int{1, 2}, sealed: true}.write(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Unsealed) != 0 {
		t.Errorf("sealed shards named unsealed: %q", got.Unsealed)
	}
	a, _ := json.Marshal(unsealed.Passes)
	b, _ := json.Marshal(got.Passes)
	if string(a) != string(b) {
		t.Errorf("sealed and unsealed shards of the same rows merge differently:\n%s\n%s", a, b)
	}

	var other string // a document id of shard 0
	for i := 0; other == ""; i++ {
		if id := fmt.Sprintf("doc-%07d", i); extractbench.ShardOf(id, 2) == 0 {
			other = id
		}
	}
	tests := []struct {
		name string
		edit resultstest.Edit
		want string
	}{
		{"verdict contradicts its scores", resultstest.SetFailure(resultstest.Row{Level: 2}, extractbench.Quality),
			"level=2/rep=1: 1 row whose verdict contradicts their scores: doc-"},
		{"document outside the shard", resultstest.SetDocID(resultstest.Row{Level: 1}, other),
			"level=1/rep=1: 1 row of documents outside shard 1/2 (fnv1a64(id) mod count): " + other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dirs := synthShards{docs: 40, count: 2, levels: []int{1, 2}}.write(t, t.TempDir())
			resultstest.Tamper(t, dirs[1], tt.edit)
			_, err := merge(t, dirs)
			var te *TamperedError
			var ce *ConfigError
			if !errors.As(err, &te) || !errors.As(err, &ce) || len(te.Shards) != 1 || te.Shards[0].Dir != dirs[1] {
				t.Fatalf("err = %v, want a ConfigError refusing shard 1/2 in %s", err, dirs[1])
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to say %q", err, tt.want)
			}
		})
	}
}
