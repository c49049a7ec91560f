package pipeline_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// replicaEngine is the built-in engine served as one replica of a variant,
// on its own port. It counts the chat requests it receives and, through
// total, how many all replicas hold at once; hold slows every answer; a
// replica with dieAt > 0 crashes when its dieAt-th chat request arrives:
// that request is cut, its port closed (later connections are refused)
// and every request after it aborted.
type replicaEngine struct {
	srv        *httptest.Server
	engine     *builtin.Server
	hold       time.Duration
	dieAt      int64
	total      *inFlightTotal
	chats      atomic.Int64
	afterDeath atomic.Int64 // chat requests that arrived after the crash
	dead       atomic.Bool
}

// inFlightTotal counts chat requests in flight over every replica, and the
// most it ever saw.
type inFlightTotal struct{ now, most atomic.Int64 }

func (t *inFlightTotal) enter() {
	n := t.now.Add(1)
	for m := t.most.Load(); n > m && !t.most.CompareAndSwap(m, n); m = t.most.Load() {
	}
}

func startReplica(t *testing.T, total *inFlightTotal, hold time.Duration, dieAt int64, models ...string) *replicaEngine {
	t.Helper()
	p, err := builtin.LookupProfile("sim-8b")
	if err != nil {
		t.Fatal(err)
	}
	p.TimeScale = 0 // answers at once: hold sets the pace
	if len(models) == 0 {
		models = []string{"sim-8b"}
	}
	s, err := builtin.NewServer(builtin.Config{Profile: p, Models: models})
	if err != nil {
		t.Fatal(err)
	}
	e := &replicaEngine{engine: s, hold: hold, dieAt: dieAt, total: total}
	e.srv = httptest.NewServer(e)
	t.Cleanup(func() {
		e.srv.Close()
		s.Close()
	})
	return e
}

func (e *replicaEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	chat := r.URL.Path == "/v1/chat/completions"
	if e.dead.Load() {
		if chat {
			e.afterDeath.Add(1)
		}
		panic(http.ErrAbortHandler) // a crashed engine answers nothing
	}
	if chat {
		if n := e.chats.Add(1); e.dieAt > 0 && n >= e.dieAt {
			e.dead.Store(true)
			e.srv.Listener.Close() // new connections are refused
			go e.srv.CloseClientConnections()
			panic(http.ErrAbortHandler) // this one is cut
		}
		e.total.enter()
		defer e.total.now.Add(-1)
		time.Sleep(e.hold)
	}
	e.engine.ServeHTTP(w, r)
}

// runReplicas runs a concurrency sweep at level over n documents against
// the replicas and returns the results directory.
func runReplicas(t *testing.T, n, level, warmup int, reps ...*replicaEngine) string {
	t.Helper()
	return runReplicasSweep(t, n, fmt.Sprintf("{mode: concurrency, levels: [%d], repetitions: 1, warmup: %d}", level, warmup), reps...)
}

// runReplicasSweep runs the sweep over n documents against the replicas
// and returns the results directory.
func runReplicasSweep(t *testing.T, n int, sweep string, reps ...*replicaEngine) string {
	t.Helper()
	dir := t.TempDir()
	var urls []string
	for _, r := range reps {
		urls = append(urls, fmt.Sprintf("%q", r.srv.URL))
	}
	p := fmt.Sprintf(`name: replicas
corpus: %s
prompt: {user: "Extract date, amount and category as JSON.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0, seed: 7}
acceptance: {min_accepted: 0}
sweep: %s
telemetry_interval: 10ms
variants:
  - name: r
    engine: {urls: [%s], model: sim-8b}
`, writeSmallCorpus(t, dir, n), sweep, strings.Join(urls, ", "))
	proto := filepath.Join(dir, "replicas.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	sum, err := pipeline.Run(runContext(t), pipeline.Options{ProtocolPath: proto, OutDir: out, Quiet: true})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if sum.Status != "complete" {
		t.Fatalf("run status %q, want complete", sum.Status)
	}
	return out
}

// perEndpoint counts a pass's request rows per endpoint.
// A row without an endpoint counts as "NULL".
func perEndpoint(t *testing.T, dir string, level int) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range resultstest.Requests(t, dir) {
		if r.Level != level {
			continue
		}
		e := r.Endpoint
		if e == "" {
			e = "NULL"
		}
		out[e]++
	}
	return out
}

