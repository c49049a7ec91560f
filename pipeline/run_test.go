package pipeline_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/engines/builtin"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/engines/process"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// writeSmallCorpus writes the first n documents of the default corpus (short
// and usual ones, plus one long) as a bare .jsonl file.
func writeSmallCorpus(t *testing.T, dir string, n int) string {
	return writeCorpus(t, dir, n, 1)
}

// writeCorpus writes n documents of the default corpus, longs of them long
// ones (where memory runs out first), interleaved.
func writeCorpus(t *testing.T, dir string, n, longs int) string {
	t.Helper()
	c, err := corpus.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	var short, long []corpus.Document
	for _, d := range c.Documents {
		if d.LengthClass == corpus.Long {
			long = append(long, d)
		} else {
			short = append(short, d)
		}
	}
	var docs []corpus.Document
	every := n / longs
	for i, s, l := 0, 0, 0; i < n; i++ {
		if (i+1)%every == 0 && l < longs {
			docs = append(docs, long[l])
			l++
			continue
		}
		docs = append(docs, short[s])
		s++
	}
	b, err := corpus.EncodeDocuments(docs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "small.jsonl")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeProtocol writes a protocol over the small corpus on the built-in
// engine at zero modelled latency (or the given time scale).
func writeProtocol(t *testing.T, dir, corpusPath, sweep, builtinOpts string) string {
	t.Helper()
	p := fmt.Sprintf(`name: e2e
corpus: %s
prompt:
  system: "You extract fields from business documents. Answer with JSON only."
  user: "Extract date, amount and category.\n\n{{document}}"
parse: strict
generation: {max_tokens: 128, temperature: 0, seed: 7}
acceptance: {min_accepted: 0.5}
sweep: %s
request_timeout: 20s
variants:
  - name: bf16
    engine: {url: builtin, model: sim-8b, builtin: %s}
`, corpusPath, sweep, builtinOpts)
	path := filepath.Join(dir, "protocol.yaml")
	if err := os.WriteFile(path, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRun_EndToEnd runs a small protocol on the built-in engine and checks
// the record: documents × passes rows, no duplicate (pass, document), one
// CSV row per pass, Parquet files written.
func TestRun_EndToEnd(t *testing.T) {
	dir := t.TempDir()
	const docs = 12
	proto := writeProtocol(t, dir, writeSmallCorpus(t, dir, docs), "{mode: concurrency, levels: [1, 2, 4], repetitions: 2, warmup: 2}", "{time_scale: 0}")
	out := filepath.Join(dir, "out")
	sum, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	const passes = 3 * 2
	if got := len(sum.Passes); got != passes {
		t.Fatalf("passes = %d, want %d", got, passes)
	}
	reqs, ps := resultstest.Requests(t, out), resultstest.Passes(t, out)
	if got, want := len(reqs), docs*passes; got != want {
		t.Errorf("request rows = %d, want documents × passes = %d", got, want)
	}
	if got := resultstest.Duplicates(reqs); got != 0 {
		t.Errorf("%d duplicated (pass, document) rows", got)
	}
	if got := resultstest.Count(ps, func(p *extractbench.Pass) bool { return p.Status == extractbench.PassComplete && p.Docs == docs }); got != passes {
		t.Errorf("complete passes with %d docs = %d, want %d", docs, got, passes)
	}
	if got := resultstest.Count(reqs, orderedInstants); got != docs*passes {
		t.Errorf("requests with ordered instants = %d, want %d", got, docs*passes)
	}
	if got := resultstest.Count(ps, func(p *extractbench.Pass) bool { return p.Level == 4 && p.SentConcurrency > 4 }); got != 0 {
		t.Errorf("a level-4 pass had more than 4 requests in flight")
	}
	if got := completeRuns(t, out); got != 1 {
		t.Errorf("complete runs = %d, want 1", got)
	}
	f, err := os.Open(filepath.Join(out, "raw_table.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := len(rows) - 1; got != passes {
		t.Errorf("raw_table.csv rows = %d, want one per pass = %d", got, passes)
	}
	for _, name := range []string{"requests.parquet", "passes.parquet", "telemetry.parquet"} {
		if st, err := os.Stat(filepath.Join(out, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", name, err)
		}
	}
}

// TestRun_FailureClasses configures the built-in engine to cause every
// failure class one of its faults causes (the first such fault) and checks
// each appears, with accepted documents beside them.
func TestRun_FailureClasses(t *testing.T) {
	dir := t.TempDir()
	caused := map[extractbench.Failure]builtin.Fault{}
	var rates []string
	for _, f := range builtin.FaultKinds {
		if _, ok := caused[f.Class()]; !ok {
			caused[f.Class()] = f
			rates = append(rates, string(f)+": 0.1")
		}
	}
	proto := writeProtocol(t, dir, writeSmallCorpus(t, dir, 40), "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0, on_memory_failure: record}",
		"{time_scale: 0, faults: {"+strings.Join(rates, ", ")+"}}")
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	reqs := resultstest.Requests(t, out)
	byClass := resultstest.ByFailure(reqs)
	for class, fault := range caused {
		if byClass[class] == 0 {
			t.Errorf("no %s failure recorded (fault %s causes it)", class, fault)
		}
	}
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Accepted && r.Failure == extractbench.None }); got == 0 {
		t.Error("no accepted document")
	}
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Failure != extractbench.None && r.FailureDetail == "" }); got != 0 {
		t.Errorf("%d failures without a detail", got)
	}
	ps := resultstest.Passes(t, out)
	if len(ps) != 1 {
		t.Fatalf("%d passes, want 1", len(ps))
	}
	sumFailures := ps[0].Accepted
	for _, f := range extractbench.Failures {
		sumFailures += resultstest.Column(t, ps[0], results.FailureColumn(f)).(int64)
	}
	if sumFailures != ps[0].Docs {
		t.Errorf("accepted + failures = %d, want docs = %d", sumFailures, ps[0].Docs)
	}
}

// TestMain lets the kill test re-run this binary as the process it kills.
func TestMain(m *testing.M) {
	if addr := os.Getenv("EXTRACTBENCH_TEST_ENGINE_ADDR"); addr != "" {
		serveTestEngine(addr)
		return
	}
	if addr := os.Getenv(noopEngineEnv); addr != "" {
		serveNoopEngine(addr) // bench_run_test.go
		return
	}
	if proto := os.Getenv("EXTRACTBENCH_TEST_CHILD_PROTOCOL"); proto != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		_, err := pipeline.Run(ctx, pipeline.Options{Starters: starter.Starters(), Process: process.Starter{}, ProtocolPath: proto, OutDir: os.Getenv("EXTRACTBENCH_TEST_CHILD_OUT"), Quiet: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startChild runs the protocol in a child process (this test binary) and
// sends sig once the second pass has some rows but is not finished.
func startChild(t *testing.T, proto, out string, docs int, sig os.Signal) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "EXTRACTBENCH_TEST_CHILD_PROTOCOL="+proto, "EXTRACTBENCH_TEST_CHILD_OUT="+out)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { // drain the child's stderr so it never blocks
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	sent := false
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		n, ok := resultstest.RequestCount(out)
		if ok && n > docs+3 && n < 2*docs {
			_ = cmd.Process.Signal(sig)
			sent = true
			break
		}
	}
	_ = cmd.Wait()
	if !sent {
		t.Fatal("the child finished or never started before it could be stopped mid-pass")
	}
}

// checkResumed resumes the run in out and checks every document of every
// pass is recorded exactly once.
func checkResumed(t *testing.T, out string, docs, passes int) {
	t.Helper()
	before, _ := resultstest.RequestCount(out)
	sum, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), OutDir: out, Resume: true, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Resumed {
		t.Error("summary does not say resumed")
	}
	reqs := resultstest.Requests(t, out)
	if got, want := len(reqs), docs*passes; got != want {
		t.Errorf("request rows after resume = %d, want %d (had %d when stopped)", got, want, before)
	}
	if got := resultstest.Duplicates(reqs); got != 0 {
		t.Errorf("%d duplicated (pass, document) rows after resume", got)
	}
	if got := resultstest.Distinct(reqs, func(r *extractbench.Record) string { return r.RunID }); got != 1 {
		t.Errorf("rows belong to %d runs, want 1", got)
	}
	if got := resultstest.Count(resultstest.Passes(t, out), func(p *extractbench.Pass) bool { return p.Status == extractbench.PassComplete && p.Docs == int64(docs) }); got != passes {
		t.Errorf("complete passes = %d, want %d", got, passes)
	}
	if got := eventCount(t, out, results.EventResumed, "%"); got != 1 {
		t.Errorf("resumed events = %d, want 1", got)
	}
	if got := completeRuns(t, out); got != 1 {
		t.Errorf("the resumed run is not complete")
	}
}

// orderedInstants keeps a request whose stored TTFT and E2E are defined,
// TTFT no later than E2E, sent no earlier than scheduled.
func orderedInstants(r *extractbench.Record) bool {
	ttft, ok1 := r.TTFT()
	e2e, ok2 := r.E2E()
	return ok1 && ok2 && ttft <= e2e && r.SendNS != 0 && r.SchedNS != 0 && r.SendNS >= r.SchedNS
}

// completeRuns is how many runs of out are complete.
func completeRuns(t *testing.T, out string) int {
	t.Helper()
	return resultstest.Count(resultstest.Runs(t, out), func(r *results.Run) bool { return r.Status == results.RunComplete })
}

// eventCount is how many events of out have kind and a detail LIKE pattern.
func eventCount(t *testing.T, out, kind, pattern string) int {
	t.Helper()
	return resultstest.Count(resultstest.Events(t, out), func(e *results.Event) bool { return e.Kind == kind && resultstest.Like(e.Detail, pattern) })
}

// TestRun_ResumeAfterSIGKILL kills a running process mid-pass, resumes, and
// finds every document of every pass exactly once.
func TestRun_ResumeAfterSIGKILL(t *testing.T) {
	dir := t.TempDir()
	const docs = 30
	// A modelled pace slow enough to be killed mid-run: about 2 ms per request.
	proto := writeProtocol(t, dir, writeSmallCorpus(t, dir, docs), "{mode: concurrency, levels: [1, 4], repetitions: 2, warmup: 1}", "{time_scale: 0.05}")
	out := filepath.Join(dir, "out")
	startChild(t, proto, out, docs, syscall.SIGKILL)
	checkResumed(t, out, docs, 2*2)
}

// TestRun_InterruptThenResume sends SIGINT mid-pass: the run stops
// dispatching, finishes its writes, is marked interrupted with an event, and
// -resume completes it.
func TestRun_InterruptThenResume(t *testing.T) {
	dir := t.TempDir()
	const docs = 30
	proto := writeProtocol(t, dir, writeSmallCorpus(t, dir, docs), "{mode: concurrency, levels: [1, 4], repetitions: 2, warmup: 1}", "{time_scale: 0.05}")
	out := filepath.Join(dir, "out")
	startChild(t, proto, out, docs, os.Interrupt)
	if got := resultstest.Count(resultstest.Runs(t, out), func(r *results.Run) bool { return r.Status == results.RunInterrupted }); got != 1 {
		t.Errorf("interrupted runs = %d, want 1", got)
	}
	if got := eventCount(t, out, results.EventInterrupted, "%"); got != 1 {
		t.Errorf("interrupted events = %d, want 1", got)
	}
	if got := resultstest.Count(resultstest.Passes(t, out), func(p *extractbench.Pass) bool { return p.Status == extractbench.PassInterrupted }); got != 1 {
		t.Errorf("interrupted passes = %d, want 1", got)
	}
	// The interruption is ours: a request it cut must not be recorded as
	// the engine's failure (the built-in engine here causes none).
	byClass := resultstest.ByFailure(resultstest.Requests(t, out))
	if got := byClass[extractbench.Memory] + byClass[extractbench.Error] + byClass[extractbench.Truncation]; got != 0 {
		t.Errorf("%d requests recorded as memory/error/truncation failures by the interruption", got)
	}
	checkResumed(t, out, docs, 2*2)
}

// oomEngine is an OpenAI-compatible test engine whose memory holds four
// sequences: a request that arrives while four are in flight gets vLLM's
// 503 out-of-memory answer, so memory failures depend on the level alone.
func oomEngine(t *testing.T) string {
	t.Helper()
	var inFlight atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		if n > 4 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"object":"error","message":"CUDA out of memory. Tried to allocate 2.00 GiB","type":"ServiceUnavailableError","param":null,"code":503}`)
			return
		}
		time.Sleep(30 * time.Millisecond) // long enough for the next arrivals to find the card full
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range []string{`{\"date\": null, `, `\"amount\": null, `, `\"category\": null}`} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"},\"finish_reason\":null}]}\n\n", c)
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestRun_MemoryFailuresRetryLower: a level beyond the card's memory fails
// with out-of-memory; the level stays recorded as measured, a lower retry
// is a recorded decision, and higher levels are skipped.
func TestRun_MemoryFailuresRetryLower(t *testing.T) {
	dir := t.TempDir()
	const docs = 32 // levels never exceed the corpus
	c := writeSmallCorpus(t, dir, docs)
	p := fmt.Sprintf(`name: oom
corpus: %s
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1, 4, 16, 32], repetitions: 1, warmup: 0, on_memory_failure: retry_lower}
variants:
  - name: small-card
    engine: {url: %q, model: m}
`, c, oomEngine(t))
	proto := filepath.Join(dir, "oom.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	sum, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	ps, ds := resultstest.Passes(t, out), resultstest.Decisions(t, out)
	t.Run("memory failures", func(t *testing.T) { memoryFailuresAt16(t, out, ps) })
	t.Run("retry lower", func(t *testing.T) { retriedLower(t, ps, ds, docs) })
	t.Run("higher levels skipped", func(t *testing.T) { higherSkipped(t, ps, ds) })
	t.Run("recommendation", func(t *testing.T) {
		// The retry at 10 breaks too (the card holds 4): 10 is the lowest level that broke.
		if r := sum.Variants[0].Series[0].Recommendation; r.FirstBroken != 10 || r.Recommended != 1 {
			t.Errorf("first broken %d, recommended %d; want 10 and 1 (4 is the highest usable, one step back)", r.FirstBroken, r.Recommended)
		}
	})
}

// memoryFailuresAt16: the card holds 4, so level 16 fails for memory,
// each failure naming the 503 and its out-of-memory text.
func memoryFailuresAt16(t *testing.T, out string, ps []extractbench.Pass) {
	if got := sweepPass(t, ps, 4).Failures.Of(extractbench.Memory); got != 0 {
		t.Errorf("level 4 had %d memory failures; the card holds 4", got)
	}
	if got := sweepPass(t, ps, 16).Failures.Of(extractbench.Memory); got == 0 {
		t.Fatal("level 16 had no memory failure")
	}
	if got := resultstest.Count(resultstest.Requests(t, out), func(r *extractbench.Record) bool {
		return r.Level == 16 && r.Failure == extractbench.Memory && r.HTTPStatus == 503 && resultstest.Like(r.FailureDetail, "%out of memory%")
	}); got == 0 {
		t.Error("no memory failure at 16 names the 503 and its out-of-memory text")
	}
}

// retriedLower: the retry at 10 is a recorded decision and a pass, and the
// first attempt at 16 stays the primary result.
func retriedLower(t *testing.T, ps []extractbench.Pass, ds []results.Decision, docs int64) {
	if got := resultstest.Count(ds, func(d *results.Decision) bool {
		return d.Kind == results.DecisionRetryLower && d.FromLevel == 16 && d.ToLevel == 10
	}); got != 1 {
		t.Errorf("retry_lower decisions 16 → 10 = %d, want 1", got)
	}
	if got := resultstest.Count(ps, func(p *extractbench.Pass) bool {
		return p.Level == 10 && p.Phase == extractbench.PhaseRetry && p.RetryOf != nil && *p.RetryOf == 16
	}); got != 1 {
		t.Errorf("retry passes at level 10 = %d, want 1", got)
	}
	if got := resultstest.Count(ps, func(p *extractbench.Pass) bool {
		return p.Level == 16 && p.Phase == extractbench.PhaseSweep && p.Docs == docs
	}); got != 1 {
		t.Error("the first attempt at level 16 is not kept as the primary result")
	}
}

// higherSkipped: level 32 is not run, and a decision says so.
func higherSkipped(t *testing.T, ps []extractbench.Pass, ds []results.Decision) {
	if got := resultstest.Count(ps, func(p *extractbench.Pass) bool { return p.Level == 32 }); got != 0 {
		t.Errorf("level 32 ran after memory failures at 16")
	}
	if got := resultstest.Count(ds, func(d *results.Decision) bool { return d.Kind == results.DecisionSkipLevel && d.FromLevel == 32 }); got != 1 {
		t.Errorf("skip_level decisions for 32 = %d, want 1", got)
	}
}

// sweepPass is the sweep's pass at level.
func sweepPass(t *testing.T, ps []extractbench.Pass, level int) *extractbench.Pass {
	t.Helper()
	for i := range ps {
		if ps[i].Level == level && ps[i].Phase == extractbench.PhaseSweep {
			return &ps[i]
		}
	}
	t.Fatalf("no sweep pass at level %d", level)
	return nil
}

// TestRun_BatchMode sends batches of B prompts in one /v1/completions call.
func TestRun_BatchMode(t *testing.T) {
	dir := t.TempDir()
	const docs = 10
	proto := writeProtocol(t, dir, writeSmallCorpus(t, dir, docs), "{mode: batch, levels: [1, 4], repetitions: 1, warmup: 0}", "{time_scale: 0}")
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	reqs, ps := resultstest.Requests(t, out), resultstest.Passes(t, out)
	if got := resultstest.Count(ps, func(p *extractbench.Pass) bool {
		return p.Mode == "batch" && p.BatchTransport == extractbench.TransportCompletionsList && p.RequestedBatch != nil && *p.RequestedBatch == int64(p.Level)
	}); got != 2 {
		t.Errorf("batch passes over completions_list = %d, want 2", got)
	}
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Mode == "batch" }); got != 2*docs {
		t.Errorf("batch request rows = %d, want %d", got, 2*docs)
	}
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Accepted }); got == 0 {
		t.Error("no document accepted in batch mode")
	}
	level4 := resultstest.Where(ps, func(p *extractbench.Pass) bool { return p.Level == 4 })
	if len(level4) == 0 {
		t.Fatal("no pass at batch 4")
	}
	for _, p := range level4 {
		if p.SentConcurrency > 4 {
			t.Errorf("batch 4 had %d requests in flight", p.SentConcurrency)
		}
	}
	// Each prompt's own usage, as vLLM gives it with continuous_usage_stats,
	// beside the client's own count of its chunks.
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Mode == "batch" && r.UsageReported && r.ClientChunks > 0 }); got != 2*docs {
		t.Errorf("batch rows with the engine's usage and the client's chunk count = %d, want %d", got, 2*docs)
	}
	if got := resultstest.Count(ps, func(p *extractbench.Pass) bool {
		return p.UsageReportedShare != nil && *p.UsageReportedShare == 1 && p.TokenCountMismatches != nil && *p.TokenCountMismatches == 0
	}); got != 2 {
		t.Errorf("batch passes with every usage reported and no token count mismatch = %d, want 2", got)
	}
}

