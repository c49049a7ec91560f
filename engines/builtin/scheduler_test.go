package builtin

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// tinyProfile is a one-layer model whose KV pool holds exactly blocks blocks
// of 16 tokens, with no modelled latency.
func tinyProfile(blocks int, onKVFull string) Profile {
	p := Profile{
		Name: "tiny", Layers: 1, KVHeads: 1, HeadDim: 8, Params: 1000, Dtype: "bf16",
		WeightBytesPerParam: 2, KVBytesPerElement: 2, GPUName: "test GPU", MemoryUtilization: 1,
		ContextWindow: 128, MaxRunningSeqs: 16, BlockSize: 16, OnKVFull: onKVFull,
		PrefillTokensPerSec: 1000, DecodeStepBase: time.Millisecond, DecodeStepPerSeq: time.Microsecond,
	}
	p.GPUMemoryBytes = p.WeightBytes() + activationBytes + int64(blocks)*p.KVBytesPerToken()*int64(p.BlockSize)
	return p
}

// newSeq makes a sequence of prompt tokens whose answer is n numbered tokens.
func newSeq(index, prompt, n int) *seq {
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("t%d.", i)
	}
	return &seq{ctx: context.Background(), index: index, prompt: prompt, tokens: tokens, finish: "stop", arrived: time.Now(), out: make(chan event, n+2)}
}

// drive steps the scheduler until nothing is left, calling each after every step.
func drive(t *testing.T, s *scheduler, each func()) {
	t.Helper()
	for i := 0; len(s.running)+len(s.waiting) > 0; i++ {
		if i > 10000 {
			t.Fatal("scheduler made no progress in 10,000 steps")
		}
		s.step(context.Background())
		if each != nil {
			each()
		}
	}
}

// collect reads what a sequence received: its text, finish reason and error.
func collect(q *seq) (text, finish string, err *apiError) {
	for {
		select {
		case e := <-q.out:
			if e.err != nil {
				return text, "", e.err
			}
			text += e.token
			if e.finish != "" {
				return text, e.finish, nil
			}
		default:
			return text, "", nil
		}
	}
}

func want(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "t%d.", i)
	}
	return b.String()
}

func TestScheduler_QueuesBeyondMaxRunningSeqs(t *testing.T) {
	p := tinyProfile(64, OnKVFullPreempt)
	p.MaxRunningSeqs = 2
	m := newMetrics(p)
	s := newScheduler(p, m, nil)
	var seqs []*seq
	for i := 0; i < 5; i++ {
		seqs = append(seqs, newSeq(i, 10, 6))
	}
	s.waiting = append(s.waiting, seqs...)
	sawQueue := false
	drive(t, s, func() {
		st := m.snapshot()
		if st.Running > p.MaxRunningSeqs {
			t.Fatalf("running %d > max %d", st.Running, p.MaxRunningSeqs)
		}
		if st.Waiting > 0 && st.Running == p.MaxRunningSeqs {
			sawQueue = true
			var b strings.Builder
			if err := m.write(&b); err != nil {
				t.Fatal(err)
			}
			for _, line := range []string{`vllm:num_requests_running{model_name="tiny"} 2`, `vllm:num_requests_waiting{model_name="tiny"} `} {
				if !strings.Contains(b.String(), line) {
					t.Errorf("metrics lack %q:\n%s", line, b.String())
				}
			}
		}
	})
	if !sawQueue {
		t.Error("never saw waiting > 0 while running == max")
	}
	for _, q := range seqs {
		if got, finish, err := collect(q); got != want(6) || finish != "stop" || err != nil {
			t.Errorf("seq %d got %q %q %v, want %q stop", q.index, got, finish, err, want(6))
		}
	}
	if st := m.snapshot(); st.KVBlocksUsed != 0 || s.free != s.total || st.GenerationTokens != 30 || st.PromptTokens != 50 {
		t.Errorf("after the run: %+v, free %d of %d; want everything freed, 30 generated, 50 prompt", st, s.free, s.total)
	}
}

// TestScheduler_OnKVFull runs three sequences that fit alone but not together
// (2 blocks each at admission, 4 at the end, 8 blocks in the pool).
func TestScheduler_OnKVFull(t *testing.T) {
	tests := []struct {
		policy                        string
		wantPreemptions, wantFailures bool
		wantCompleted                 int
	}{
		{OnKVFullQueue, false, false, 3},
		{OnKVFullPreempt, true, false, 3},
		{OnKVFullFail, false, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			p := tinyProfile(8, tt.policy)
			m := newMetrics(p)
			s := newScheduler(p, m, nil)
			seqs := []*seq{newSeq(0, 30, 30), newSeq(1, 30, 30), newSeq(2, 30, 30)}
			s.waiting = append(s.waiting, seqs...)
			peak := 0
			drive(t, s, func() {
				if used := s.total - s.free; used > peak {
					peak = used
				}
				if s.free < 0 {
					t.Fatalf("free blocks %d < 0", s.free)
				}
			})
			completed := 0
			for _, q := range seqs {
				got, finish, err := collect(q)
				switch {
				case err != nil:
					if err.Code != 503 || !strings.Contains(err.Message, "CUDA out of memory") {
						t.Errorf("seq %d error %+v, want a 503 CUDA out of memory", q.index, err)
					}
				case got == want(30) && finish == "stop":
					completed++
				default:
					t.Errorf("seq %d got %q %q, want %q", q.index, got, finish, want(30))
				}
			}
			st := m.snapshot()
			if got := st.Preemptions > 0; got != tt.wantPreemptions {
				t.Errorf("preemptions %d, want some: %v", st.Preemptions, tt.wantPreemptions)
			}
			if got := st.KVFailures > 0; got != tt.wantFailures {
				t.Errorf("KV failures %d, want some: %v", st.KVFailures, tt.wantFailures)
			}
			if completed < tt.wantCompleted {
				t.Errorf("completed %d, want at least %d", completed, tt.wantCompleted)
			}
			if peak > s.total || s.free != s.total {
				t.Errorf("peak %d, free %d of %d blocks: want peak <= total and all freed", peak, s.free, s.total)
			}
		})
	}
}

func TestScheduler_ReapsCanceled(t *testing.T) {
	p := tinyProfile(8, OnKVFullPreempt)
	s := newScheduler(p, newMetrics(p), nil)
	ctx, cancel := context.WithCancel(context.Background())
	q := newSeq(0, 30, 30)
	q.ctx = ctx
	s.waiting = append(s.waiting, q)
	s.step(context.Background())
	if s.free == s.total {
		t.Fatal("the sequence holds no block after a step")
	}
	cancel()
	s.step(context.Background())
	if len(s.running) != 0 || s.free != s.total {
		t.Errorf("after cancel: %d running, %d of %d blocks free; want the sequence freed", len(s.running), s.free, s.total)
	}
}

func TestScheduler_SleepKeepsAbsoluteClock(t *testing.T) {
	p := tinyProfile(8, OnKVFullPreempt)
	s := newScheduler(p, newMetrics(p), nil)
	start := time.Now()
	for i := 0; i < 20; i++ {
		s.sleep(context.Background(), time.Millisecond)
	}
	if got := time.Since(start); got < 20*time.Millisecond {
		t.Errorf("20 steps of 1 ms took %v, want at least 20 ms", got)
	}
}
