package builtin

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// event is what the scheduler hands a request's handler: one token, the
// end of the sequence (finish set), or an error.
type event struct {
	token  string
	finish string    // "stop" or "length" on the last token
	err    *apiError // the sequence was aborted (KV cache full under OnKVFullFail)
	index  int       // the choice it belongs to (a batch of prompts shares one channel)
	at     int64     // when it happened on the engine clock (0 without one)
}

// seq is one sequence in the scheduler. Only the scheduler goroutine touches
// its mutable fields; the handler reads out.
type seq struct {
	ctx     context.Context
	id      string
	index   int      // choice index within its request
	prompt  int      // prompt tokens
	tokens  []string // the answer, already cut at max_tokens
	finish  string   // finish reason once every token is out
	arrived time.Time
	out     chan event // buffered for every event of the request, so the scheduler never blocks

	arrivedNS int64    // arrival on the engine clock
	req       *lockReq // its request's place in a lockstep pass; nil outside one
	lockSeq   int      // its request's extractbench.Lockstep.Seq

	admittedOnce bool
	emitted      int // tokens generated so far
	blocks       int // KV blocks held
}

// send hands the handler an event of this sequence.
func (q *seq) send(e event) {
	e.index = q.index
	q.out <- e
}

// context returns the tokens whose KV the sequence holds: prompt plus generated.
func (q *seq) context() int { return q.prompt + q.emitted }

// scheduler is the engine's single scheduling goroutine: continuous
// batching over a paged KV cache, one token per running sequence per step.
type scheduler struct {
	p       Profile
	m       *metrics
	submit  chan submission // one send per request, so a batch is admitted together
	total   int             // KV blocks in the pool
	free    int
	waiting []*seq
	running []*seq
	clock   time.Time // modelled time at the end of the last step
	idle    bool      // the scheduler waited for work since the last step
	prefill int       // tokens to prefill in the coming step
	timer   *time.Timer
	// finished counts the sequences served to their end: what a warming
	// engine (Profile.WarmupRequests) has warmed on.
	finished int64
	// sim is the engine clock (Config.Clock), nil for the wall clock only;
	// passes are the lockstep passes in progress on it.
	sim    ModelClock
	passes map[string]*lockPass
}

func newScheduler(p Profile, m *metrics, sim ModelClock) *scheduler {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &scheduler{p: p, m: m, submit: make(chan submission, 64), total: p.KVBlocks(), free: p.KVBlocks(), timer: t,
		sim: sim, passes: map[string]*lockPass{}}
}

// blocksFor returns the KV blocks that n tokens take.
func (s *scheduler) blocksFor(n int) int {
	return (n + s.p.BlockSize - 1) / s.p.BlockSize
}

// run is the step loop. It returns when ctx is done, failing what is left.
func (s *scheduler) run(ctx context.Context) {
	defer func() {
		left := append(s.running, s.waiting...)
		for {
			select {
			case sub := <-s.submit:
				s.arrive(sub)
				left = append(left, sub.seqs...)
				continue
			default:
			}
			break
		}
		for _, q := range left {
			s.retire(q)
			q.send(event{err: errShuttingDown(), at: s.simNow()})
		}
	}()
	for {
		if len(s.running) == 0 && len(s.waiting) == 0 {
			s.idle = true
			s.m.update(0, 0, s.total-s.free)
			if !s.skipIdle() {
				select {
				case sub := <-s.submit:
					s.accept(sub)
				case <-ctx.Done():
					return
				}
			}
		}
	drain:
		for {
			select {
			case sub := <-s.submit:
				s.accept(sub)
			default:
				break drain
			}
		}
		if !s.awaitPromised(ctx.Done()) {
			return
		}
		if !s.step(ctx) {
			return
		}
	}
}

// step runs one scheduling iteration: free what was abandoned, admit, make
// room, wait the modelled step time, emit one token per running sequence.
// It returns false when ctx ended the wait.
func (s *scheduler) step(ctx context.Context) bool {
	s.reap()
	s.admit()
	s.grow()
	s.m.update(len(s.running), len(s.waiting), s.total-s.free)
	if len(s.running) == 0 {
		return true
	}
	if !s.sleep(ctx, s.stepDuration()) {
		return false
	}
	s.emit()
	s.m.update(len(s.running), len(s.waiting), s.total-s.free)
	return true
}

// reap frees the sequences whose client went away.
func (s *scheduler) reap() {
	keep := func(list []*seq) []*seq {
		out := list[:0]
		for _, q := range list {
			if q.ctx.Err() != nil {
				s.free += q.blocks
				q.blocks = 0
				s.retire(q)
				continue
			}
			out = append(out, q)
		}
		return out
	}
	s.running = keep(s.running)
	s.waiting = keep(s.waiting)
}

// admitBlocks is what a sequence needs to be admitted: its context and the
// token it generates next, or under OnKVFullQueue its whole answer, so that
// it never needs a block later. Room for the next token keeps a sequence
// from being preempted in the step that admitted it.
func (s *scheduler) admitBlocks(q *seq) int {
	if s.p.OnKVFull == OnKVFullQueue {
		return s.blocksFor(q.prompt + len(q.tokens))
	}
	return s.blocksFor(q.context() + 1)
}

