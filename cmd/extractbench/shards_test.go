package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin"
	"github.com/extractbench/extractbench/results"
)

// shardTestDocs is the corpus of the sharded end-to-end test: enough
// documents that each of three shards holds a dozen or more.
const shardTestDocs = 60

// shardTestTimeScale keeps a request at a few milliseconds, so that a
// shard can be killed while its pass is under way.
const shardTestTimeScale = 0.005

// killSwitch closes killAt once the documents of the shard to kill have
// been asked for killAfter times, on whichever engine.
type killSwitch struct {
	watch     []string // texts of the documents of the shard to kill
	killAfter int64
	seen      atomic.Int64
	killAt    chan struct{}
	once      sync.Once
}

// startShardEngine starts a built-in engine in this process behind a
// handler that tells ks of every request, and returns its URL.
func startShardEngine(t *testing.T, ks *killSwitch) string {
	t.Helper()
	p, err := builtin.LookupProfile("sim-8b")
	if err != nil {
		t.Fatal(err)
	}
	p.TimeScale = shardTestTimeScale
	srv, err := builtin.NewServer(builtin.Config{Profile: p, Models: []string{"sim-8b"}, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			ks.note(body)
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return hs.URL
}

// note counts a request for one of the watched documents.
func (ks *killSwitch) note(body []byte) {
	var req struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return
	}
	for _, m := range req.Messages {
		for _, text := range ks.watch {
			if strings.Contains(m.Content, text) {
				if ks.seen.Add(1) == ks.killAfter {
					ks.once.Do(func() { close(ks.killAt) })
				}
				return
			}
		}
	}
}

// shardCorpus writes the first n documents of the default corpus and
// returns its path with each document's id and text.
func shardCorpus(t *testing.T, dir string, n int) (string, map[string]string) {
	t.Helper()
	raw, err := os.ReadFile("../../corpus/default/documents.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfterN(string(raw), "\n", n+1)[:n]
	texts := map[string]string{}
	for _, l := range lines {
		var d struct{ ID, Text string }
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatal(err)
		}
		texts[d.ID] = d.Text
	}
	return writeFile(t, dir, "corpus.jsonl", strings.Join(lines, "")), texts
}

// shardProtocol is the protocol every shard and the unsharded run measure.
// Its engines are URLs the test started, shared by the shards: one URL is
// engine.url; several are replicas, engine.urls.
func shardProtocol(t *testing.T, dir, corpusPath string, engines []string) string {
	t.Helper()
	engine := fmt.Sprintf("url: %q", engines[0])
	if len(engines) > 1 {
		q := make([]string, len(engines))
		for i, u := range engines {
			q[i] = strconv.Quote(u)
		}
		engine = "urls: [" + strings.Join(q, ", ") + "]"
	}
	return writeFile(t, dir, "shards.yaml", fmt.Sprintf(`name: sharded
corpus: %s
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 128, temperature: 0, seed: 7}
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1, 2], repetitions: 1, warmup: 1}
request_timeout: 30s
interrupt_grace: 0s
variants:
  - name: bf16
    engine: {%s, model: sim-8b}
`, corpusPath, engine))
}

// runShard runs `extractbench run` in this process with args; abandon, when
// closed, cancels the requests in flight as a second Ctrl-C does.
func runShard(ctx context.Context, abandon <-chan struct{}, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := dispatch(ctx, args, env{stdout: &out, stderr: &errOut, abandon: abandon})
	return code, out.String(), errOut.String()
}

// docKey is one (pass, document) of a run, without the run id.
type docKey struct {
	variant           string
	mode              extractbench.Mode
	level, repetition int
	doc               string
}

func requestsByDoc(t *testing.T, dir string) map[docKey]extractbench.Record {
	t.Helper()
	ctx := context.Background()
	rd, err := results.OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	run, err := rd.LatestRun(ctx)
	if err != nil || run == nil {
		t.Fatalf("%s: no run: %v", dir, err)
	}
	recs, err := rd.Requests(ctx, run.RunID, results.RequestFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[docKey]extractbench.Record{}
	for _, r := range recs {
		k := docKey{r.Variant, r.Mode, r.Level, r.Repetition, r.DocID}
		if _, dup := out[k]; dup {
			t.Errorf("%s: (pass, document) %v twice", dir, k)
		}
		out[k] = r
	}
	return out
}

// TestShards_EndToEnd: three shards of one run, measured at the same time
// against two replicas of the built-in engine; the second is killed mid-pass and resumed.
// The merge of the three holds every (pass, document) once, and each
// document's outcome equals an unsharded run's of the same protocol at
// level 1 (the built-in engine answers deterministically there). A merge
// made while the killed shard was unfinished is incomplete (exit 3) and is
// replaced by the merge after the resume; merging again gives the same run.
func TestShards_EndToEnd(t *testing.T) {
	dir := t.TempDir()
	corpusPath, texts := shardCorpus(t, dir, shardTestDocs)
	const shards, killed = 3, 1
	ks := &killSwitch{killAt: make(chan struct{})}
	for id, text := range texts {
		if extractbench.ShardOf(id, shards) == killed {
			ks.watch = append(ks.watch, text)
		}
	}
	ks.killAfter = int64(len(ks.watch)) / 2 // mid-way through the killed shard's baseline
	// Two replicas of one engine (engine.urls): every shard dispatches to both.
	engines := []string{startShardEngine(t, ks), startShardEngine(t, ks)}
	proto := shardProtocol(t, dir, corpusPath, engines)
	shardDir := func(i int) string { return filepath.Join(dir, "shards", fmt.Sprintf("shard-%d", i)) }

	var wg sync.WaitGroup
	codes := make([]int, shards)
	stderrs := make([]string, shards)
	killCtx, kill := context.WithCancel(context.Background())
	abandon := make(chan struct{})
	for i := range shards {
		ctx, ab := context.Background(), (<-chan struct{})(nil)
		if i == killed {
			ctx, ab = killCtx, abandon
		}
		wg.Go(func() {
			codes[i], _, stderrs[i] = runShard(ctx, ab, "run", "-quiet", "-protocol", proto, "-shard", fmt.Sprintf("%d/%d", i, shards), "-out", shardDir(i))
		})
	}
	select {
	case <-ks.killAt:
		kill()         // the first signal: stop dispatching
		close(abandon) // the second: cancel the requests in flight now
	case <-time.After(30 * time.Second):
		t.Fatal("the shard to kill never got half-way")
	}
	wg.Wait()
	for i, code := range codes {
		want := exitOK
		if i == killed {
			want = exitInfra
		}
		if code != want {
			t.Fatalf("shard %d: exit %d, want %d: %s", i, code, want, stderrs[i])
		}
	}
	merged := filepath.Join(dir, "merged")
	if code, stdout, stderr := runCLI(t, "merge", "-out", merged, filepath.Join(dir, "shards", "shard-*")); code != exitInfra ||
		!strings.Contains(stdout, "interrupted") {
		t.Fatalf("merge with the killed shard unfinished: exit %d, want %d (incomplete)\n%s%s", code, exitInfra, stdout, stderr)
	}
	if code, _, stderr := runShard(context.Background(), nil, "run", "-quiet", "-resume", shardDir(killed)); code != exitOK {
		t.Fatalf("resume of the killed shard: exit %d: %s", code, stderr)
	}

	full := filepath.Join(dir, "full")
	if code, _, stderr := runCLI(t, "run", "-quiet", "-protocol", proto, "-out", full); code != exitOK {
		t.Fatalf("unsharded run: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "merge", "-out", merged, filepath.Join(dir, "shards", "shard-*"))
	if code != exitOK {
		t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
	}
	t.Log(stdout)
	for _, want := range []string{"merged 3 shard directories of 3 shards", "PASS bf16 (sim-8b)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("merge stdout lacks %q:\n%s", want, stdout)
		}
	}

	got, want := requestsByDoc(t, merged), requestsByDoc(t, full)
	if len(got) != len(want) || len(want) != 2*shardTestDocs {
		t.Fatalf("merged run has %d (pass, document) rows, unsharded %d; want %d each", len(got), len(want), 2*shardTestDocs)
	}
	perEndpoint := map[string]int{}
	for _, r := range got {
		perEndpoint[r.Endpoint]++
	}
	if len(perEndpoint) != len(engines) || perEndpoint[engines[0]] == 0 || perEndpoint[engines[1]] == 0 {
		t.Errorf("merged rows per endpoint %v: want both replicas %v", perEndpoint, engines)
	}
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("merged run lost %v", k)
		case g.Accepted != w.Accepted || g.Failure != w.Failure:
			t.Errorf("%v: merged accepted %v failure %q, unsharded %v %q", k, g.Accepted, g.Failure, w.Accepted, w.Failure)
		case k.level == 1 && (g.Output != w.Output || !equalJSON(jsonOf(g.Prediction), jsonOf(w.Prediction))):
			t.Errorf("%v: merged output %q, unsharded %q", k, g.Output, w.Output)
		}
	}
	checkMergedRun(t, merged, shards)
	checkMergedTime(t, merged, shardDir, shards)

	before := passesOf(t, merged)
	if code, stdout, stderr := runCLI(t, "merge", "-out", merged, shardDir(2), shardDir(0), shardDir(1)); code != exitOK {
		t.Fatalf("merge again: exit %d\n%s%s", code, stdout, stderr)
	}
	if after := passesOf(t, merged); !equalJSON(before, after) {
		t.Errorf("merging again changed the passes:\nbefore %s\nafter  %s", before, after)
	}
	if n := len(requestsByDoc(t, merged)); n != 2*shardTestDocs {
		t.Errorf("merging again left %d rows, want %d (replaced, not appended)", n, 2*shardTestDocs)
	}
}

// checkMergedRun: the merged run names its shards, its passes are complete
// over the whole corpus, and the report lists the shards.
func checkMergedRun(t *testing.T, dir string, shards int) {
	t.Helper()
	d, err := results.LoadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	m := d.Manifest.Merge
	if m == nil || m.Count != shards || len(m.Shards) != shards || len(m.Missing) != 0 || m.Duplicates != 0 || d.Manifest.Shard != nil {
		t.Fatalf("merged manifest: merge %+v shard %+v", m, d.Manifest.Shard)
	}
	docs := 0
	for _, s := range m.Shards {
		docs += s.Documents
		if s.Status != results.RunComplete || s.Rows != 2*int64(s.Documents) {
			t.Errorf("shard %d: status %s, %d rows for %d documents × 2 passes", s.Index, s.Status, s.Rows, s.Documents)
		}
	}
	if docs != shardTestDocs || d.Run.Status != results.RunComplete {
		t.Errorf("shards hold %d documents (want %d); run status %s", docs, shardTestDocs, d.Run.Status)
	}
	for _, p := range d.Passes {
		if p.Docs != shardTestDocs || !p.Complete() || p.Verdict == "" || p.DurationNS <= 0 {
			t.Errorf("merged pass level %d: docs %d status %s verdict %q duration %d", p.Level, p.Docs, p.Status, p.Verdict, p.DurationNS)
		}
		if p.Endpoints == nil || *p.Endpoints != 2 || *p.EndpointRequestsMin == 0 {
			t.Errorf("merged pass level %d: endpoints %v, fewest requests on one %v; want 2 replicas, both used", p.Level, p.Endpoints, p.EndpointRequestsMin)
		}
		if p.Level > 1 && p.OutputsChanged == nil {
			t.Errorf("merged pass level %d: no batch-invariance count against level 1", p.Level)
		}
	}
	resumed := false
	for _, e := range d.Events {
		resumed = resumed || (e.Kind == results.EventResumed && strings.HasPrefix(e.Detail, fmt.Sprintf("shard 1/%d: ", shards)))
	}
	if !resumed {
		t.Errorf("the merged run's events do not say that shard 1/%d was resumed: %+v", shards, d.Events)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "Replicas: requests per endpoint") {
		t.Errorf("report.md does not show the replicas")
	}
	for i := range shards {
		if !strings.Contains(string(md), fmt.Sprintf("| %d/%d |", i, shards)) {
			t.Errorf("report.md does not list shard %d/%d", i, shards)
		}
	}
}

// checkMergedTime: a merged pass's active time is the union of the
// shards' (at least the longest shard's, at most their sum, since they ran
// at the same time), and its output tokens are the shards' sum.
func checkMergedTime(t *testing.T, merged string, shardDir func(int) string, shards int) {
	t.Helper()
	ctx := context.Background()
	m, err := results.LoadRun(ctx, merged)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Passes {
		var longest, sum, tokens int64
		for i := range shards {
			d, err := results.LoadRun(ctx, shardDir(i))
			if err != nil {
				t.Fatal(err)
			}
			for _, sp := range d.Passes {
				if sp.Level == p.Level && sp.Repetition == p.Repetition {
					longest, sum, tokens = max(longest, sp.DurationNS), sum+sp.DurationNS, tokens+sp.OutputTokens
				}
			}
		}
		if p.DurationNS < longest || p.DurationNS > sum || p.OutputTokens != tokens {
			t.Errorf("merged level %d: %d ns active, %d output tokens; want between the longest shard's %d and the sum %d, and the shards' %d tokens",
				p.Level, p.DurationNS, p.OutputTokens, longest, sum, tokens)
		}
	}
}

func passesOf(t *testing.T, dir string) string {
	t.Helper()
	d, err := results.LoadRun(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(d.Passes)
	return string(b)
}

func equalJSON(a, b string) bool { return a == b }

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
