package builtin

import (
	"net/http"
	"slices"
	"time"

	"github.com/extractbench/extractbench"
)

// The engine clock (Config.Clock): the engine's modelled time, on which a
// run against it measures every latency, so that the host's scheduler moves
// none of its figures. Two things make a pass on it deterministic whatever
// the host does:
//
//   - the clock moves only by modelled work (a step's modelled duration),
//     never while the engine waits, so a stalled client or host is not on it;
//   - lockstep: the engine does not step while a request the client has
//     promised is still on its way (LockstepHeader says which pass and what
//     it promises). Until it has arrived the engine waits, off its clock,
//     so that the batch each step runs is the same on every host.
//
// A closed-loop pass keeping Level requests of N in flight has sent, by the
// time F of them have finished, min(N, Level + F) of them: a request sent
// the instant its slot freed arrives at that instant on the engine clock.
// A rate pass plans its arrivals: each request carries its planned instant
// (At), which the engine takes as its arrival, and the next request's
// (Next), which the engine does not step past until that request has come.
// An idle engine's clock jumps to the next planned arrival, as the client,
// waiting on the engine clock for that instant, then sends the request.
//
// Each answer carries its instants on the engine clock (EngineClockHeader:
// arrival, first and last token of each choice, done), which the client
// records in place of its own readings.

// ModelClock is the clock the engine's modelled time runs on
// (extractbench.EngineClock satisfies it).
type ModelClock interface {
	Now() int64
	Advance(d time.Duration) int64
}

// LockstepPatience is how long, on the wall clock, the engine waits for a
// promised request before it gives up on the pass's lockstep (a client
// that stopped sending: interrupted, or its engine declared dead) and steps
// on; the pass's later figures then carry the host's timing.
const LockstepPatience = 2 * time.Second

// lockPass is the scheduler's account of one pass in lockstep.
type lockPass struct {
	extractbench.Lockstep
	arrived, finished int
	gaveUp            bool // LockstepPatience ran out: the pass is no longer waited for
	// A rate pass's: which of its requests have arrived, the planned
	// arrivals known so far (0: not yet), and its first request that has
	// not arrived.
	in      []bool
	planned []int64
	first   int
}

func newLockPass(l extractbench.Lockstep) *lockPass {
	p := &lockPass{Lockstep: l}
	if l.Rate() {
		p.in, p.planned = make([]bool, l.N), make([]int64, l.N)
	}
	return p
}

// owed reports whether a request the client has promised by now, on the
// engine clock, has not arrived. A rate pass's first request that has not
// arrived is owed from its planned arrival on, or at once while that is
// not known (a later request came first).
func (p *lockPass) owed(now int64) bool {
	switch {
	case p.gaveUp:
		return false
	case p.Rate():
		return p.first < p.N && p.planned[p.first] <= now
	default:
		return p.arrived < min(p.N, p.Level+p.finished)
	}
}

// nextArrival is the planned arrival of a rate pass's first request that
// has not arrived; false when there is none, or it is not known.
func (p *lockPass) nextArrival() (int64, bool) {
	if p.gaveUp || !p.Rate() || p.first >= p.N || p.planned[p.first] == 0 {
		return 0, false
	}
	return p.planned[p.first], true
}

// arrivedRate notes a rate pass's request l: it is in, and the planned
// arrival of the one after it is known.
func (p *lockPass) arrivedRate(l extractbench.Lockstep) {
	if l.Seq < 0 || l.Seq >= p.N {
		return // not a request of this pass's schedule: nothing to wait for
	}
	p.in[l.Seq], p.planned[l.Seq] = true, l.At
	if l.Seq+1 < p.N && l.Next > 0 {
		p.planned[l.Seq+1] = l.Next
	}
	for p.first < p.N && p.in[p.first] {
		p.first++
	}
}

// lockReq is one request of a pass in the scheduler: it finishes when the
// last of its sequences leaves.
type lockReq struct {
	pass *lockPass
	left int
}