// storedPassAt is the first passes row at level in dir.
func storedPassAt(t *testing.T, dir string, level int) extractbench.Pass {
	t.Helper()
	ps := resultstest.Where(resultstest.Passes(t, dir), func(p *extractbench.Pass) bool { return p.Level == level })
	if len(ps) == 0 {
		t.Fatalf("no pass at level %d", level)
	}
	return ps[0]
}

// value is *p, failing t when p is nil (NULL).
func value[T any](t *testing.T, what string, p *T) T {
	t.Helper()
	if p == nil {
		t.Fatalf("%s is NULL", what)
	}
	return *p
}

// TestRun_Replicas: two equal built-in replicas under engine.urls. Every
// replica is warmed up; the baseline alternates between them (ties go round
// robin); at level 2 the level is the total in flight over both and each
// gets a share; every row names its endpoint (SQLite and Parquet); each
// replica's /metrics is sampled into telemetry rows of its own; the pass
// records the spread; the manifest lists the endpoints.
func TestRun_Replicas(t *testing.T) {
	const docs, warmup = replicaDocs, 2
	total := &inFlightTotal{}
	a := startReplica(t, total, 20*time.Millisecond, 0)
	b := startReplica(t, total, 20*time.Millisecond, 0)
	out := runReplicas(t, docs, 2, warmup, a, b)

	base, two := perEndpoint(t, out, 1), perEndpoint(t, out, 2)
	t.Run("dispatch", func(t *testing.T) { replicasShare(t, total, base, two, warmup, a, b) })
	t.Run("pass spread", func(t *testing.T) {
		p1 := storedPassAt(t, out, 1)
		n, lo, hi := value(t, "endpoints", p1.Endpoints), value(t, "endpoint_requests_min", p1.EndpointRequestsMin), value(t, "endpoint_requests_max", p1.EndpointRequestsMax)
		if n != 2 || lo != docs/2 || hi != docs/2 {
			t.Errorf("baseline pass: endpoints %d, requests per endpoint %d–%d; want 2, %d–%d", n, lo, hi, docs/2, docs/2)
		}
	})
	t.Run("telemetry per replica", func(t *testing.T) { replicaTelemetry(t, out, a, b) })
	t.Run("manifest and parquet", func(t *testing.T) { replicaEndpointsRecorded(t, out, base, two, a, b) })
}

// replicaDocs is TestRun_Replicas's corpus.
const replicaDocs = 24

// replicasShare: the baseline alternates between the replicas, level 2
// shares between them and holds 2 in flight over both, and each received
// its warm-up and its rows.
func replicasShare(t *testing.T, total *inFlightTotal, base, two map[string]int, warmup int, a, b *replicaEngine) {
	const docs = replicaDocs
	if want := map[string]int{a.srv.URL: docs / 2, b.srv.URL: docs / 2}; !mapsEqual(base, want) {
		t.Errorf("baseline rows per endpoint = %v, want %v: one at a time, equally idle replicas take turns", base, want)
	}
	if len(two) != 2 || two[a.srv.URL]+two[b.srv.URL] != docs {
		t.Fatalf("level 2 rows per endpoint = %v, want all %d documents on %s and %s", two, docs, a.srv.URL, b.srv.URL)
	}
	for _, r := range []*replicaEngine{a, b} {
		if two[r.srv.URL] < docs/4 {
			t.Errorf("level 2: %s got %d of %d requests; equal replicas, least loaded first, share them", r.srv.URL, two[r.srv.URL], docs)
		}
		if got, want := r.chats.Load(), int64(warmup+base[r.srv.URL]+two[r.srv.URL]); got != want {
			t.Errorf("%s received %d chat requests, want %d (%d warm-up + its rows)", r.srv.URL, got, want, warmup)
		}
	}
	if got := total.most.Load(); got != 2 {
		t.Errorf("at most %d requests in flight over both replicas, want exactly the level, 2", got)
	}
}

