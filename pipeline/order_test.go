package pipeline_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/pipeline/dispatch"
	"github.com/extractbench/extractbench/results/resultstest"
)

// orderEngine is an engine that notes the document of every chat request
// it receives, in arrival order, warm-up requests apart (their system
// prompt opens with pipeline.WarmupMarker). Once stallAfter measured
// requests have been answered it holds the next ones open until the client
// goes away, and says so on stalled.
type orderEngine struct {
	url        string
	byText     map[string]string // document text → id
	mu         sync.Mutex
	warmup     []string
	measured   []string
	stallAfter int // 0: never stall
	stalled    chan struct{}
}

func newOrderEngine(t *testing.T, docs []corpus.Document) *orderEngine {
	t.Helper()
	e := &orderEngine{byText: map[string]string{}, stalled: make(chan struct{}, 64)}
	for _, d := range docs {
		e.byText[d.Text] = d.ID
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", e.chat)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e.url = srv.URL
	return e
}

func (e *orderEngine) chat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) != 2 {
		http.Error(w, "want a system and a user message", http.StatusBadRequest)
		return
	}
	_, text, _ := strings.Cut(req.Messages[1].Content, "\n\n")
	id := e.byText[text]
	e.mu.Lock()
	stall := false
	if strings.HasPrefix(req.Messages[0].Content, pipeline.WarmupMarker) {
		e.warmup = append(e.warmup, id)
	} else {
		stall = e.stallAfter > 0 && len(e.measured) >= e.stallAfter
		e.measured = append(e.measured, id)
	}
	e.mu.Unlock()
	if stall {
		e.stalled <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"date\\\": null, \\\"amount\\\": null, \\\"category\\\": null}\"},\"finish_reason\":null}]}\n\n")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}

// sent returns the engine's notes so far and forgets them.
func (e *orderEngine) sent() (warmup, measured []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	warmup, measured = e.warmup, e.measured
	e.warmup, e.measured = nil, nil
	return warmup, measured
}

// orderProtocol writes a protocol of the given variants, all served by url,
// over corpusPath with the given sweep.
func orderProtocol(t *testing.T, dir, corpusPath, url, sweep string, variants ...string) string {
	t.Helper()
	var vs strings.Builder
	for _, v := range variants {
		fmt.Fprintf(&vs, "  - name: %s\n    engine: {url: %q, model: m}\n", v, url)
	}
	p := fmt.Sprintf(`name: order
corpus: %s
prompt: {system: "Answer with JSON only.", user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0, seed: 7}
acceptance: {min_accepted: 0}
sweep: %s
request_timeout: 20s
interrupt_grace: 100ms
variants:
%s`, corpusPath, sweep, vs.String())
	path := filepath.Join(dir, "order.yaml")
	if err := os.WriteFile(path, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// orderCorpus writes n documents of the default corpus, the one long one
// last (the longest, where a warm-up that took the pass's first documents
// would miss it), and returns its path and documents in corpus order.
func orderCorpus(t *testing.T, dir string, n int) (string, []corpus.Document) {
	t.Helper()
	path := writeSmallCorpus(t, dir, n)
	c, err := corpus.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	longest := slices.MaxFunc(c.Documents, func(a, b corpus.Document) int { return cmp.Compare(len(a.Text), len(b.Text)) })
	if longest.ID != c.Documents[n-1].ID {
		t.Fatalf("the longest document %s is not the corpus's last", longest.ID)
	}
	return path, c.Documents
}

// sendOrders is each stored pass's documents in send order (by t_send:
// the passes here are one request at a time), by variant and repetition.
func sendOrders(t *testing.T, out string) map[string][]string {
	t.Helper()
	reqs := resultstest.Requests(t, out)
	slices.SortFunc(reqs, func(a, b extractbench.Record) int { return cmp.Compare(a.SendNS, b.SendNS) })
	orders := map[string][]string{}
	for _, r := range reqs {
		k := fmt.Sprintf("%s/rep%d", r.Variant, r.Repetition)
		orders[k] = append(orders[k], r.DocID)
	}
	return orders
}

// permuted is ids in the order a pass of seed sends them.
func permuted(ids []string, seed int64) []string {
	out := make([]string, len(ids))
	for i, j := range dispatch.Permute(len(ids), seed) {
		out[i] = ids[j]
	}
	return out
}

// TestRun_SendOrder: with sweep.order shuffle every pass sends its
// documents in the permutation of its stored order_seed, the same in every
// variant for a level and repetition and another in each repetition; with
// corpus it sends them in corpus order and stores no seed. The warm-up
// sends the longest document either way.
func TestRun_SendOrder(t *testing.T) {
	const n = 12
	for _, order := range []string{extractbench.OrderShuffle, extractbench.OrderCorpus} {
		t.Run(order, func(t *testing.T) {
			dir := t.TempDir()
			path, docs := orderCorpus(t, dir, n)
			eng := newOrderEngine(t, docs)
			proto := orderProtocol(t, dir, path, eng.url, "{mode: concurrency, levels: [1], repetitions: 2, warmup: 2, order: "+order+"}", "a", "b")
			out := filepath.Join(dir, "out")
			if _, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out}); err != nil {
				t.Fatal(err)
			}
			warmup, _ := eng.sent()
			if !slices.Contains(warmup, docs[n-1].ID) {
				t.Errorf("warm-up sent %v, want the longest document %s among them", warmup, docs[n-1].ID)
			}
			ids := make([]string, n)
			for i, d := range docs {
				ids[i] = d.ID
			}
			orders := sendOrders(t, out)
			seeds := map[int]*int64{}
			for _, p := range resultstest.Passes(t, out) {
				want := dispatch.OrderSeed(extractbench.Sweep{Order: order}, new(7), p.Level, p.Repetition)
				if (p.OrderSeed == nil) != (want == nil) || p.OrderSeed != nil && *p.OrderSeed != *want {
					t.Errorf("pass %s rep %d: order_seed %v, want %v", p.Variant, p.Repetition, p.OrderSeed, want)
				}
				seeds[p.Repetition] = p.OrderSeed
			}
			for _, rep := range []int{1, 2} {
				a, b := orders[fmt.Sprintf("a/rep%d", rep)], orders[fmt.Sprintf("b/rep%d", rep)]
				if !slices.Equal(a, b) {
					t.Errorf("repetition %d: variant a sent %v, b %v: want one order (paired document for document)", rep, a, b)
				}
				want := ids
				if order == extractbench.OrderShuffle {
					want = permuted(ids, *seeds[rep])
				}
				if !slices.Equal(a, want) {
					t.Errorf("repetition %d: sent %v, want %v", rep, a, want)
				}
			}
			same := slices.Equal(orders["a/rep1"], orders["a/rep2"])
			if shuffle := order == extractbench.OrderShuffle; same == shuffle {
				t.Errorf("repetitions 1 and 2 sent %v and %v: want the same order only in corpus order", orders["a/rep1"], orders["a/rep2"])
			}
			if order == extractbench.OrderShuffle && slices.Equal(orders["a/rep1"], ids) {
				t.Errorf("shuffled pass sent %v, the corpus's order", ids)
			}
		})
	}
}

