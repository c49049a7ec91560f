package report

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/pipeline/merge"
	"github.com/extractbench/extractbench/results"
)

// runKind is one kind of run whose report the browser test opens: build
// writes its results directory (and returns it).
type runKind struct {
	name  string
	build func(t *testing.T) string
}

// runKinds are every kind of run a report is made of: each sweep mode, an
// auto-levels rate sweep (with its probe), a merged run of two shards,
// replicas, a run where one variant failed and one cut by an interruption.
// All but the concurrency fixture are real runs of the built-in engine on a
// dozen documents, a few seconds each.
var runKinds = []runKind{
	{"concurrency", func(t *testing.T) string {
		f := defaultFixture
		f.Variants = []string{"bf16", "int8"}
		return mustWriteFixture(t, f)
	}},
	{"concurrency-replicas-fixture", func(t *testing.T) string {
		f := defaultFixture
		f.Replicas = []string{"http://10.0.0.11:8000", "http://10.0.0.12:8000"}
		return mustWriteFixture(t, f)
	}},
	{"batch", func(t *testing.T) string {
		return builtinRun(t, "{mode: batch, levels: [1, 2, 4], repetitions: 1, warmup: 0}", "{time_scale: 0.02}", "", nil)
	}},
	{"rate", func(t *testing.T) string {
		return builtinRun(t, "{mode: rate, arrival: constant, levels: [10, 20, 40], repetitions: 1, warmup: 0}", "{time_scale: 0.05, max_running: 4}", "", nil)
	}},
	{"rate-two-variants", func(t *testing.T) string {
		// int4 is slow enough to break the latency objective: its rate
		// table's verdicts carry their long reasons.
		more := "  - name: int4\n    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0.6, max_running: 2}}\n"
		return builtinRun(t, "{mode: rate, arrival: constant, levels: [10, 20, 40], repetitions: 1, warmup: 0}", "{time_scale: 0.05, max_running: 4}", more, nil)
	}},
	{"rate-auto", func(t *testing.T) string {
		return builtinRun(t, "{mode: rate, arrival: constant, levels: auto, auto_levels: 3, repetitions: 1, warmup: 0}", "{time_scale: 0.05, max_running: 3}", "", nil)
	}},
	{"context", func(t *testing.T) string {
		return builtinRun(t, "{mode: context, levels: classes, concurrency: 3, repetitions: 1, warmup: 0}", "{time_scale: 0.02}", "", nil)
	}},
	{"replicas", func(t *testing.T) string {
		return builtinRun(t, "{mode: concurrency, levels: [1, 2, 4], repetitions: 1, warmup: 0}", "{time_scale: 0.02}, replicas: 2", "", nil)
	}},
	{"merged", func(t *testing.T) string {
		dir := t.TempDir()
		proto := builtinProtocol(t, dir, "{mode: concurrency, levels: [1, 2], repetitions: 1, warmup: 0}", "{time_scale: 0.02}", "")
		var shards []string
		for i := range 2 {
			out := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
			runPipeline(t, pipeline.Options{ProtocolPath: proto, OutDir: out, Shard: &extractbench.Shard{Index: i, Count: 2}})
			shards = append(shards, out)
		}
		out := filepath.Join(dir, "merged")
		if _, err := merge.Merge(context.Background(), merge.Options{OutDir: out, Dirs: shards}); err != nil {
			t.Fatalf("merge: %v", err)
		}
		return out
	}},
	{"failed-variant", func(t *testing.T) string {
		// The first variant fails its verdict on memory, format and
		// truncation failures; the second's engine answered when the run
		// checked it and is gone by its turn: ERROR.
		gone := httptest.NewServer(http.NotFoundHandler())
		var once sync.Once
		t.Cleanup(func() { once.Do(gone.Close) })
		more := fmt.Sprintf("  - name: gone\n    engine: {url: %q, model: sim-8b}\n", gone.URL)
		out := builtinRunWith(t, "{mode: concurrency, levels: [1, 2, 4], repetitions: 1, warmup: 0}",
			"{time_scale: 0.02, faults: {oom: 0.25, garbage: 0.2, truncate: 0.15}}", more, func(int64) bool {
				once.Do(gone.Close)
				return false
			}, true)
		wantStates(t, out, results.OutcomeFail, results.OutcomeError)
		return out
	}},
	{"interrupted", func(t *testing.T) string {
		// Cut in the baseline's second repetition (12 documents a pass):
		// one complete pass, one cut, no verdict.
		out := builtinRun(t, "{mode: concurrency, levels: [1, 2, 4], repetitions: 2, warmup: 0}", "{time_scale: 0.02}", "", func(n int64) bool { return n > 18 })
		wantStates(t, out, results.OutcomeInterrupted)
		return out
	}},
}