// TestRun_Telemetry: the built-in engine's /metrics are sampled during each pass.
func TestRun_Telemetry(t *testing.T) {
	dir := t.TempDir()
	proto := writeProtocol(t, dir, writeSmallCorpus(t, dir, 20), "{mode: concurrency, levels: [1, 4], repetitions: 1, warmup: 0}", "{time_scale: 0.05}")
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	samples, ps := resultstest.Telemetry(t, out), resultstest.Passes(t, out)
	for _, metric := range []string{"num_requests_running", "kv_cache_usage_perc"} {
		if got := resultstest.Count(samples, func(s *results.TelemetryRow) bool { return strings.Contains(s.Metric, metric) }); got == 0 {
			t.Errorf("no %s samples", metric)
		}
	}
	if got := resultstest.Count(ps, func(p *extractbench.Pass) bool {
		return p.ObservedMaxRunning != nil && p.PeakKVUsage != nil && p.PeakTorchAllocatedBytes != nil
	}); got != 2 {
		t.Errorf("passes with engine peaks = %d, want 2", got)
	}
	if got := resultstest.Count(ps, func(p *extractbench.Pass) bool { return p.PeakGPUMemBytes != nil }); got != 0 {
		t.Error("a device memory peak was recorded for the simulated engine: it must be NULL (unavailable), never invented")
	}
}

