package builtin

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
)

// TestServer_Faults causes every fault through a rule and checks what a
// client observes, streamed and not.
func TestServer_Faults(t *testing.T) {
	var rules []FaultRule
	for _, f := range FaultKinds {
		rules = append(rules, FaultRule{Contains: "FAULT-" + string(f), Fault: f})
	}
	_, ts := newTestServer(t, func(c *Config) { c.FaultRules = rules })
	tests := []struct {
		fault Fault
		check func(t *testing.T, status int, contentType, content, finish string, readErr error)
	}{
		{FaultGarbage, func(t *testing.T, status int, _, content, _ string, _ error) {
			if status != 200 || json.Valid([]byte(content)) || strings.Contains(content, "{") {
				t.Errorf("status %d content %q: want prose", status, content)
			}
		}},
		{FaultFence, func(t *testing.T, _ int, _, content, _ string, _ error) {
			if !strings.HasPrefix(content, "```json\n") || !strings.HasSuffix(content, "\n```") {
				t.Errorf("content %q: want a ```json fence", content)
			}
		}},
		{FaultMissingKey, func(t *testing.T, _ int, _, content, _ string, _ error) {
			var m map[string]any
			if err := json.Unmarshal([]byte(content), &m); err != nil || len(m) != 2 || m["category"] != nil {
				t.Errorf("content %q: want valid JSON without category", content)
			}
		}},
		{FaultStringAmount, func(t *testing.T, _ int, _, content, _ string, _ error) {
			var m map[string]any
			if err := json.Unmarshal([]byte(content), &m); err != nil || reflect.TypeOf(m["amount"]).Kind() != reflect.String {
				t.Errorf("content %q: want a string amount", content)
			}
		}},
		{FaultWrongValue, func(t *testing.T, _ int, _, content, _ string, _ error) {
			if content == wantInvoiceEN || !json.Valid([]byte(content)) {
				t.Errorf("content %q: want valid JSON with wrong values", content)
			}
		}},
		{FaultTruncate, func(t *testing.T, _ int, _, content, finish string, _ error) {
			if finish != "length" || json.Valid([]byte(content)) || !strings.HasPrefix(wantInvoiceEN, content) {
				t.Errorf("content %q finish %q: want cut JSON with finish length", content, finish)
			}
		}},
		{FaultOOM, func(t *testing.T, status int, _, content, _ string, _ error) {
			if status != 500 || !strings.Contains(content, "CUDA out of memory") {
				t.Errorf("status %d body %q: want 500 CUDA out of memory", status, content)
			}
		}},
		{FaultReset, func(t *testing.T, _ int, _, _, _ string, readErr error) {
			if readErr == nil {
				t.Error("read the whole body: want the connection reset")
			}
		}},
		{FaultHTML, func(t *testing.T, status int, contentType, content, _ string, _ error) {
			if status != 200 || !strings.HasPrefix(contentType, "text/html") || !strings.Contains(content, "<html>") {
				t.Errorf("status %d type %q: want a 200 HTML page", status, contentType)
			}
		}},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			name := string(tt.fault)
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				b, _ := json.Marshal(chatBody(invoiceEN+"\nRef FAULT-"+string(tt.fault), map[string]any{"stream": stream}))
				resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", bytes.NewReader(b))
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, readErr := io.ReadAll(resp.Body)
				content, finish := string(body), ""
				if resp.StatusCode == 200 && readErr == nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
					var c completion
					if err := json.Unmarshal(body, &c); err != nil {
						t.Fatalf("body %s: %v", body, err)
					}
					content, finish = c.Choices[0].Message.Content, *c.Choices[0].FinishReason
				}
				if stream && readErr == nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
					content = ""
					for _, e := range readSSE(t, body) {
						var c completion
						if e == "[DONE]" || json.Unmarshal([]byte(e), &c) != nil || len(c.Choices) == 0 {
							continue
						}
						if d := c.Choices[0].Delta.Content; d != nil {
							content += *d
						}
						if fr := c.Choices[0].FinishReason; fr != nil {
							finish = *fr
						}
					}
				}
				tt.check(t, resp.StatusCode, resp.Header.Get("Content-Type"), content, finish, readErr)
			})
		}
	}
}

// TestFault_Class checks that every fault names a failure class of
// extractbench.Failures, and no fault none.
func TestFault_Class(t *testing.T) {
	for _, f := range FaultKinds {
		if f.Class().Index() < 0 {
			t.Errorf("fault %s causes class %q, which extractbench.Failures does not list", f, f.Class())
		}
	}
	if c := FaultNone.Class(); c != extractbench.None {
		t.Errorf("no fault causes %q, want none", c)
	}
}

// TestServer_KVFullFails503 sends a batch that cannot fit in a tiny KV pool
// under OnKVFull "fail": the request fails with vLLM-style 503 OOM body.
func TestServer_KVFullFails503(t *testing.T) {
	_, ts := newTestServer(t, func(c *Config) {
		c.Profile = tinyProfile(8, OnKVFullFail)
		c.Profile.ContextWindow = 128
		c.Models = []string{"tiny"}
	})
	// 52-63 prompt tokens: two sequences take the 8 blocks at admission
	// (4 each) and cannot grow past 64 tokens, which the answer needs.
	doc := "Invoice date: 2025-03-12\nTotal due: USD 301.32\nSoftware subscription, seats, cloud plan."
	for 1+corpus.ApproxTokens(doc) < 52 {
		doc += " Net"
	}
	resp, body := post(t, ts.URL+"/v1/completions", map[string]any{"model": "tiny", "prompt": []string{doc, doc, doc}, "temperature": 0})
	var e apiError
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if resp.StatusCode != 503 || e.Code != 503 || e.Object != "error" || !strings.Contains(e.Message, "CUDA out of memory") {
		t.Errorf("status %d body %s: want a 503 CUDA out of memory error object", resp.StatusCode, body)
	}
}

func TestParseFaults(t *testing.T) {
	tests := []struct {
		spec    string
		want    map[Fault]float64
		wantErr bool
	}{
		{"", map[Fault]float64{}, false},
		{"garbage=0.02, oom=0.005", map[Fault]float64{FaultGarbage: 0.02, FaultOOM: 0.005}, false},
		{"bogus=0.1", nil, true},
		{"garbage", nil, true},
		{"garbage=2", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseFaults(tt.spec)
		if (err != nil) != tt.wantErr || (!tt.wantErr && !reflect.DeepEqual(got, tt.want)) {
			t.Errorf("ParseFaults(%q) = %v, %v; want %v, error %v", tt.spec, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestChooseFault_DeterministicRates(t *testing.T) {
	cfg := &Config{Seed: 7, FaultRates: map[Fault]float64{FaultGarbage: 0.1, FaultOOM: 0.1}}
	counts := map[Fault]int{}
	for i := 0; i < 2000; i++ {
		h := docHash(strings.Repeat("x", i))
		f := chooseFault(cfg, "", h)
		if again := chooseFault(cfg, "", h); again != f {
			t.Fatalf("document %d: %q then %q", i, f, again)
		}
		counts[f]++
	}
	for _, f := range []Fault{FaultGarbage, FaultOOM} {
		if counts[f] < 150 || counts[f] > 250 {
			t.Errorf("%s drawn %d times in 2000 at rate 0.1", f, counts[f])
		}
	}
}
