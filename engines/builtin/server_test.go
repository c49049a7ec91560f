package builtin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/extractbench/extractbench/corpus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

const invoiceEN = `Cloudlift, Inc.
410 Market St., Austin, TX 78701

Subscription Invoice #88213
Invoice date: March 12, 2025
Due date: April 11, 2025

Description                                 Qty   Unit price    Amount
Team plan - per seat / month                 12        15.00       180.00
Premium support add-on                        1        99.00        99.00

Subtotal: USD 279.00
Sales tax: USD 22.32
Total due: USD 301.32
Thank you for your business!`

const wantInvoiceEN = `{"date": "2025-03-12", "amount": 301.32, "category": "software"}`

const prompt = "Extract the issue date, the total due and the category of the document below. Answer with JSON only.\n\n"

// newTestServer starts an engine on sim-8b with no modelled latency.
func newTestServer(t *testing.T, edit func(*Config)) (*Server, *httptest.Server) {
	t.Helper()
	p, err := LookupProfile("sim-8b")
	if err != nil {
		t.Fatal(err)
	}
	p.TimeScale = 0
	cfg := Config{Profile: p, Seed: 1}
	if edit != nil {
		edit(&cfg)
	}
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() {
		ts.Close()
		s.Close()
	})
	return s, ts
}

func post(t *testing.T, url string, body any) (*http.Response, []byte) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("post %s: %v", url, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp, got
}

func chatBody(doc string, extra map[string]any) map[string]any {
	body := map[string]any{
		"model":       "sim-8b",
		"temperature": 0,
		"messages": []map[string]string{
			{"role": "system", "content": "You extract data from business documents."},
			{"role": "user", "content": prompt + doc},
		},
	}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

type completion struct {
	Choices []struct {
		Index        int     `json:"index"`
		Text         string  `json:"text"`
		FinishReason *string `json:"finish_reason"`
		Message      struct {
			Content string `json:"content"`
		} `json:"message"`
		Delta struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
}

// readSSE returns the data payloads of an event stream, [DONE] included.
func readSSE(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, line)
		}
	}
	return out
}

func TestServer_ChatNonStream(t *testing.T) {
	_, ts := newTestServer(t, nil)
	resp, body := post(t, ts.URL+"/v1/chat/completions", chatBody(invoiceEN, nil))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var c completion
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	if got := c.Choices[0].Message.Content; got != wantInvoiceEN {
		t.Errorf("content %s, want %s", got, wantInvoiceEN)
	}
	if got := *c.Choices[0].FinishReason; got != "stop" {
		t.Errorf("finish_reason %q, want stop", got)
	}
	wantPrompt := chatTemplateBase + 2*chatTemplatePerMessage + corpus.ApproxTokens("You extract data from business documents.") + corpus.ApproxTokens(prompt+invoiceEN)
	if c.Usage == nil || c.Usage.PromptTokens != wantPrompt || c.Usage.CompletionTokens != len(splitTokens(wantInvoiceEN)) {
		t.Errorf("usage %+v, want prompt %d completion %d", c.Usage, wantPrompt, len(splitTokens(wantInvoiceEN)))
	}
}

func TestServer_ChatStream(t *testing.T) {
	_, ts := newTestServer(t, nil)
	resp, body := post(t, ts.URL+"/v1/chat/completions", chatBody(invoiceEN, map[string]any{
		"stream": true, "stream_options": map[string]bool{"include_usage": true},
	}))
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	events := readSSE(t, body)
	if n := len(events); n < 5 || events[n-1] != "[DONE]" {
		t.Fatalf("events %q: want role, content, finish, usage, [DONE]", events)
	}
	var chunks []completion
	for _, e := range events[:len(events)-1] {
		var c completion
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatalf("chunk %s: %v", e, err)
		}
		chunks = append(chunks, c)
	}
	if first := chunks[0].Choices[0].Delta; first.Role != "assistant" || (first.Content != nil && *first.Content != "") {
		t.Errorf("first chunk %s: want role only", events[0])
	}
	var text strings.Builder
	contentChunks := 0
	for _, c := range chunks[1 : len(chunks)-2] {
		if c.Choices[0].Delta.Content != nil {
			text.WriteString(*c.Choices[0].Delta.Content)
			contentChunks++
		}
		if c.Choices[0].FinishReason != nil {
			t.Errorf("finish_reason before the finish chunk")
		}
	}
	if text.String() != wantInvoiceEN {
		t.Errorf("streamed %s, want %s", text.String(), wantInvoiceEN)
	}
	if contentChunks < 8 || contentChunks > 16 {
		t.Errorf("%d content chunks, want ~8-16", contentChunks)
	}
	finish := chunks[len(chunks)-2]
	if fr := finish.Choices[0].FinishReason; fr == nil || *fr != "stop" {
		t.Errorf("finish chunk %s", events[len(events)-3])
	}
	last := chunks[len(chunks)-1]
	if len(last.Choices) != 0 || last.Usage == nil || last.Usage.CompletionTokens != contentChunks {
		t.Errorf("usage chunk %s: want empty choices and %d completion tokens", events[len(events)-2], contentChunks)
	}
}