// TestRun_ResumeRefusesOtherFingerprint: a different protocol is never mixed into a run.
func TestRun_ResumeRefusesOtherFingerprint(t *testing.T) {
	dir := t.TempDir()
	c := writeSmallCorpus(t, dir, 4)
	proto := writeProtocol(t, dir, c, "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0}", "{time_scale: 0}")
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	other := writeProtocol(t, dir, c, "{mode: concurrency, levels: [1, 2], repetitions: 1, warmup: 0}", "{time_scale: 0}")
	_, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: other, OutDir: out, Resume: true, Quiet: true})
	var ce *pipeline.ConfigError
	if err == nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), "fingerprint") {
		t.Fatalf("resume with another protocol: err = %v, want a ConfigError about the fingerprint", err)
	}
}

// TestRun_URLEngineDeathIsNotMemory is issue 40 item 2: a URL engine that
// answered, then stops answering (killed, or restarting on the same port)
// had every later document sent within milliseconds, refused and classed
// memory (930 in one run), and the run ended FAIL exit 1. Now its health
// check finds it dead: dispatch stops, the request that failed is out of
// the measurement (engine_dead, no class), no memory failure is
// fabricated, and the variant is ERROR. -resume against the engine back on
// the same port sends what was not answered, and the variant passes.
func TestRun_URLEngineDeathIsNotMemory(t *testing.T) {
	dir := t.TempDir()
	const docs = 12
	var served atomic.Int32
	var down atomic.Bool
	var srv *httptest.Server
	answer := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"date\\\": null, \\\"amount\\\": null, \\\"category\\\": null}\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		if down.Load() { // dead: a request on a connection kept alive is cut, as by a crash
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		answer(w)
		if served.Add(1) == 4 { // the engine dies after its fourth answer
			down.Store(true)
			srv.Listener.Close()
			go srv.CloseClientConnections()
		}
	})
	srv = httptest.NewServer(mux)
	addr := srv.Listener.Addr().String()
	p := fmt.Sprintf(`name: crash
corpus: %s
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
request_timeout: 5s
variants:
  - name: v
    engine: {url: %q, model: m}
`, writeSmallCorpus(t, dir, docs), srv.URL)
	proto := filepath.Join(dir, "crash.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	sum, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true})
	srv.Close()
	if err == nil && (sum == nil || len(sum.Variants) != 1 || sum.Variants[0].State != results.OutcomeError) {
		t.Fatalf("run: err nil, summary %+v; want the variant ERROR (the engine died)", sum)
	}
	reqs := resultstest.Requests(t, out)
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Failure == extractbench.Memory || r.EngineDied }); got != 0 {
		t.Errorf("%d requests classed memory without memory evidence", got)
	}
	dead := resultstest.Count(reqs, func(r *extractbench.Record) bool {
		return r.Kind == extractbench.TransportEngineDead && r.Failure == ""
	})
	if dead < 1 || len(reqs) > 4+2 {
		t.Errorf("%d rows, %d engine_dead: want the 4 answered and the one or two in flight at the death, nothing more sent", len(reqs), dead)
	}
	if o := outcomeOf(t, out); o.State != results.OutcomeError {
		t.Errorf("outcome %s (%s), want ERROR", o.State, o.Reason)
	}

	// The engine is back on the same port: -resume sends what was not answered.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port %s is taken again: %v", addr, err)
	}
	down.Store(false)
	back := httptest.NewUnstartedServer(mux)
	back.Listener.Close()
	back.Listener = ln
	back.Start()
	defer back.Close()
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), OutDir: out, Resume: true, Quiet: true}); err != nil {
		t.Fatalf("resume: %v", err)
	}
	reqs = resultstest.Requests(t, out)
	measured := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Kind.Measured() })
	if len(reqs) != docs || measured != docs {
		t.Errorf("after -resume: %d rows, %d measured; want every one of %d documents measured once", len(reqs), measured, docs)
	}
	if o := outcomeOf(t, out); o.State != results.OutcomePass {
		t.Errorf("after -resume: outcome %s (%s), want PASS", o.State, o.Reason)
	}
}