// replicaTelemetry: each replica's /metrics is sampled into rows of its
// own, and the passes' running peak is over both.
func replicaTelemetry(t *testing.T, out string, a, b *replicaEngine) {
	samples := resultstest.Telemetry(t, out)
	for _, r := range []*replicaEngine{a, b} {
		if got := resultstest.Count(samples, func(s *results.TelemetryRow) bool {
			return s.Metric == "vllm:num_requests_running" && s.Endpoint == r.srv.URL
		}); got < 2 {
			t.Errorf("telemetry: %d running samples of %s, want its own at every scrape (at least the first and last of each pass)", got, r.srv.URL)
		}
	}
	if got := resultstest.Count(samples, func(s *results.TelemetryRow) bool { return s.Endpoint == "" && strings.HasPrefix(s.Metric, "vllm:") }); got != 0 {
		t.Errorf("%d engine samples without an endpoint", got)
	}
	var running []int64
	for _, p := range resultstest.Passes(t, out) {
		if p.ObservedMaxRunning != nil {
			running = append(running, *p.ObservedMaxRunning)
		}
	}
	if len(running) == 0 {
		t.Fatal("no pass has observed_max_running")
	}
	if got := slices.Max(running); got > 2 {
		t.Errorf("observed_max_running %d over both replicas: more than the 2 requests ever in flight", got)
	}
}

// replicaEndpointsRecorded: the manifest lists both endpoints and
// requests.parquet names each row's, as results.db does.
func replicaEndpointsRecorded(t *testing.T, out string, base, two map[string]int, a, b *replicaEngine) {
	const docs = replicaDocs
	m := resultstest.Manifest(t, out)
	if got := m.Variants[0].Engine.Endpoints; !slices.Equal(got, []string{a.srv.URL, b.srv.URL}) {
		t.Errorf("manifest endpoints = %v, want both replicas", got)
	}

	got := parquetStrings(t, filepath.Join(out, "requests.parquet"), "endpoint")
	if len(got) != 2*docs || slices.Contains(got, "") {
		t.Fatalf("requests.parquet endpoint column: %d values %v, want %d, none NULL", len(got), got, 2*docs)
	}
	counts := map[string]int{}
	for _, e := range got {
		counts[e]++
	}
	if counts[a.srv.URL] != base[a.srv.URL]+two[a.srv.URL] || counts[b.srv.URL] != base[b.srv.URL]+two[b.srv.URL] {
		t.Errorf("requests.parquet rows per endpoint = %v, want results.db's", counts)
	}
}

// TestRun_ReplicasRate: the open-loop dispatcher sends each arrival to the
// least-loaded replica: both get requests, max_in_flight bounds the total
// over both, and the synchronous baseline takes turns.
func TestRun_ReplicasRate(t *testing.T) {
	const docs = 24
	total := &inFlightTotal{}
	a := startReplica(t, total, 40*time.Millisecond, 0)
	b := startReplica(t, total, 40*time.Millisecond, 0)
	out := runReplicasSweep(t, docs, "{mode: rate, levels: [50], repetitions: 1, warmup: 0, max_in_flight: 2}", a, b)
	if got, want := perEndpoint(t, out, 0), map[string]int{a.srv.URL: docs / 2, b.srv.URL: docs / 2}; !mapsEqual(got, want) {
		t.Errorf("synchronous baseline rows per endpoint = %v, want %v", got, want)
	}
	got := perEndpoint(t, out, 50)
	if got[a.srv.URL]+got[b.srv.URL] != docs {
		t.Fatalf("rate 50/s rows per endpoint = %v, want all %d documents on the two replicas", got, docs)
	}
	for _, r := range []*replicaEngine{a, b} {
		if got[r.srv.URL] < docs/4 {
			t.Errorf("rate 50/s: %s got %d of %d requests; equal replicas share the arrivals", r.srv.URL, got[r.srv.URL], docs)
		}
	}
	if most := total.most.Load(); most > 2 {
		t.Errorf("%d requests in flight over both replicas, above max_in_flight 2: the cap is the total", most)
	}
}

// TestRun_ReplicasBatch: a batch goes to one replica whole; batches take
// turns between idle replicas.
func TestRun_ReplicasBatch(t *testing.T) {
	const docs = 16
	total := &inFlightTotal{}
	a := startReplica(t, total, 0, 0)
	b := startReplica(t, total, 0, 0)
	out := runReplicasSweep(t, docs, "{mode: batch, levels: [4], repetitions: 1, warmup: 0}", a, b)
	for _, level := range []int{1, 4} {
		if got, want := perEndpoint(t, out, level), map[string]int{a.srv.URL: docs / 2, b.srv.URL: docs / 2}; !mapsEqual(got, want) {
			t.Errorf("batch %d rows per endpoint = %v, want %v: batches take turns", level, got, want)
		}
	}
	if transport := storedPassAt(t, out, 4).BatchTransport; transport != extractbench.TransportCompletionsList {
		t.Fatalf("batch transport %q, want completions_list: one call per batch", transport)
	}
	// A batch's rows are stored together, in the order of its prompts.
	if got := widestBatch(resultstest.Where(resultstest.Requests(t, out), func(r *extractbench.Record) bool { return r.Level == 4 }), 4); got != 1 {
		t.Errorf("a batch of 4 spread over %d endpoints, want 1: one /v1/completions call goes to one replica", got)
	}
}

