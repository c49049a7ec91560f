package pipeline_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/corpus/generate"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/pipeline"
)

// The two benchmarks below measure the CPU a whole run spends per request
// against an engine that costs almost nothing (issue 29), next to a plain
// Go client sending the same prompts to the same engine: their ratio is the
// run's own overhead (dispatch, SSE, scoring, storage, exports). Both
// report cpu-µs/req, the process's CPU (user + system, getrusage) between
// two document counts divided by the requests between them: the marginal
// cost, free of the run's fixed costs (opening the store, the engine
// probes, exports' headers). The engine runs in a process of its own
// (noopEngine), so its CPU is in neither figure.
//
// EXTRACTBENCH_BENCH_DOCS sets the two document counts ("3000,6000", the
// issue's); run them with -benchtime=1x: one iteration is two whole runs.
// cpu-µs/req-whole is the CPU per request of the larger run alone, fixed
// costs included: on a loaded machine the margin, a difference of two
// CPU times, is the noisier of the two.

// benchLevels are the levels each document is sent at: each a pass of the
// whole corpus in the run, and the plain client's two rounds.
var benchLevels = []int{1, 64}

// benchSeed is the generated corpus's seed: the default corpus's shape.
const benchSeed = 1

// The default protocol's prompt, so that the request bodies have the size
// a real run sends.
const (
	benchSystem = "You extract fields from business documents. Answer with JSON only."
	benchUser   = "Extract date (issue date, YYYY-MM-DD), amount (total due, a JSON number) and category (one of: utilities, telecom, software, office_supplies, travel, meals, rent, professional_services, taxes, healthcare). Use null for a field the document lacks. Answer with one JSON object with the keys date, amount and category.\n\n{{document}}"
)

// benchPieces are the no-op engine's answer to every request, a valid
// extraction, in the pieces an engine streams it in, a token a chunk.
var benchPieces = []string{`{"`, `date`, `":`, ` "`, `2024`, `-03`, `-15`, `",`, ` "`, `amount`, `":`, ` 12`, `.50`, `,`, ` "`, `category`, `":`, ` "`, `office`, `_supplies`, `"}`}

// benchDocCounts are the two corpus sizes the marginal cost is taken between.
func benchDocCounts(b *testing.B) (int, int) {
	s := os.Getenv("EXTRACTBENCH_BENCH_DOCS")
	if s == "" {
		return 3000, 6000
	}
	a, c, ok := strings.Cut(s, ",")
	n1, err1 := strconv.Atoi(strings.TrimSpace(a))
	n2, err2 := strconv.Atoi(strings.TrimSpace(c))
	if !ok || err1 != nil || err2 != nil || n1 < 1 || n2 <= n1 {
		b.Fatalf("EXTRACTBENCH_BENCH_DOCS=%q: want two document counts, the second larger, e.g. 3000,6000", s)
	}
	return n1, n2
}

var benchCorpora sync.Map // n → []corpus.Document

// benchCorpus is the generated corpus of n documents (median 2.6 KB at the
// default shape), made once per process.
func benchCorpus(b *testing.B, n int) []corpus.Document {
	if v, ok := benchCorpora.Load(n); ok {
		return v.([]corpus.Document)
	}
	docs, err := generate.GenerateN(benchSeed, n)
	if err != nil {
		b.Fatal(err)
	}
	benchCorpora.Store(n, docs)
	return docs
}

// noopStream is the whole event stream the no-op engine writes: one chunk
// per piece of the answer, the finish chunk, the usage chunk and [DONE], as
// vLLM writes them.
func noopStream() []byte {
	var s bytes.Buffer
	for _, p := range benchPieces {
		c, _ := json.Marshal(p)
		fmt.Fprintf(&s, `data: {"id":"chatcmpl-noop","object":"chat.completion.chunk","created":1,"model":"noop","choices":[{"index":0,"delta":{"content":%s},"logprobs":null,"finish_reason":null}]}`+"\n\n", c)
	}
	s.WriteString(`data: {"id":"chatcmpl-noop","object":"chat.completion.chunk","created":1,"model":"noop","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop","stop_reason":null}]}` + "\n\n")
	fmt.Fprintf(&s, `data: {"id":"chatcmpl-noop","object":"chat.completion.chunk","created":1,"model":"noop","choices":[],"usage":{"prompt_tokens":700,"total_tokens":%d,"completion_tokens":%d}}`+"\n\n", 700+len(benchPieces), len(benchPieces))
	s.WriteString("data: [DONE]\n\n")
	return s.Bytes()
}