// TestRun_ResumeKeepsSendOrder: a pass interrupted part-way through its
// shuffled order and resumed sends each missing document once, in the same
// order: the stored pass holds every document exactly once, in the
// permutation of its seed, and the resume sent only what had no row (the
// request cut by the interruption again, then the rest).
func TestRun_ResumeKeepsSendOrder(t *testing.T) {
	const n, answered = 10, 4
	dir := t.TempDir()
	path, docs := orderCorpus(t, dir, n)
	eng := newOrderEngine(t, docs)
	eng.stallAfter = answered
	proto := orderProtocol(t, dir, path, eng.url, "{mode: concurrency, levels: [1], repetitions: 2, warmup: 0}", "a")
	out := filepath.Join(dir, "out")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		sum, err := pipeline.Run(ctx, pipeline.Options{ProtocolPath: proto, OutDir: out, Quiet: true, Starters: starter.Starters()})
		if err == nil && !sum.Interrupted {
			err = fmt.Errorf("status %s, want interrupted", sum.Status)
		}
		done <- err
	}()
	select {
	case <-eng.stalled:
	case <-time.After(interruptDeadline):
		t.Fatal("the engine never held a request")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("interrupted run: %v", err)
		}
	case <-time.After(interruptDeadline):
		t.Fatal("the interrupted run did not end")
	}
	_, first := eng.sent()

	eng.mu.Lock()
	eng.stallAfter = 0
	eng.mu.Unlock()
	if _, err := run(t, pipeline.Options{OutDir: out, Resume: true}); err != nil {
		t.Fatalf("resume: %v", err)
	}
	_, second := eng.sent()

	ids := make([]string, n)
	for i, d := range docs {
		ids[i] = d.ID
	}
	want := permuted(ids, *dispatch.OrderSeed(extractbench.Sweep{Order: extractbench.OrderShuffle}, new(7), 1, 1))
	if !slices.Equal(first, want[:answered+1]) {
		t.Errorf("before the interruption the engine received %v, want %v", first, want[:answered+1])
	}
	if len(second) != 2*n-answered || !slices.Equal(second[:n-answered], want[answered:]) {
		t.Errorf("the resume sent %v, want %v (the rest of repetition 1 in its order) then repetition 2's %d", second, want[answered:], n)
	}
	orders := sendOrders(t, out)
	if got := orders["a/rep1"]; !slices.Equal(got, want) {
		t.Errorf("stored repetition 1 in send order %v, want %v: each document once, in the seed's order", got, want)
	}
	if got := resultstest.Duplicates(resultstest.Requests(t, out)); got != 0 {
		t.Errorf("%d duplicated (pass, document) rows", got)
	}
	for _, p := range resultstest.Passes(t, out) {
		if p.Status != extractbench.PassComplete || p.Docs != n || p.OrderSeed == nil {
			t.Errorf("pass rep %d: status %s, %d documents, order_seed %v; want complete, %d, a seed", p.Repetition, p.Status, p.Docs, p.OrderSeed, n)
		}
	}
}