// TestRun_ReplicasSlowOne: with one replica slow, the fast one (fewer in
// flight whenever it answers) gets most of the requests.
func TestRun_ReplicasSlowOne(t *testing.T) {
	const docs = 20
	total := &inFlightTotal{}
	fast := startReplica(t, total, 0, 0)
	slow := startReplica(t, total, 150*time.Millisecond, 0)
	out := runReplicas(t, docs, 4, 0, fast, slow)
	got := perEndpoint(t, out, 4)
	if got[fast.srv.URL]+got[slow.srv.URL] != docs {
		t.Fatalf("level 4 rows per endpoint = %v, want %d", got, docs)
	}
	if got[fast.srv.URL] <= 2*got[slow.srv.URL] {
		t.Errorf("level 4: fast replica %d requests, slow one %d; want the fast one to take most (more than twice)", got[fast.srv.URL], got[slow.srv.URL])
	}
}

// TestRun_ReplicaDies: a replica that crashes mid-run (its request cut, its
// port refused) stops receiving work at once: the event is recorded and the
// run completes on the other, every pass whole.
func TestRun_ReplicaDies(t *testing.T) {
	const docs, dieAt = 24, 4
	total := &inFlightTotal{}
	a := startReplica(t, total, 10*time.Millisecond, 0)
	b := startReplica(t, total, 10*time.Millisecond, dieAt)
	out := runReplicas(t, docs, 2, 0, a, b)

	if got := b.afterDeath.Load(); got != 0 {
		t.Errorf("the dead replica received %d chat requests after it crashed, want none", got)
	}
	reqs := resultstest.Requests(t, out)
	lowest := slices.MinFunc(reqs, func(a, b extractbench.Record) int { return a.Level - b.Level }).Level
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Level == lowest }); got != docs {
		t.Errorf("baseline rows = %d, want %d: the pass completes on the live replica", got, docs)
	}
	if got := resultstest.Count(resultstest.Passes(t, out), func(p *extractbench.Pass) bool { return p.Status == extractbench.PassComplete }); got != 2 {
		t.Errorf("%d complete passes, want 2", got)
	}
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Endpoint == b.srv.URL }); got != dieAt {
		t.Errorf("%d rows on the dead replica, want %d (%d answered, the one cut by the crash)", got, dieAt, dieAt-1)
	}
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool {
		return r.Endpoint == b.srv.URL && !r.Accepted && r.Failure != extractbench.None && r.Kind != extractbench.TransportOK
	}); got != 1 {
		t.Errorf("%d failed transport rows on the dead replica, want the 1 request the crash cut, recorded with its reason", got)
	}
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.Level == 2 && r.Endpoint == a.srv.URL }); got != docs {
		t.Errorf("level 2: %d rows on the live replica, want all %d", got, docs)
	}
	events := resultstest.Events(t, out)
	dead := resultstest.Where(events, func(e *results.Event) bool { return e.Kind == results.EventReplicaDead })
	if len(dead) == 0 {
		t.Fatal("no replica_dead event")
	}
	if detail := dead[0].Detail; !strings.Contains(detail, b.srv.URL) || !strings.Contains(detail, a.srv.URL) {
		t.Errorf("replica_dead detail %q should name the dead replica and the live one", detail)
	}
	if got := resultstest.Count(events, func(e *results.Event) bool {
		return e.Kind == results.EventEngineDead || e.Kind == results.EventVariantFail
	}); got != 0 {
		t.Errorf("%d engine_dead/variant_failed events: one replica of two dying is not the engine's death", got)
	}
	p2 := storedPassAt(t, out, 2)
	lo, hi := value(t, "endpoint_requests_min", p2.EndpointRequestsMin), value(t, "endpoint_requests_max", p2.EndpointRequestsMax)
	if lo != 0 || hi != docs {
		t.Errorf("level 2 requests per endpoint %d–%d, want 0 (the dead replica) – %d", lo, hi, docs)
	}
}