// noopEngine starts this test binary as an OpenAI-compatible engine that
// reads each request and writes noopStream, the cheapest engine a client
// can face, in a process of its own: the CPU the benchmarks read
// (RUSAGE_SELF) is then the client's alone, as it is against a real engine.
// It answers the metadata paths a run touches as a well-behaved engine does.
func noopEngine(b *testing.B) (url string) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), noopEngineEnv+"=127.0.0.1:0")
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "noop engine listening on ")
	if err != nil || !ok {
		b.Fatalf("start the no-op engine: %q, %v", line, err)
	}
	return "http://" + addr
}

// noopEngineEnv, in this test binary's environment, makes it the no-op
// engine listening there (TestMain) instead of running tests.
const noopEngineEnv = "EXTRACTBENCH_BENCH_NOOP_ENGINE_ADDR"

// serveNoopEngine is the no-op engine's process: it listens on addr, says
// where on stdout, and serves until SIGTERM.
func serveNoopEngine(addr string) {
	body := noopStream()
	mux := hostile.BaseMux(hostile.Options{})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("noop engine listening on", ln.Addr())
	hs := &http.Server{Handler: mux}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// benchCPU returns the CPU time (user + system) the process has used.
func benchCPU(b *testing.B) time.Duration {
	ns, ok := pipeline.ProcessCPU()
	if !ok {
		b.Skip("the process's CPU time is not known on this system")
	}
	return time.Duration(ns)
}

// measureMarginal calls once(n) for both document counts per iteration,
// each after a collection so that the garbage of what came before is not
// charged to it, and reports the CPU per request between them (and at
// the larger count, fixed costs included).
// setup(n), when not nil, runs before each window: what it does is not
// measured.
func measureMarginal(b *testing.B, setup func(n int), once func(n int) (requests int64)) {
	n1, n2 := benchDocCounts(b)
	var cpu1, cpu2 time.Duration
	var req1, req2 int64
	for b.Loop() {
		for _, n := range []int{n1, n2} {
			if setup != nil {
				setup(n)
			}
			runtime.GC()
			c0 := benchCPU(b)
			r := once(n)
			c := benchCPU(b) - c0
			if n == n1 {
				cpu1, req1 = cpu1+c, req1+r
			} else {
				cpu2, req2 = cpu2+c, req2+r
			}
		}
	}
	if req2 <= req1 {
		b.Fatalf("%d requests at %d documents, %d at %d: no margin", req1, n1, req2, n2)
	}
	b.ReportMetric(float64((cpu2-cpu1).Microseconds())/float64(req2-req1), "cpu-µs/req")
	b.ReportMetric(float64(cpu2.Microseconds())/float64(req2), "cpu-µs/req-whole")
}

// BenchmarkRun_NoopEngine is a whole run (levels 1 and 64, one repetition,
// no warm-up; default prompt, strict parsing, the default output schema)
// over a generated corpus against the no-op engine: dispatch, client,
// scoring, the store and the exports.
func BenchmarkRun_NoopEngine(b *testing.B) {
	url := noopEngine(b)
	dir := b.TempDir()
	levels := make([]string, len(benchLevels))
	for i, l := range benchLevels {
		levels[i] = strconv.Itoa(l)
	}
	out := ""
	proto := func(n int) string { return filepath.Join(dir, fmt.Sprintf("protocol-%d.yaml", n)) }
	setup := func(n int) {
		if out != "" {
			_ = os.RemoveAll(out) // the last run's: each run starts in a new directory
		}
		out = filepath.Join(dir, "out")
		if _, err := os.Stat(proto(n)); err == nil {
			return
		}
		cdir := filepath.Join(dir, fmt.Sprintf("corpus-%d", n))
		if _, err := os.Stat(cdir); err != nil {
			if err := corpus.WriteDir(cdir, benchCorpus(b, n), corpus.DefaultCategories); err != nil {
				b.Fatal(err)
			}
		}
		user, _ := json.Marshal(benchUser)
		system, _ := json.Marshal(benchSystem)
		p := fmt.Sprintf(`name: bench-noop
corpus: %s
prompt: {system: %s, user: %s}
output_schema: default
parse: strict
generation: {max_tokens: 128, temperature: 0, seed: 7}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [%s], repetitions: 1, warmup: 0}
request_timeout: 30s
variants:
  - name: noop
    engine: {url: %q, model: %s}
`, cdir, system, user, strings.Join(levels, ", "), url, hostile.Model)
		if err := os.WriteFile(proto(n), []byte(p), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	measureMarginal(b, setup, func(n int) int64 {
		sum, err := pipeline.Run(context.Background(), pipeline.Options{ProtocolPath: proto(n), OutDir: out, Quiet: true})
		if err != nil {
			b.Fatal(err)
		}
		if len(sum.Passes) != len(benchLevels) {
			b.Fatalf("%d passes, want %d", len(sum.Passes), len(benchLevels))
		}
		var requests int64
		for _, ps := range sum.Passes {
			if ps.Docs != int64(n) || ps.Status != "complete" {
				b.Fatalf("pass at level %d: %d documents (%s), want %d complete", ps.Level, ps.Docs, ps.Status, n)
			}
			requests += ps.Docs
		}
		return requests
	})
}

// BenchmarkPlainClient_NoopEngine is the reference for
// BenchmarkRun_NoopEngine: a plain net/http client, as anyone would write
// one, sending the same prompts to the same engine at the same levels and
// reading each stream to its end (a bufio.Scanner of lines, each chunk
// decoded with encoding/json, the content joined).
func BenchmarkPlainClient_NoopEngine(b *testing.B) {
	url := noopEngine(b)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128, DisableCompression: true}}
	defer hc.CloseIdleConnections()
	want := strings.Join(benchPieces, "")
	measureMarginal(b, func(n int) { benchCorpus(b, n) }, func(n int) int64 {
		docs := benchCorpus(b, n)
		var sent atomic.Int64
		var failure atomic.Pointer[string]
		for _, level := range benchLevels {
			var next atomic.Int64
			var wg sync.WaitGroup
			for range level {
				wg.Go(func() {
					for {
						i := int(next.Add(1)) - 1
						if i >= len(docs) || failure.Load() != nil {
							return
						}
						out, err := plainChat(hc, url, strings.ReplaceAll(benchUser, "{{document}}", docs[i].Text))
						sent.Add(1)
						if err == nil && out != want {
							err = fmt.Errorf("output %q, want %q", out, want)
						}
						if err != nil {
							msg := err.Error()
							failure.CompareAndSwap(nil, &msg)
							return
						}
					}
				})
			}
			wg.Wait()
		}
		if msg := failure.Load(); msg != nil {
			b.Fatal(*msg)
		}
		return sent.Load()
	})
}

// plainChat sends one streamed chat completion and returns its content.
func plainChat(hc *http.Client, url, user string) (string, error) {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	body, err := json.Marshal(struct {
		Model         string          `json:"model"`
		Messages      []message       `json:"messages"`
		MaxTokens     int             `json:"max_tokens"`
		Temperature   float64         `json:"temperature"`
		Seed          int             `json:"seed"`
		Stream        bool            `json:"stream"`
		StreamOptions map[string]bool `json:"stream_options"`
	}{hostile.Model, []message{{"system", benchSystem}, {"user", user}}, 128, 0, 7, true, map[string]bool{"include_usage": true}})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %s", res.Status)
	}
	var out strings.Builder
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
		if !ok {
			continue
		}
		if string(data) == "[DONE]" {
			return out.String(), nil
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				PromptTokens     int `json:"prompt_tokens"`
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(data, &c); err != nil {
			return "", fmt.Errorf("decode chunk: %w", err)
		}
		for _, ch := range c.Choices {
			out.WriteString(ch.Delta.Content)
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("stream ended before [DONE]")
}
