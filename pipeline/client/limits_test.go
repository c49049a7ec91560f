package client

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

func TestMaxAnswerBytes(t *testing.T) {
	tests := []struct{ maxTokens, want int }{
		{0, DefaultAnswerBytes},
		{-1, DefaultAnswerBytes},
		{1, MinAnswerBytes},
		{128, MinAnswerBytes},
		{1024, MinAnswerBytes},
		{4096, 4096 * AnswerBytesPerToken},
		{1 << 40, (1 << 30) * AnswerBytesPerToken},
	}
	for _, tt := range tests {
		if got := MaxAnswerBytes(tt.maxTokens); got != tt.want {
			t.Errorf("MaxAnswerBytes(%d) = %d, want %d", tt.maxTokens, got, tt.want)
		}
	}
}

// capMaxTokens is the max_tokens of the cap tests: its answer cap is
// MinAnswerBytes (64 KiB), one hostile chunk's content.
const capMaxTokens = 128

// TestClient_AnswerCap points the client at engines that never stop: each
// request must end as too_large (classified truncation) with at most the
// cap kept as output, whatever the engine would have gone on sending. The
// endless modes are bounded server-side (N) far past the cap so that the
// old client, which read everything, fails here instead of exhausting the
// machine.
func TestClient_AnswerCap(t *testing.T) {
	limit := MaxAnswerBytes(capMaxTokens)
	tests := []struct {
		mode   hostile.Mode
		n      int
		detail string
	}{
		{hostile.SSEEndlessChunks, 64, "answer passed its 65536-byte cap at content chunk 2"}, // 4 MiB sent, 64× the cap
		{hostile.SSEEndlessLine, 4, "one event passed"},                                       // 16 MiB in one event
		{hostile.SSEHugeJSON, 0, "non-streamed body passed"},                                  // 100 MB body
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			s := hostile.MustNew(t, tt.mode, hostile.Options{N: tt.n})
			c := New(Config{BaseURL: s.URL, Model: hostile.Model, MaxConns: 1})
			r := c.Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{MaxTokens: capMaxTokens})
			checkTimingOrder(t, r)
			if r.Kind != extractbench.TransportTooLarge || !strings.Contains(r.Detail, tt.detail) {
				t.Errorf("Kind = %q (%s), want too_large saying %q", r.Kind, r.Detail, tt.detail)
			}
			if len(r.Output) > limit {
				t.Errorf("len(Output) = %d, want at most the cap %d", len(r.Output), limit)
			}
			o := eval.Evaluate(r.Output, corpus.Expected{}, r.Transport, eval.Options{})
			if o.Failure != extractbench.Truncation || !strings.Contains(o.FailureDetail, "size cap") {
				t.Errorf("failure = %q (%s), want truncation at the size cap", o.Failure, o.FailureDetail)
			}
		})
	}
}

// TestClient_AnswerCapConfig: the protocol's max_answer_bytes replaces the
// cap derived from max_tokens, both ways.
func TestClient_AnswerCapConfig(t *testing.T) {
	s := hostile.MustNew(t, hostile.SSEEndlessChunks, hostile.Options{N: 3})
	small := New(Config{BaseURL: s.URL, MaxAnswerBytes: 1000})
	r := small.Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{MaxTokens: capMaxTokens})
	if r.Kind != extractbench.TransportTooLarge || len(r.Output) != 1000 || !strings.Contains(r.Detail, "its 1000-byte cap") {
		t.Errorf("Kind = %q (%s), len(Output) = %d, want too_large at 1000 bytes", r.Kind, r.Detail, len(r.Output))
	}
	large := New(Config{BaseURL: s.URL, MaxAnswerBytes: 4 * hostile.ContentChunk})
	r = large.Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{MaxTokens: capMaxTokens})
	if r.Kind != extractbench.TransportOK || len(r.Output) != 3*hostile.ContentChunk {
		t.Errorf("Kind = %q (%s), len(Output) = %d, want the whole %d-byte answer", r.Kind, r.Detail, len(r.Output), 3*hostile.ContentChunk)
	}
}

// heapLevel is the concurrency of the heap test: the sweep's usual top.
const heapLevel = 64

// heapBound is what the heap test allows in use at once, for every request
// in flight, client and hostile server together (the server runs in the
// test's process): the event and line buffers (up to limits.event each, a
// 64 KiB chunk's line in practice), the bodies' 64 KiB readers, the output
// up to its 64 KiB cap, and garbage the collector has not reclaimed yet.
const heapBound = heapLevel * (2 << 20)

// TestClient_EndlessStreamHeapBounded keeps heapLevel requests in flight
// against an engine that never stops, valid 64 KiB chunks or 4 MiB data
// lines with no blank line (8 MiB a request, far past the cap: the old
// client held all of it, 512 MiB at this level), and samples the heap in
// use: its peak above the idle heap must stay under heapBound, and every
// request must end as too_large.
func TestClient_EndlessStreamHeapBounded(t *testing.T) {
	for _, tt := range []struct {
		mode hostile.Mode
		n    int
	}{
		{hostile.SSEEndlessChunks, 128},
		{hostile.SSEEndlessLine, 2},
	} {
		t.Run(string(tt.mode), func(t *testing.T) {
			s := hostile.MustNew(t, tt.mode, hostile.Options{N: tt.n})
			c := New(Config{BaseURL: s.URL, Model: hostile.Model, MaxConns: heapLevel})
			defer c.Close()
			ctx := pipelinetest.Context(t)
			resps, grown, idle := peakHeap(func(i int) extractbench.Response {
				return c.Chat(ctx, extractbench.NewClock(), 1, "", "doc", Generation{MaxTokens: capMaxTokens})
			})
			t.Logf("peak heap in use at concurrency %d: %.1f MiB above the idle %.1f MiB (%.2f MiB a request; bound %d MiB)",
				heapLevel, float64(grown)/(1<<20), float64(idle)/(1<<20), float64(grown)/heapLevel/(1<<20), heapBound>>20)
			if grown > heapBound {
				t.Errorf("peak heap in use grew by %d MiB at concurrency %d, want under %d MiB", grown>>20, heapLevel, heapBound>>20)
			}
			limit := MaxAnswerBytes(capMaxTokens)
			for i, r := range resps {
				if r.Kind != extractbench.TransportTooLarge || len(r.Output) > limit {
					t.Fatalf("request %d: Kind = %q (%s), len(Output) = %d, want too_large within %d", i, r.Kind, r.Detail, len(r.Output), limit)
				}
			}
		})
	}
}

// peakHeap runs heapLevel calls of do at once and returns their responses
// and the peak heap in use while they ran, above the idle heap before.
func peakHeap(do func(i int) extractbench.Response) (resps []extractbench.Response, grown int64, idle uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	idle = m.HeapInuse
	peak := idle
	done := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	resps = make([]extractbench.Response, heapLevel)
	var wg sync.WaitGroup
	for i := range resps {
		wg.Go(func() { resps[i] = do(i) })
	}
	wg.Wait()
	close(done)
	sampler.Wait()
	return resps, int64(peak) - int64(idle), idle
}