// TestRun_AllReplicasDie: when the last replica dies the variant stops as
// an engine that died does: engine_dead, the pass left incomplete.
func TestRun_AllReplicasDie(t *testing.T) {
	const docs = 16
	total := &inFlightTotal{}
	a := startReplica(t, total, 5*time.Millisecond, 3)
	b := startReplica(t, total, 5*time.Millisecond, 3)
	dir := t.TempDir()
	p := fmt.Sprintf(`name: replicas
corpus: %s
prompt: {user: "{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [2], repetitions: 1, warmup: 0}
variants:
  - name: r
    engine: {urls: [%q, %q], model: sim-8b}
`, writeSmallCorpus(t, dir, docs), a.srv.URL, b.srv.URL)
	proto := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	_, err := pipeline.Run(runContext(t), pipeline.Options{ProtocolPath: proto, OutDir: out, Quiet: true})
	if err == nil || !strings.Contains(err.Error(), "every replica stopped answering") {
		t.Fatalf("run error = %v, want the engine's death: every replica stopped answering", err)
	}
	if got := eventCount(t, out, results.EventReplicaDead, "%"); got != 2 {
		t.Errorf("%d replica_dead events, want 2", got)
	}
	if got := eventCount(t, out, results.EventEngineDead, "%"); got != 1 {
		t.Errorf("%d engine_dead events, want 1", got)
	}
	if got := a.afterDeath.Load() + b.afterDeath.Load(); got != 0 {
		t.Errorf("%d chat requests reached a dead replica", got)
	}
}