// kindDocs is the corpus of the built-in runs: the first short, usual and
// long documents of the default corpus, four of each.
func kindDocs(t *testing.T) []corpus.Document {
	t.Helper()
	c, err := corpus.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	per := map[corpus.LengthClass]int{}
	var out []corpus.Document
	for _, d := range c.Documents {
		if per[d.LengthClass] < 4 {
			per[d.LengthClass]++
			out = append(out, d)
		}
	}
	return out
}

// builtinProtocol writes a protocol on the built-in engine with the sweep
// and builtin options given (and more variants, as YAML list items) and
// returns its path.
func builtinProtocol(t *testing.T, dir, sweep, builtinOpts, moreVariants string) string {
	t.Helper()
	b, err := corpus.EncodeDocuments(kindDocs(t))
	if err != nil {
		t.Fatal(err)
	}
	corpusPath := filepath.Join(dir, "docs.jsonl")
	if err := os.WriteFile(corpusPath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p := fmt.Sprintf(`name: kinds
corpus: %s
acceptance: {min_accepted: 0.5, latency_p95_ms: 2000}
sweep: %s
request_timeout: 20s
variants:
  - name: bf16
    engine: {url: builtin, model: sim-8b, builtin: %s}
%s`, corpusPath, sweep, builtinOpts, moreVariants)
	path := filepath.Join(dir, "protocol.yaml")
	if err := os.WriteFile(path, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// builtinRun runs a protocol (builtinProtocol) and returns its results
// directory. stop, when set, is asked before each measured request with
// the number sent so far; true cancels the run there, as a Ctrl-C.
func builtinRun(t *testing.T, sweep, builtinOpts, moreVariants string, stop func(sent int64) bool) string {
	t.Helper()
	return builtinRunWith(t, sweep, builtinOpts, moreVariants, stop, false)
}

// builtinRunWith is builtinRun for a run that may end in a variant's
// error (mayFail) rather than interrupted.
func builtinRunWith(t *testing.T, sweep, builtinOpts, moreVariants string, stop func(sent int64) bool, mayFail bool) string {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	opts := pipeline.Options{ProtocolPath: builtinProtocol(t, dir, sweep, builtinOpts, moreVariants), OutDir: out}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sent atomic.Int64
	if stop != nil {
		opts.BeforeSend = func() {
			if stop(sent.Add(1)) {
				cancel()
			}
		}
	}
	sum, err := pipeline.Run(ctx, withDefaults(opts))
	switch {
	case sum == nil:
		t.Fatalf("run: %v", err)
	case ctx.Err() != nil && !sum.Interrupted:
		t.Fatalf("cancelled, and the run was not interrupted: %+v", sum)
	case err != nil && !mayFail && !sum.Interrupted:
		t.Fatalf("run: %v", err)
	case stop != nil && !mayFail && !sum.Interrupted:
		t.Fatalf("the run was not interrupted: %+v", sum)
	}
	return out
}

func withDefaults(opts pipeline.Options) pipeline.Options {
	opts.Starters, opts.Quiet = starter.Starters(), true
	return opts
}

// wantStates fails the test unless the run's variants end in these states,
// in order: the report of a failed or cut run is what the kind is for.
func wantStates(t *testing.T, dir string, want ...string) {
	t.Helper()
	d, err := results.LoadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range d.Outcomes() {
		got = append(got, o.State)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("variants ended %v, want %v", got, want)
	}
}

// runPipeline runs to the end.
func runPipeline(t *testing.T, opts pipeline.Options) {
	t.Helper()
	if _, err := pipeline.Run(context.Background(), withDefaults(opts)); err != nil {
		t.Fatalf("run: %v", err)
	}
}
