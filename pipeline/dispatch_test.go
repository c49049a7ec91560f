package pipeline_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/extractbench/extractbench/pipeline"
)

// inFlightEngine answers every chat request after hold, counting on the
// server side how many requests are in flight when each one arrives. The
// arrivals are kept in order, so that the test can split them by pass.
type inFlightEngine struct {
	hold     time.Duration
	inFlight atomic.Int64
	mu       sync.Mutex
	arrivals []int64 // requests in flight at each arrival, this one included
}

func (e *inFlightEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/chat/completions":
	case "/v1/models":
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
		return
	case "/health":
		return
	default: // telemetry scrapes, version probes: not requests
		http.NotFound(w, r)
		return
	}
	n := e.inFlight.Add(1)
	defer e.inFlight.Add(-1)
	e.mu.Lock()
	e.arrivals = append(e.arrivals, n)
	e.mu.Unlock()
	time.Sleep(e.hold) // long enough for every slot to fill before one frees
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{\\\"date\\\": null, \\\"amount\\\": null, \\\"category\\\": null}\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}

// TestRun_ExactlyNInFlight is conc's pool "limit" test on the engine's side:
// at concurrency level N, the most requests the engine ever holds at once
// is exactly N, over a pass of 3N documents.
func TestRun_ExactlyNInFlight(t *testing.T) {
	for _, n := range []int{1, 4, 16} {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			docs := 3 * n
			eng := &inFlightEngine{hold: 40 * time.Millisecond}
			srv := httptest.NewServer(eng)
			t.Cleanup(srv.Close)
			p := fmt.Sprintf(`name: limit
corpus: %s
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [%d], repetitions: 1, warmup: 0}
variants:
  - name: v
    engine: {url: %q, model: m}
`, writeSmallCorpus(t, dir, docs), n, srv.URL)
			proto := filepath.Join(dir, "limit.yaml")
			if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := pipeline.Run(context.Background(), pipeline.Options{ProtocolPath: proto, OutDir: filepath.Join(dir, "out"), Quiet: true}); err != nil {
				t.Fatal(err)
			}
			eng.mu.Lock()
			defer eng.mu.Unlock()
			// The baseline (level 1) runs first, then level N; no warm-up.
			passes := [][]int64{eng.arrivals[:docs]}
			if n != 1 {
				passes = append(passes, eng.arrivals[docs:])
			}
			for i, want := range []int64{1, int64(n)}[:len(passes)] {
				if got := len(passes[i]); got != docs {
					t.Fatalf("pass %d: the engine saw %d requests, want %d", i+1, got, docs)
				}
				var most int64
				for _, a := range passes[i] {
					most = max(most, a)
				}
				if most != want {
					t.Errorf("pass at level %d: at most %d requests in flight at the engine, want exactly %d", want, most, want)
				}
			}
		})
	}
}