// outcomeOf is the first variant's outcome of the run in dir.
func outcomeOf(t *testing.T, dir string) results.Outcome {
	t.Helper()
	d, err := results.LoadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return d.Outcomes()[0]
}

// serveTestEngine runs the built-in engine as a separate process, the way a
// protocol's start command runs vLLM, until SIGTERM. Its environment can
// slow it (EXTRACTBENCH_TEST_ENGINE_TIME_SCALE) or have it crash when the
// request after the Nth arrives, writing a last line to its log first
// (EXTRACTBENCH_TEST_ENGINE_DIE_AFTER, EXTRACTBENCH_TEST_ENGINE_DIE_SAYING).
func serveTestEngine(addr string) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	p, err := builtin.LookupProfile("sim-8b")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	p.TimeScale = 0
	if ts, err := strconv.ParseFloat(os.Getenv("EXTRACTBENCH_TEST_ENGINE_TIME_SCALE"), 64); err == nil {
		p.TimeScale = ts
	}
	s, err := builtin.NewServer(builtin.Config{Profile: p, Version: os.Getenv("EXTRACTBENCH_TEST_ENGINE_VERSION")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer s.Close()
	var h http.Handler = s
	if n, err := strconv.Atoi(os.Getenv("EXTRACTBENCH_TEST_ENGINE_DIE_AFTER")); err == nil {
		var arrived atomic.Int32
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/chat/completions" && arrived.Add(1) > int32(n) {
				fmt.Fprintln(os.Stderr, os.Getenv("EXTRACTBENCH_TEST_ENGINE_DIE_SAYING"))
				if os.Getenv("EXTRACTBENCH_TEST_ENGINE_DIE_BY") == "SIGKILL" {
					_ = syscall.Kill(os.Getpid(), syscall.SIGKILL) // killed from outside, as by kill -9
				}
				os.Exit(1) // mid-request, as a crashing engine does
			}
			s.ServeHTTP(w, r)
		})
	}
	time.Sleep(300 * time.Millisecond) // a load time to measure
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("test engine listening on", addr)
	hs := &http.Server{Handler: h}
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, err)
	}
}