// submission is what a request hands the scheduler: its sequences (none for
// a request the handler refused, which still counts in its pass), and its
// pass.
type submission struct {
	seqs []*seq
	lock extractbench.Lockstep
	// arrived receives the request's arrival instant on the engine clock
	// once the scheduler has taken it in (buffered; nil when not wanted).
	arrived chan int64
}

// arrive takes a submission in: its arrival on the engine clock (a rate
// pass's planned instant, which the clock has reached), and its place in
// its pass.
func (s *scheduler) arrive(sub submission) {
	now := arrivalOf(sub.lock, s.simNow())
	for _, q := range sub.seqs {
		q.arrivedNS = now
	}
	if sub.arrived != nil {
		sub.arrived <- now
	}
	if sub.lock.Pass == "" || s.sim == nil {
		return
	}
	p := s.passes[sub.lock.Pass]
	if p == nil {
		p = newLockPass(sub.lock)
		s.passes[sub.lock.Pass] = p
	}
	p.arrived++
	if p.Rate() {
		p.arrivedRate(sub.lock)
	}
	if len(sub.seqs) == 0 {
		s.finish(p)
		return
	}
	r := &lockReq{pass: p, left: len(sub.seqs)}
	for _, q := range sub.seqs {
		q.req, q.lockSeq = r, sub.lock.Seq
	}
}

// arrivalOf is the arrival on the engine clock, read now, of a request of
// pass l: a rate pass's planned instant, which the clock has reached (the
// client waits on it before it sends), or now.
func arrivalOf(l extractbench.Lockstep, now int64) int64 {
	if l.Rate() {
		return min(now, l.At)
	}
	return now
}

// retire notes that q left the scheduler (finished, failed or abandoned).
func (s *scheduler) retire(q *seq) {
	r := q.req
	q.req = nil
	if r == nil {
		return
	}
	if r.left--; r.left == 0 {
		s.finish(r.pass)
	}
}

func (s *scheduler) finish(p *lockPass) {
	p.finished++
	if p.finished >= p.N {
		delete(s.passes, p.Pass)
	}
}

// owed reports whether any pass still owes a promised request.
func (s *scheduler) owed() bool {
	now := s.simNow()
	for _, p := range s.passes {
		if p.owed(now) {
			return true
		}
	}
	return false
}

// skipIdle moves an idle engine's clock on to the next planned arrival of
// a rate pass (idle time is not modelled work); the request is then owed,
// and awaitPromised waits for it. It reports whether there was one.
func (s *scheduler) skipIdle() bool {
	if s.sim == nil {
		return false
	}
	next, found := int64(0), false
	for _, p := range s.passes {
		if at, ok := p.nextArrival(); ok && (!found || at < next) {
			next, found = at, true
		}
	}
	if found {
		s.sim.Advance(time.Duration(next - s.sim.Now()))
	}
	return found
}

// awaitPromised takes in submissions until no pass owes a request. A pass
// whose request does not come within LockstepPatience is given up. It
// returns false when ctx ended the wait.
func (s *scheduler) awaitPromised(done <-chan struct{}) bool {
	if s.sim == nil || !s.owed() {
		return true
	}
	patience := time.NewTimer(LockstepPatience)
	defer patience.Stop()
	for s.owed() {
		select {
		case sub := <-s.submit:
			s.accept(sub)
		case <-patience.C:
			now := s.simNow()
			for _, p := range s.passes {
				if p.owed(now) {
					p.gaveUp = true
					s.m.add(func(st *Stats) { st.LockstepExpired++ })
				}
			}
		case <-done:
			return false
		}
	}
	return true
}

// accept queues a submission's sequences: behind those already waiting,
// except that sequences of one lockstep pass queue in the order of their
// arrivals on the engine clock, and of one arrival in the pass's send
// order, not in the order the host happened to deliver them.
func (s *scheduler) accept(sub submission) {
	s.arrive(sub)
	for _, q := range sub.seqs {
		i := len(s.waiting)
		for i > 0 && queuedAfter(s.waiting[i-1], q) {
			i--
		}
		s.waiting = slices.Insert(s.waiting, i, q)
	}
}