func TestServer_CompletionsBatch(t *testing.T) {
	_, ts := newTestServer(t, nil)
	docs := []string{invoiceEN, strings.Replace(invoiceEN, "USD 301.32", "USD 1,301.32", 1), invoiceEN}
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			resp, body := post(t, ts.URL+"/v1/completions", map[string]any{"model": "sim-8b", "prompt": docs, "temperature": 0, "stream": stream})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			texts := make([]string, len(docs))
			finished := 0
			if !stream {
				var c completion
				if err := json.Unmarshal(body, &c); err != nil {
					t.Fatal(err)
				}
				for _, ch := range c.Choices {
					texts[ch.Index] = ch.Text
					finished++
				}
			} else {
				for _, e := range readSSE(t, body) {
					if e == "[DONE]" {
						continue
					}
					var c completion
					if err := json.Unmarshal([]byte(e), &c); err != nil {
						t.Fatal(err)
					}
					texts[c.Choices[0].Index] += c.Choices[0].Text
					if c.Choices[0].FinishReason != nil {
						finished++
					}
				}
			}
			wantAmounts := []string{"301.32", "1301.32", "301.32"}
			for i, text := range texts {
				if !strings.Contains(text, `"amount": `+wantAmounts[i]) {
					t.Errorf("choice %d: %s, want amount %s", i, text, wantAmounts[i])
				}
			}
			if finished != len(docs) {
				t.Errorf("%d choices finished, want %d", finished, len(docs))
			}
		})
	}
}

func TestServer_Errors(t *testing.T) {
	_, ts := newTestServer(t, nil)
	sys := corpus.ApproxTokens("You extract data from business documents.")
	promptTokens := chatTemplateBase + 2*chatTemplatePerMessage + sys + corpus.ApproxTokens(prompt+invoiceEN)
	tests := []struct {
		name       string
		body       map[string]any
		wantStatus int
		wantBody   string
	}{
		{"context length", chatBody(invoiceEN, map[string]any{"max_tokens": 8192}), 400,
			fmt.Sprintf(`{"object":"error","message":"This model's maximum context length is 8192 tokens. However, you requested %d tokens (%d in the messages, 8192 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`,
				promptTokens+8192, promptTokens)},
		{"unknown model", map[string]any{"model": "gpt-9", "messages": []map[string]string{{"role": "user", "content": "hi"}}}, 404,
			"{\"object\":\"error\",\"message\":\"The model `gpt-9` does not exist.\",\"type\":\"NotFoundError\",\"param\":null,\"code\":404}"},
		{"zero max tokens", chatBody(invoiceEN, map[string]any{"max_tokens": 0}), 400, ""},
		{"prompt alone too long", chatBody(strings.Repeat("word ", 9000), nil), 400, ""},
		{"n > 1", chatBody(invoiceEN, map[string]any{"n": 2}), 400, ""},
		{"bad json", map[string]any{"model": "sim-8b", "messages": "nope"}, 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(t, ts.URL+"/v1/chat/completions", tt.body)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tt.wantStatus, body)
			}
			if got := strings.TrimSpace(string(body)); tt.wantBody != "" && got != tt.wantBody {
				t.Errorf("body\n%s\nwant\n%s", got, tt.wantBody)
			}
		})
	}
}

func TestServer_MaxTokensCutsJSON(t *testing.T) {
	_, ts := newTestServer(t, nil)
	_, body := post(t, ts.URL+"/v1/chat/completions", chatBody(invoiceEN, map[string]any{"max_tokens": 5}))
	var c completion
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	got := c.Choices[0].Message.Content
	if *c.Choices[0].FinishReason != "length" || !strings.HasPrefix(wantInvoiceEN, got) || got == wantInvoiceEN || json.Valid([]byte(got)) {
		t.Errorf("got %q finish %q, want a cut prefix of %s with finish length", got, *c.Choices[0].FinishReason, wantInvoiceEN)
	}
	if c.Usage.CompletionTokens != 5 {
		t.Errorf("completion tokens %d, want 5", c.Usage.CompletionTokens)
	}
}

// scrape reads /metrics into families.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse metrics: %v", err)
	}
	out := map[string]float64{}
	for name, f := range families {
		m := f.GetMetric()[0]
		switch {
		case m.Counter != nil:
			out[name] = m.Counter.GetValue()
		case m.Gauge != nil:
			out[name] = m.Gauge.GetValue()
		case m.Histogram != nil:
			out[name] = float64(m.Histogram.GetSampleCount())
		}
	}
	return out
}