// admit moves waiting sequences to running, first come first served, while
// the batch and the KV pool allow. A preempted sequence recomputes its prompt
// and what it had generated.
func (s *scheduler) admit() {
	now := time.Now()
	for len(s.waiting) > 0 && len(s.running) < s.p.MaxRunningSeqs {
		q := s.waiting[0]
		need := s.admitBlocks(q)
		if need > s.total {
			s.waiting = s.waiting[1:]
			s.failOOM(q, fmt.Sprintf("The sequence needs %d KV blocks; the pool holds %d.", need, s.total))
			continue
		}
		if need > s.free {
			break
		}
		s.waiting = s.waiting[1:]
		s.free -= need
		q.blocks = need
		s.running = append(s.running, q)
		s.prefill += q.context()
		if !q.admittedOnce {
			q.admittedOnce = true
			s.m.observe(func(m *metrics) *histogram { return m.queue }, s.since(now, q))
			s.m.add(func(st *Stats) { st.PromptTokens += int64(q.prompt) })
		}
	}
}

// grow gives every running sequence room for the token it generates next.
// When the pool is empty it preempts the most recently admitted sequence
// (OnKVFullPreempt) or fails the one that needs the block (OnKVFullFail).
func (s *scheduler) grow() {
	for i := 0; i < len(s.running); {
		q := s.running[i]
		if s.growOne(q) {
			i++
		}
	}
}

// growOne returns false when q left the running list.
func (s *scheduler) growOne(q *seq) bool {
	need := s.blocksFor(q.context()+1) - q.blocks
	for need > 0 {
		if s.free >= need {
			s.free -= need
			q.blocks += need
			return true
		}
		if s.p.OnKVFull != OnKVFullPreempt {
			s.remove(q)
			s.m.add(func(st *Stats) { st.KVFailures++ })
			s.failOOM(q, fmt.Sprintf("KV cache full: %d of %d blocks in use; the sequence was aborted.", s.total-s.free, s.total))
			return false
		}
		victim := s.running[len(s.running)-1]
		s.running = s.running[:len(s.running)-1]
		s.free += victim.blocks
		victim.blocks = 0
		s.waiting = append([]*seq{victim}, s.waiting...)
		s.m.add(func(st *Stats) { st.Preemptions++ })
		if victim == q {
			return false
		}
	}
	return true
}

func (s *scheduler) remove(q *seq) {
	for i, r := range s.running {
		if r == q {
			s.running = append(s.running[:i], s.running[i+1:]...)
			return
		}
	}
}

func (s *scheduler) failOOM(q *seq, detail string) {
	s.free += q.blocks
	q.blocks = 0
	s.retire(q)
	q.send(event{err: errCUDAOOM(s.p, http.StatusServiceUnavailable, "ServiceUnavailableError", detail), at: s.simNow()})
}

// since is how long q has been in the engine at now: on the engine clock
// when there is one.
func (s *scheduler) since(now time.Time, q *seq) time.Duration {
	if s.sim != nil {
		return time.Duration(s.sim.Now() - q.arrivedNS)
	}
	return now.Sub(q.arrived)
}

// stepDuration is the modelled time of the coming step: prefill of the newly
// admitted tokens plus one decode step whose cost grows with the batch.
func (s *scheduler) stepDuration() time.Duration {
	d := time.Duration(float64(s.prefill)/s.p.PrefillTokensPerSec*float64(time.Second)) +
		s.p.DecodeStepBase + time.Duration(len(s.running))*s.p.DecodeStepPerSeq
	s.prefill = 0
	return time.Duration(float64(d) * s.p.TimeScale * s.p.warmingFactor(s.finished))
}

// maxLag is how far the modelled clock may fall behind the wall clock
// before it is reset: a scheduler starved of CPU catches up in a burst no
// longer than this.
const maxLag = 20 * time.Millisecond

// sleep waits until the modelled clock has advanced by d. The clock is
// absolute, so timer overshoot (a sleep of 250 µs often lasts 1 ms) does not
// accumulate: the next steps run without sleeping until the clock catches up.
func (s *scheduler) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	if s.sim != nil {
		s.sim.Advance(d)
	}
	now := time.Now()
	if s.idle || s.clock.Before(now.Add(-maxLag)) {
		s.clock = now // a new busy period starts now
		s.idle = false
	}
	s.clock = s.clock.Add(d)
	wait := time.Until(s.clock)
	if wait <= 0 {
		return ctx.Err() == nil
	}
	s.timer.Reset(wait)
	select {
	case <-s.timer.C:
		return true
	case <-ctx.Done():
		s.timer.Stop()
		return false
	}
}

// emit hands every running sequence its next token and retires the finished ones.
func (s *scheduler) emit() {
	now := time.Now()
	at := s.simNow()
	keep := s.running[:0]
	generated := 0
	for _, q := range s.running {
		tok := q.tokens[q.emitted]
		q.emitted++
		generated++
		if q.emitted == 1 {
			s.m.observe(func(m *metrics) *histogram { return m.ttft }, s.since(now, q))
		}
		if q.emitted < len(q.tokens) {
			q.send(event{token: tok, at: at})
			keep = append(keep, q)
			continue
		}
		s.retire(q)
		q.send(event{token: tok, finish: q.finish, at: at})
		s.free += q.blocks
		q.blocks = 0
		s.m.observe(func(m *metrics) *histogram { return m.e2e }, s.since(now, q))
		s.m.add(func(st *Stats) { st.RequestsFinished++ })
		s.finished++
	}
	clear(s.running[len(keep):])
	s.running = keep
	s.m.add(func(st *Stats) { st.GenerationTokens += int64(generated) })
}
