package passrow

import (
	"slices"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
)

// requestTimes is what a tally fed as the records arrive (Account.NewTally)
// keeps of each measured request for the figures that need every request
// at once: the order statistics SQLite computes for TallyPass
// (results.Store.PassOrderStats), the steady-state blocks
// (results.Store.PassSteadyBlocks) and the prompt drift's median
// (results.Store.PassPromptDrift). One timing of 48 bytes a request, in
// the order the records were stored (the rowid order the store's queries
// break send-instant ties by), instead of the whole rows read back.
type requestTimes struct {
	ts       []timing
	classes  []string // length classes, by timing.class
	accepted int      // requests with an accepted row (PassOrderStats.Recovered)
	drift    driftTally
}

// timing is one measured request's instants; tpot is its TPOT (ns) or -1
// where it has none (its value is never negative).
type timing struct {
	sched, send, first, done, tpot int64
	class                          uint16
}

func (l *requestTimes) add(r *extractbench.Record) {
	if r.Accepted {
		l.accepted++
	}
	l.drift.add(r)
	tm := timing{sched: r.SchedNS, send: r.SendNS, first: r.FirstTokenNS, done: r.DoneNS, tpot: -1, class: l.class(r.LengthClass)}
	if v, ok := r.TPOT(); ok {
		tm.tpot = v
	}
	l.ts = append(l.ts, tm)
}

// class is c's index in l.classes, added on first sight (a corpus has a
// handful of length classes).
func (l *requestTimes) class(c string) uint16 {
	if i := slices.Index(l.classes, c); i >= 0 {
		return uint16(i)
	}
	l.classes = append(l.classes, c)
	return uint16(len(l.classes) - 1)
}

// latencies are PassOrderStats' latencies, each with its definition over
// one request's instants (results' passLatencies, in Go): the list the
// order statistics are made from, so that none is left out.
var latencies = []struct {
	of    func(*results.PassOrderStats) *eval.Distribution
	value func(*timing) (int64, bool)
}{
	{func(o *results.PassOrderStats) *eval.Distribution { return &o.TTFT }, func(t *timing) (int64, bool) { return extractbench.Span(t.send, t.first) }},
	{func(o *results.PassOrderStats) *eval.Distribution { return &o.TTFTSched }, func(t *timing) (int64, bool) { return extractbench.Span(t.sched, t.first) }},
	{func(o *results.PassOrderStats) *eval.Distribution { return &o.E2E }, func(t *timing) (int64, bool) { return extractbench.Span(t.send, t.done) }},
	{func(o *results.PassOrderStats) *eval.Distribution { return &o.E2ESched }, func(t *timing) (int64, bool) { return extractbench.Span(t.sched, t.done) }},
	{func(o *results.PassOrderStats) *eval.Distribution { return &o.Queue }, func(t *timing) (int64, bool) { return extractbench.Span(t.sched, t.send) }},
	{func(o *results.PassOrderStats) *eval.Distribution { return &o.TPOT }, func(t *timing) (int64, bool) { return t.tpot, t.tpot >= 0 }},
}

// orderStats is PassOrderStats of the requests: each latency's values
// sorted as integers and read in ascending order, as SQLite's ORDER BY
// hands them to eval.SortedDistribution, so that the figures are the same
// float64s.
func (l *requestTimes) orderStats() results.PassOrderStats {
	st := results.PassOrderStats{UniqueDocs: len(l.ts), Recovered: l.accepted}
	scratch := make([]int64, 0, len(l.ts))
	for _, lat := range latencies {
		scratch = scratch[:0]
		for i := range l.ts {
			if v, ok := lat.value(&l.ts[i]); ok {
				scratch = append(scratch, v)
			}
		}
		slices.Sort(scratch)
		s := eval.NewSortedDistribution(len(scratch))
		for _, v := range scratch {
			s.Add(float64(v))
		}
		*lat.of(&st), _ = s.Distribution() // as many values as announced, in order
	}
	st.MaxInFlight = l.maxInFlight(scratch)
	return st
}

// inFlight reports whether t counts in flight and in the steady-state
// test: it has a send and a done instant, in that order.
func (t *timing) inFlight() bool { return t.send > 0 && t.done >= t.send }

// maxInFlight is results' maxInFlight over the requests: sends and dones in
// time order, a done before a send at the same instant. scratch is reused.
func (l *requestTimes) maxInFlight(scratch []int64) int64 {
	sends := scratch[:0]
	var dones []int64
	for i := range l.ts {
		if t := &l.ts[i]; t.inFlight() {
			sends = append(sends, t.send)
			dones = append(dones, t.done)
		}
	}
	slices.Sort(sends)
	slices.Sort(dones)
	var cur, peak int64
	j := 0
	for _, s := range sends {
		for j < len(dones) && dones[j] <= s {
			cur--
			j++
		}
		cur++
		peak = max(peak, cur)
	}
	return peak
}

// steady are the requests of the steady-state test (eval.SteadyBlocksOf)
// in the order they were stored, which its stable sort keeps for equal
// send instants, as SQL's ORDER BY send_ns, rowid does.
func (l *requestTimes) steady() []eval.SteadyRequest {
	var out []eval.SteadyRequest
	for i := range l.ts {
		if t := &l.ts[i]; t.inFlight() {
			out = append(out, eval.SteadyRequest{Class: l.classes[t.class], SendNS: t.send, E2ENS: t.done - t.send})
		}
	}
	return out
}

// driftTally is eval.DriftOf one record at a time: the requests compared
// and the relative differences of those that drifted (a few, or none).
type driftTally struct {
	compared int64
	rels     []float64
}

func (d *driftTally) add(r *extractbench.Record) {
	rel, drifted, ok := eval.Drift(r)
	if !ok {
		return
	}
	d.compared++
	if drifted {
		d.rels = append(d.rels, rel)
	}
}

// figure is eval.DriftOf's PromptDrift of the requests added.
func (d *driftTally) figure(reference string) extractbench.PromptDrift {
	var out extractbench.PromptDrift
	if d.compared == 0 {
		return out
	}
	compared, n := d.compared, int64(len(d.rels))
	out.Reference, out.Compared, out.Docs = reference, &compared, &n
	if n == 0 {
		return out
	}
	slices.Sort(d.rels)
	med, mx := eval.MedianSorted(d.rels), d.rels[0]
	if last := d.rels[n-1]; abs(last) >= abs(mx) { // the largest in size, the positive one of a tie
		mx = last
	}
	out.Median, out.Max = &med, &mx
	return out
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