func TestServer_MetricsMatchUsage(t *testing.T) {
	s, ts := newTestServer(t, nil)
	const n = 12
	var mu sync.Mutex
	var sum usage
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			doc := strings.Replace(invoiceEN, "88213", fmt.Sprint(i), 1)
			_, body := post(t, ts.URL+"/v1/chat/completions", chatBody(doc, map[string]any{"max_tokens": 3 + i}))
			var c completion
			if err := json.Unmarshal(body, &c); err != nil || c.Usage == nil {
				t.Errorf("request %d: %s", i, body)
				return
			}
			mu.Lock()
			sum.PromptTokens += c.Usage.PromptTokens
			sum.CompletionTokens += c.Usage.CompletionTokens
			mu.Unlock()
		}()
	}
	wg.Wait()
	got := scrape(t, ts.URL)
	checks := map[string]float64{
		"vllm:prompt_tokens_total":             float64(sum.PromptTokens),
		"vllm:generation_tokens_total":         float64(sum.CompletionTokens),
		"vllm:e2e_request_latency_seconds":     n,
		"vllm:time_to_first_token_seconds":     n,
		"vllm:request_queue_time_seconds":      n,
		"vllm:num_requests_running":            0,
		"vllm:num_requests_waiting":            0,
		"vllm:kv_cache_usage_perc":             0,
		"vllm:num_preemptions_total":           0,
		"torch_cuda_max_memory_reserved_bytes": float64(s.p.WeightBytes() + int64(s.p.KVBlocks())*s.p.KVBytesPerToken()*16),
	}
	for name, want := range checks {
		if got[name] != want {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
	if got["torch_cuda_max_memory_allocated_bytes"] <= float64(s.p.WeightBytes()) {
		t.Errorf("peak allocated %v: want above the weights %d", got["torch_cuda_max_memory_allocated_bytes"], s.p.WeightBytes())
	}
	resp, _ := post(t, ts.URL+"/reset_peaks", nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reset_peaks status %d", resp.StatusCode)
	}
	if got := scrape(t, ts.URL)["torch_cuda_max_memory_allocated_bytes"]; got != float64(s.p.WeightBytes()) {
		t.Errorf("peak allocated after reset %v, want the weights %d", got, s.p.WeightBytes())
	}
}

// TestServer_ResetPromptCache: the engine answers the reset a run asks
// before each pass, and says that nothing was cached (it keeps no prompt
// cache); a GET is not a reset.
func TestServer_ResetPromptCache(t *testing.T) {
	_, ts := newTestServer(t, nil)
	resp, body := post(t, ts.URL+CacheResetPath, nil)
	var got struct {
		Reset        bool   `json:"reset"`
		CachedTokens *int   `json:"cached_tokens"`
		Detail       string `json:"detail"`
	}
	if err := json.Unmarshal(body, &got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s (%v)", CacheResetPath, resp.StatusCode, body, err)
	}
	if !got.Reset || got.CachedTokens == nil || *got.CachedTokens != 0 || !strings.Contains(got.Detail, "nothing was cached") {
		t.Errorf("POST %s = %s, want reset, 0 cached tokens and why", CacheResetPath, body)
	}
	g, err := http.Get(ts.URL + CacheResetPath)
	if err != nil {
		t.Fatal(err)
	}
	g.Body.Close()
	if g.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET %s = %d, want 405", CacheResetPath, g.StatusCode)
	}
}

func TestServer_ModelsHealthVersion(t *testing.T) {
	_, ts := newTestServer(t, func(c *Config) { c.Models = []string{"sim-8b", "alias"} })
	for _, path := range []string{"/health", "/v1/models", "/version"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", path, resp.StatusCode)
		}
		if path == "/v1/models" && !strings.Contains(string(body), `"id":"alias"`) {
			t.Errorf("/v1/models %s: want both served names", body)
		}
	}
}

// TestServer_VersionSaysSimulated: /version names the engine and its
// version and says that it is simulated, with the card it models, so that
// a run reaching it by URL records what it is.
func TestServer_VersionSaysSimulated(t *testing.T) {
	s, ts := newTestServer(t, func(c *Config) { c.Version = "9.9.9" })
	resp, err := http.Get(ts.URL + "/version")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got VersionInfo
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := VersionInfo{Version: "extractbench-builtin 9.9.9", Engine: Name, Simulated: true, Model: s.cfg.Models[0],
		GPU: VersionGPU{Name: s.p.GPUName, MemoryTotalBytes: s.p.GPUMemoryBytes}}
	if got != want {
		t.Errorf("/version = %+v, want %+v", got, want)
	}
}

func TestStart(t *testing.T) {
	p, _ := LookupProfile("sim-1b-int4")
	p.TimeScale = 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, stop, err := Start(ctx, Config{Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	resp, body := post(t, url+"/v1/chat/completions", map[string]any{"model": "sim-1b-int4", "messages": []map[string]string{{"role": "user", "content": invoiceEN}}})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %d: %s", resp.StatusCode, body)
	}
	if err := stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if _, err := http.Get(url + "/health"); err == nil {
		t.Error("engine still answers after stop")
	}
}
