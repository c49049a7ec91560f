package llamacpp_test

import (
	"context"
	"net/http/httptrace"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/client"
)

// TestLive_Connections runs only against a live llama-server
// (LLAMACPP_URL=http://127.0.0.1:PORT, serve.sh's alias extract-llama-15m;
// LLAMACPP_LIVE_N requests per phase, default 40): short streamed answers one
// after the other, then four at a time, through extractbench's client. It
// counts the connections the client reused, and fails on any request that
// did not complete: llama-server closes the connection after every streamed
// answer (README.md, "Connections"), and a request sent on such a
// connection before the client saw it close would fail as a reset.
func TestLive_Connections(t *testing.T) {
	base := os.Getenv("LLAMACPP_URL")
	if base == "" {
		t.Skip("LLAMACPP_URL not set: no live llama-server to ask")
	}
	n := 40
	if v, err := strconv.Atoi(os.Getenv("LLAMACPP_LIVE_N")); err == nil && v > 0 {
		n = v
	}
	c := client.New(client.Config{BaseURL: base, Model: "extract-llama-15m", MaxConns: 4, Timeout: time.Minute})
	defer c.Close()
	for _, par := range []int{1, 4} {
		var reused, fresh, failed atomic.Int64
		var wg sync.WaitGroup
		sem := make(chan struct{}, par)
		for i := range n {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) {
					if ci.Reused {
						reused.Add(1)
					} else {
						fresh.Add(1)
					}
				}}
				ctx := httptrace.WithClientTrace(context.Background(), trace)
				r := c.Chat(ctx, extractbench.NewClock(), 0, "Answer with JSON only.", "Say {} "+strconv.Itoa(i), client.Generation{MaxTokens: 4})
				if r.Kind != extractbench.TransportOK {
					failed.Add(1)
					t.Errorf("level %d request %d: %s HTTP %d: %s", par, i, r.Kind, r.HTTPStatus, r.Detail)
				}
			}()
		}
		wg.Wait()
		t.Logf("level %d: %d requests, %d on a reused connection, %d on a new one, %d failed",
			par, n, reused.Load(), fresh.Load(), failed.Load())
	}
}