// queuedAfter reports whether w, waiting, belongs behind q, arriving: both
// of one lockstep pass, w never admitted, and w arrived later on the engine
// clock or at the same instant but later in the send order.
func queuedAfter(w, q *seq) bool {
	if q.req == nil || w.req == nil || w.req.pass != q.req.pass || w.admittedOnce {
		return false
	}
	return w.arrivedNS > q.arrivedNS || (w.arrivedNS == q.arrivedNS && w.lockSeq > q.lockSeq)
}

// simNow is the engine clock's reading (0 without one).
func (s *scheduler) simNow() int64 {
	if s.sim == nil {
		return 0
	}
	return s.sim.Now()
}

// setInstantsHeader puts in on h under EngineClockHeader.
func setInstantsHeader(h http.Header, in extractbench.EngineInstants) {
	h.Set(extractbench.EngineClockHeader, in.String())
}

// lockstep is the request's LockstepHeader, read only on the engine clock.
func (s *Server) lockstep(r *http.Request) extractbench.Lockstep {
	if s.cfg.Clock == nil {
		return extractbench.Lockstep{}
	}
	l, _ := extractbench.ParseLockstep(r.Header.Get(extractbench.LockstepHeader))
	return l
}

// notice tells the scheduler that a request of a lockstep pass arrived and
// was answered without it (refused), so that the pass still counts it; it
// reports whether the engine runs on its clock.
func (s *Server) notice(r *http.Request) bool {
	if s.cfg.Clock == nil {
		return false
	}
	if l := s.lockstep(r); l.Pass != "" {
		select {
		case s.sched.submit <- submission{lock: l}:
		case <-r.Context().Done():
		case <-s.done:
		}
	}
	return true
}

// refuse answers a request with e, counted in its lockstep pass and
// stamped on the engine clock.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, e *apiError) {
	if s.notice(r) {
		now := s.cfg.Clock.Now()
		setInstantsHeader(w.Header(), extractbench.EngineInstants{Arrived: arrivalOf(s.lockstep(r), now), Done: now})
	}
	writeError(w, e)
}

// clockNotes gathers one answer's instants on the engine clock as its
// events go by. A nil *clockNotes does nothing.
type clockNotes struct {
	clock       ModelClock
	seqs        []*seq
	first, last []int64
	done        int64
}

func newClockNotes(c ModelClock, seqs []*seq) *clockNotes {
	return &clockNotes{clock: c, seqs: seqs, first: make([]int64, len(seqs)), last: make([]int64, len(seqs))}
}

func (n *clockNotes) note(e event) {
	if n == nil || e.at == 0 {
		return
	}
	n.done = e.at
	if e.err == nil && e.index < len(n.first) {
		if n.first[e.index] == 0 {
			n.first[e.index] = e.at
		}
		n.last[e.index] = e.at
	}
}

// declare announces the trailer of a streamed answer; call before its header is written.
func (n *clockNotes) declare(h http.Header) {
	if n != nil {
		h.Set("Trailer", extractbench.EngineClockHeader)
	}
}

// header sets the instants: a header before the answer is written, or the
// declared trailer after.
func (n *clockNotes) header(h http.Header) {
	if n == nil {
		return
	}
	in := extractbench.EngineInstants{Done: n.done, First: n.first, Last: n.last}
	for _, q := range n.seqs {
		if in.Arrived == 0 || (q.arrivedNS > 0 && q.arrivedNS < in.Arrived) {
			in.Arrived = q.arrivedNS
		}
	}
	if in.Done == 0 {
		in.Done = n.clock.Now()
	}
	if in.Arrived == 0 {
		in.Arrived = in.Done
	}
	setInstantsHeader(h, in)
}