// runContext bounds a run of these tests: none may hang.
func runContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestRun_ReplicasChecked: before anything is sent, a replica that does not
// accept connections is named with its line; a replica that serves other
// models than the first is refused before the first measured request.
func TestRun_ReplicasChecked(t *testing.T) {
	total := &inFlightTotal{}
	a := startReplica(t, total, 0, 0)
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	corpusPath := writeSmallCorpus(t, dir, 4)
	proto := write("down.yaml", fmt.Sprintf("corpus: %s\nvariants:\n  - name: r\n    engine:\n      model: sim-8b\n      urls: [%q, \"http://127.0.0.1:1\"]\n", corpusPath, a.srv.URL))
	_, err := pipeline.Run(runContext(t), pipeline.Options{ProtocolPath: proto, OutDir: filepath.Join(dir, "down"), Quiet: true})
	if err == nil || !strings.Contains(err.Error(), proto+":6: variants.0.engine.urls.1: variant r: replica http://127.0.0.1:1 does not answer") {
		t.Errorf("run with a replica down: %v, want it named with its line before anything runs", err)
	}
	if a.chats.Load() != 0 {
		t.Errorf("%d requests sent although a replica was down", a.chats.Load())
	}

	other := startReplica(t, total, 0, 0, "sim-8b", "sim-1b")
	proto = write("differ.yaml", fmt.Sprintf("corpus: %s\nsweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 1}\nvariants:\n  - name: r\n    engine: {urls: [%q, %q], model: sim-8b}\n", corpusPath, a.srv.URL, other.srv.URL))
	_, err = pipeline.Run(runContext(t), pipeline.Options{ProtocolPath: proto, OutDir: filepath.Join(dir, "differ"), Quiet: true})
	if err == nil || !strings.Contains(err.Error(), "replica "+other.srv.URL+" is not the engine "+a.srv.URL+" is") {
		t.Errorf("run with replicas that differ: %v, want them refused", err)
	}
	if n := a.chats.Load() + other.chats.Load(); n != 0 {
		t.Errorf("%d requests sent to replicas that differ", n)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// parquetStrings reads one utf8 column of a Parquet file; NULL reads "".
func parquetStrings(t *testing.T, path, column string) []string {
	t.Helper()
	tbl := readParquet(t, path)
	defer tbl.Release()
	idx := tbl.Schema().FieldIndices(column)
	if len(idx) != 1 {
		t.Fatalf("%s has no column %s", path, column)
	}
	var out []string
	for _, chunk := range tbl.Column(idx[0]).Data().Chunks() {
		col := chunk.(*array.String)
		for i := range col.Len() {
			out = append(out, col.Value(i))
		}
	}
	return out
}

// TestRun_BuiltinOneEndpoint: a variant of one in-process engine records
// "builtin" as every row's endpoint and keeps the engine's own facts (its
// profile's card) in the manifest; its passes count one endpoint.
func TestRun_BuiltinOneEndpoint(t *testing.T) {
	const docs = 6
	out, _ := runRate(t, docs, "{mode: concurrency, levels: [2], repetitions: 1, warmup: 1}", "{min_accepted: 0}", "{time_scale: 0}", nil)
	if got := perEndpoint(t, out, 2); !mapsEqual(got, map[string]int{"builtin": docs}) {
		t.Errorf("rows per endpoint = %v, want all on builtin", got)
	}
	if got := resultstest.Count(resultstest.Passes(t, out), func(p *extractbench.Pass) bool {
		return p.Endpoints != nil && *p.Endpoints == 1 && p.EndpointRequestsMin != nil && *p.EndpointRequestsMin == p.Docs &&
			p.EndpointRequestsMax != nil && *p.EndpointRequestsMax == p.Docs
	}); got != 2 {
		t.Errorf("%d of 2 passes count one endpoint with every document", got)
	}
	if got := resultstest.Count(resultstest.Telemetry(t, out), func(s *results.TelemetryRow) bool {
		return s.Metric == "vllm:num_requests_running" && s.Endpoint == "builtin"
	}); got == 0 {
		t.Error("no telemetry sample of the builtin endpoint")
	}
	m := resultstest.Manifest(t, out)
	if v := m.Variants[0]; v.GPU.Source != "builtin-profile" || len(v.Extra) == 0 || v.Engine.Endpoints != nil || v.Engine.URL != "builtin" {
		t.Errorf("manifest variant: gpu source %q, profile %d bytes, endpoints %v, url %q; want the in-process engine's own facts, no endpoints list",
			v.GPU.Source, len(v.Extra), v.Engine.Endpoints, v.Engine.URL)
	}
}

// TestRun_BuiltinReplicas: engine.replicas runs that many built-in engines
// in-process, each a replica of its own: rows, telemetry and the manifest
// name builtin/1 and builtin/2, and both get requests.
func TestRun_BuiltinReplicas(t *testing.T) {
	const docs = 12
	dir := t.TempDir()
	p := fmt.Sprintf(`name: builtin-replicas
corpus: %s
prompt: {user: "Extract date, amount and category as JSON.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0, seed: 7}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [2], repetitions: 1, warmup: 1}
telemetry_interval: 10ms
variants:
  - name: r
    engine: {url: builtin, model: sim-8b, replicas: 2, builtin: {time_scale: 0.01}}
`, writeSmallCorpus(t, dir, docs))
	proto := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if _, err := pipeline.Run(runContext(t), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	if got, want := perEndpoint(t, out, 1), map[string]int{"builtin/1": docs / 2, "builtin/2": docs / 2}; !mapsEqual(got, want) {
		t.Errorf("baseline rows per endpoint = %v, want %v", got, want)
	}
	two := perEndpoint(t, out, 2)
	if len(two) != 2 || two["builtin/1"] == 0 || two["builtin/2"] == 0 {
		t.Errorf("level 2 rows per endpoint = %v, want both built-in replicas used", two)
	}
	running := resultstest.Where(resultstest.Telemetry(t, out), func(s *results.TelemetryRow) bool { return s.Metric == "vllm:num_requests_running" && s.Endpoint != "" })
	if got := resultstest.Distinct(running, func(s *results.TelemetryRow) string { return s.Endpoint }); got != 2 {
		t.Errorf("telemetry of %d endpoints, want 2", got)
	}
	m := resultstest.Manifest(t, out)
	if v := m.Variants[0]; !slices.Equal(v.Engine.Endpoints, []string{"builtin/1", "builtin/2"}) || v.GPU.Source != "builtin-profile" {
		t.Errorf("manifest: endpoints %v, gpu source %q; want builtin/1, builtin/2 and the profile's card", v.Engine.Endpoints, v.GPU.Source)
	}
}

// widestBatch is the most endpoints one batch of size rows spread over,
// the rows taken in stored order, a batch's rows together (a row without an
// endpoint not counted).
func widestBatch(reqs []extractbench.Record, size int) int {
	most := 0
	for start := 0; start < len(reqs); start += size {
		batch := reqs[start:min(start+size, len(reqs))]
		n := resultstest.Distinct(resultstest.Where(batch, func(r *extractbench.Record) bool { return r.Endpoint != "" }),
			func(r *extractbench.Record) string { return r.Endpoint })
		most = max(most, n)
	}
	return most
}