// TestRun_StartsAndStopsEngine: a variant with a start command gets its
// engine started, its load time measured until /health answers, its log
// kept in the results directory, and the engine stopped at the end.
func TestRun_StartsAndStopsEngine(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := fmt.Sprintf(`name: started
corpus: %s
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1, 2], repetitions: 1, warmup: 1}
variants:
  - name: v
    engine: {url: "http://%s", model: sim-8b, start: "EXTRACTBENCH_TEST_ENGINE_ADDR=%s %s -test.run=^$", ready_timeout: 30s}
`, writeSmallCorpus(t, dir, 6), addr, addr, os.Args[0])
	proto := filepath.Join(dir, "started.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	sum, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), Process: process.Starter{}, ProtocolPath: proto, OutDir: out, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(sum.Variants[0].LoadNS); got < 300*time.Millisecond {
		t.Errorf("load time %v, want at least the engine's 300 ms start", got)
	}
	if got := resultstest.Count(resultstest.Events(t, out), func(e *results.Event) bool { return e.Kind == results.EventEngineLoad && e.ValueNS >= 300000000 }); got != 1 {
		t.Errorf("engine_load events = %d, want 1", got)
	}
	if got := resultstest.Count(resultstest.Requests(t, out), func(r *extractbench.Record) bool { return r.Accepted }); got == 0 {
		t.Error("nothing accepted from the started engine")
	}
	log, err := os.ReadFile(filepath.Join(out, "engine-v.log"))
	if err != nil || !strings.Contains(string(log), "test engine listening") {
		t.Errorf("engine log not kept (%v): %q", err, log)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Error("the engine still listens after the run: it was not stopped")
	}
}

