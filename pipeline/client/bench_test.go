//go:build unix

package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin"
	"github.com/extractbench/extractbench/pipeline/client"
)

// benchChunks is the number of content chunks every benchmarked stream
// carries. The built-in engine's answer to a short document is 13 tokens,
// so max_tokens cuts it at benchChunks (finish_reason "length").
const benchChunks = 8

// benchDocs are short documents of different shapes: distinct, so the
// engine's extraction cache holds several entries, and short, so reading
// them costs little next to the transport being measured.
var benchDocs = []string{
	"Invoice 2024-03-15\nACME Office Supplies\nTotal: 12.50 EUR",
	"Taxi receipt\nDate: 2024-01-02\nFare 23.40",
	"Hotel invoice 2023-11-05, amount due 240.00",
	"Restaurant bill, 2024-06-30, total 58.10",
	"Software subscription renewal 2024-02-01: 99.00 USD",
	"Train ticket 2023-12-24 price 41.90",
	"Utility bill for May, due 2024-05-20, 73.25",
	"Parking receipt 2024-04-11 amount 6.00",
}

// BenchmarkClientBuiltin drives the built-in engine at zero modelled latency
// through the full client (HTTP, SSE parsing, timestamps), keeping level
// requests in flight. One op is one request; req/s is the throughput of
// client and engine together on this machine.
func BenchmarkClientBuiltin(b *testing.B) {
	for _, level := range []int{1, 64, 512} {
		b.Run(fmt.Sprintf("level=%d", level), func(b *testing.B) { benchClientBuiltin(b, level) })
	}
}

func benchClientBuiltin(b *testing.B, level int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := builtin.LookupProfile("sim-1b")
	if err != nil {
		b.Fatal(err)
	}
	p.TimeScale = 0
	p.MaxRunningSeqs = 2 * level // never queue: the batch holds every request in flight
	url, stop, err := builtin.Start(ctx, builtin.Config{Profile: p})
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	driveClient(ctx, b, url, p.Name, level)
}

// BenchmarkClientNoop is the reference for BenchmarkClientBuiltin in the same
// run: the same client against a server that only writes a canned stream of
// benchChunks content chunks. Their ratio is the engine's share of the cost.
func BenchmarkClientNoop(b *testing.B) {
	var stream strings.Builder
	for _, c := range []string{`{\"`, `date`, `\": \"`, `2024-03-15`, `\", \"`, `amount`, `\":`, ` 12.5`} {
		fmt.Fprintf(&stream, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"},\"finish_reason\":null}]}\n\n", c)
	}
	stream.WriteString("data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n")
	stream.WriteString("data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":8,\"total_tokens\":28}}\n\ndata: [DONE]\n\n")
	body := []byte(stream.String())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	for _, level := range []int{1, 64, 512} {
		b.Run(fmt.Sprintf("level=%d", level), func(b *testing.B) { driveClient(context.Background(), b, srv.URL, "noop", level) })
	}
}

// driveClient keeps level requests in flight against url until b.N are done,
// checking every response, and reports req/s and CPU per request.
func driveClient(ctx context.Context, b *testing.B, url, model string, level int) {
	c := client.New(client.Config{BaseURL: url, Model: model, MaxConns: level})
	defer c.Close()
	clock := extractbench.NewClock()
	users := make([]string, len(benchDocs))
	for i, d := range benchDocs {
		users[i] = "Extract the fields.\n<document>" + d + "</document>"
	}
	g := client.Generation{MaxTokens: benchChunks, Temperature: 0}
	const system = "You extract date, amount and category as JSON."

	// Warm up: dial the connections and fill the extraction cache, and
	// learn each document's expected output.
	want := make([]string, len(users))
	for i, u := range users {
		r := c.Chat(ctx, clock, clock.Now(), system, u, g)
		if msg := checkBenchResponse(r, ""); msg != "" {
			b.Fatalf("warm-up %d: %s", i, msg)
		}
		want[i] = r.Output
	}

	var next atomic.Int64
	var failure atomic.Pointer[string]
	var wg sync.WaitGroup
	b.ReportAllocs()
	cpu0 := processCPU(b)
	b.ResetTimer()
	for w := 0; w < level; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := next.Add(1)
				if n > int64(b.N) || failure.Load() != nil {
					return
				}
				i := int(n) % len(users)
				r := c.Chat(ctx, clock, clock.Now(), system, users[i], g)
				if msg := checkBenchResponse(r, want[i]); msg != "" {
					failure.CompareAndSwap(nil, &msg)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	cpu := processCPU(b) - cpu0
	if msg := failure.Load(); msg != nil {
		b.Fatal(*msg)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	// CPU per request (client and engine, user and system) is what the
	// machine's other tenants cannot change; req/s is what they can.
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/req")
}

// processCPU returns the user and system CPU time this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("read CPU time: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// checkBenchResponse returns why r is not a complete stream of benchChunks
// content chunks with usage and ordered timestamps, or "" when it is.
// want is the expected output; "" accepts any output of the right shape.
func checkBenchResponse(r extractbench.Response, want string) string {
	switch {
	case r.Kind != extractbench.TransportOK:
		return fmt.Sprintf("transport %s: %s", r.Kind, r.Detail)
	case !r.UsageReported || r.CompletionTokens != benchChunks || r.PromptTokens == 0:
		return fmt.Sprintf("usage reported %v, %d prompt and %d completion tokens, want %d completion tokens",
			r.UsageReported, r.PromptTokens, r.CompletionTokens, benchChunks)
	case r.FinishReason != "length":
		return fmt.Sprintf("finish reason %q, want length", r.FinishReason)
	case !strings.HasPrefix(r.Output, `{"date`):
		return fmt.Sprintf("output %q is not the start of a JSON answer", r.Output)
	case want != "" && r.Output != want:
		return fmt.Sprintf("output %q, want %q", r.Output, want)
	case !(r.SchedNS > 0 && r.SchedNS <= r.SendNS && r.SendNS <= r.FirstByteNS && r.FirstByteNS <= r.FirstTokenNS &&
		r.FirstTokenNS <= r.LastTokenNS && r.LastTokenNS <= r.DoneNS):
		return fmt.Sprintf("timestamps out of order or missing: %+v", r.Timings)
	}
	return ""
}