// TestRun_BrokenVariantDoesNotStopOthers: a variant whose engine does not
// answer fails the run, and the next variant is still measured.
func TestRun_BrokenVariantDoesNotStopOthers(t *testing.T) {
	dir := t.TempDir()
	p := fmt.Sprintf(`name: two
corpus: %s
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
variants:
  - name: broken
    engine: {url: "http://127.0.0.1:1", model: nothing-listens, start: "false", ready_timeout: 10s}
  - name: good
    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0}}
`, writeSmallCorpus(t, dir, 5))
	proto := filepath.Join(dir, "two.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	sum, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), Process: process.Starter{}, ProtocolPath: proto, OutDir: out, Quiet: true})
	if err == nil || !strings.Contains(err.Error(), "engine exited before it was ready") {
		t.Fatalf("err = %v, want the broken engine's error", err)
	}
	if len(sum.Variants) != 2 || sum.Variants[0].State != results.OutcomeError || !sum.Variants[1].Passed() || sum.Passed {
		t.Errorf("variants = %+v, passed %v; want broken failed, good passed, run failed", sum.Variants, sum.Passed)
	}
	if got := resultstest.Count(resultstest.Requests(t, out), func(r *extractbench.Record) bool { return r.Variant == "good" }); got != 5 {
		t.Errorf("good variant rows = %d, want 5", got)
	}
	if got := resultstest.Count(resultstest.Events(t, out), func(e *results.Event) bool { return e.Kind == results.EventVariantFail && e.Variant == "broken" }); got != 1 {
		t.Errorf("variant_failed events = %d, want 1", got)
	}
}

// TestRun_TelemetryErrors: an engine whose /metrics stop parsing mid-run
// (a family's TYPE line repeated, as the transformers server once wrote
// vllm:request_success_total once per finish reason) is not silently left
// without engine figures: each pass whose scrapes failed says so on stderr
// and in a telemetry_errors event with the parser's message.
func TestRun_TelemetryErrors(t *testing.T) {
	dir := t.TempDir()
	p, err := builtin.LookupProfile("sim-8b")
	if err != nil {
		t.Fatal(err)
	}
	p.TimeScale = 0.02
	eng, err := builtin.NewServer(builtin.Config{Profile: p, Models: []string{"sim-8b"}, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	var chats atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/chat/completions":
			chats.Add(1)
		case r.URL.Path == "/metrics" && chats.Load() >= 6: // broken from the second pass on
			rec := httptest.NewRecorder()
			eng.ServeHTTP(rec, r)
			fmt.Fprintf(w, "%s# TYPE vllm:request_success_total counter\nvllm:request_success_total{finished_reason=\"stop\"} 3\n# TYPE vllm:request_success_total counter\nvllm:request_success_total{finished_reason=\"length\"} 1\n", rec.Body.String())
			return
		}
		eng.ServeHTTP(w, r)
	}))
	defer srv.Close()
	proto := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(proto, []byte(fmt.Sprintf(`name: scrape-errors
corpus: %s
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1, 2], repetitions: 1, warmup: 0}
telemetry_interval: 20ms
variants:
  - name: v
    engine: {url: %q, model: sim-8b}
`, writeSmallCorpus(t, dir, 6), srv.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	var logBuf bytes.Buffer
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true, Progress: &logBuf}); err != nil {
		t.Fatal(err)
	}
	if got := resultstest.Count(resultstest.Passes(t, out), func(p *extractbench.Pass) bool { return p.Level == 1 && p.ObservedMaxRunning != nil }); got != 1 {
		t.Errorf("the first pass, scraped while /metrics parsed, has no engine figures")
	}
	if got := eventCount(t, out, results.EventTelemetryErrors, "%level 2%second TYPE line%"); got != 1 {
		t.Errorf("telemetry_errors events for the pass at level 2 naming the parser's error = %d, want 1", got)
	}
	if got := eventCount(t, out, results.EventTelemetryErrors, "%level 1,%"); got > 1 {
		t.Errorf("%d telemetry_errors events for the pass at level 1", got)
	}
	if !strings.Contains(logBuf.String(), "v: warning: pass at level 2, repetition 1:") {
		t.Errorf("stderr does not warn of the failed scrapes:\n%s", logBuf.String())
	}
}
