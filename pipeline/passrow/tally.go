package passrow

import (
	"cmp"
	"context"
	"slices"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
)

// Tally is what a pass's rows add up to. The run feeds it each record as
// it is stored (Account.NewTally, Tally.Add, Account.Finish), keeping 48
// bytes a request for the order statistics; a resumed run reads the
// stored rows once into one (Account.ReadPass), the merge every pass's in
// one read (Account.NewTallies). Account.TallyPass
// makes the same figures, bit for bit (TestTally_AddIsTallyPass), from
// the rows read one at a time (results.Store.EachPassRecord) and the order
// statistics SQLite computes (results.Store.PassOrderStats), where nothing
// grows with the pass's size but the handful of resume segments: the
// reference the fed tallies are checked against.
type Tally struct {
	acc                                                    eval.PassAccumulator
	order                                                  results.PassOrderStats
	docs, outTokens, promptTokens, usage, onTime, onTimeOK int64
	tokens                                                 tokenTally
	cache                                                  cacheTally               // prompt cache (promptcache.go)
	drift                                                  extractbench.PromptDrift // tokenizer drift (DriftReference), from SQLite
	sched, send                                            instantSpan
	segments                                               [][]segment      // activeSpan's: by shard (one for a run), one per resume boundary
	endpoints                                              map[string]int64 // requests per replica (a few keys); the variant's replicas start at 0
	trend                                                  eval.Trend       // the first block of requests against the others (eval/steady.go)
	live                                                   *requestTimes    // fed by Add until Finish (live.go); nil for TallyPass
}

// Docs is how many request rows the pass holds.
func (t *Tally) Docs() int64 { return t.docs }

// MaxInFlight is the most requests of the pass that were in flight at
// once (results.PassOrderStats.MaxInFlight): its sent concurrency's
// measure.
func (t *Tally) MaxInFlight() int64 { return t.order.MaxInFlight }

// segment is the first t_send and last t_done of the requests sent in
// [lo, hi) of one invocation of the run.
type segment struct{ lo, hi, first, last int64 }

// TallyPass reads the pass's rows back from the store, its figures that
// need every request at once computed by SQLite; endpoints are the
// variant's replicas, so that one that answered nothing counts 0.
func (a *Account) TallyPass(ctx context.Context, key extractbench.PassKey, endpoints []string) (*Tally, error) {
	t := a.newTally(endpoints)
	err := a.Store.EachPassRecord(ctx, key, func(r *extractbench.Record) {
		t.add(r)
		if tallyRowHook != nil {
			tallyRowHook(t.docs)
		}
	})
	if err != nil {
		return nil, err
	}
	if t.order, err = a.Store.PassOrderStats(ctx, key); err != nil {
		return t, err
	}
	reference, _ := a.DriftReference(key.Variant)
	if t.drift, err = a.Store.PassPromptDrift(ctx, key, reference); err != nil {
		return t, err
	}
	// The steady-state test leaves out the first wave and the drain: the
	// first and last sends of as many requests as were in flight at once.
	if a.Merged != nil {
		// A merged pass's requests come from shards that ran apart, each
		// with its own start: its first block is not one engine's.
		return t, nil
	}
	blocks, err := a.Store.PassSteadyBlocks(ctx, key, t.order.MaxInFlight)
	t.trend = eval.TrendOf(blocks)
	return t, err
}

// NewTally is an empty tally of one pass that the run feeds each of its
// records as the store takes it (Add), then completes with Finish: no row
// is read back. endpoints are the variant's replicas, as TallyPass's; n is
// how many records are expected (room is made for them at once).
//
// Its order statistics break ties of send instants by the order records
// were added, which must be the order they were stored in (the rowid
// order TallyPass's queries use): a pass whose rows a resumed run adds to
// (an unmeasured row sent again keeps its rowid) is tallied by TallyPass.
func (a *Account) NewTally(endpoints []string, n int) *Tally {
	t := a.newTally(endpoints)
	t.live = &requestTimes{ts: make([]timing, 0, n)}
	return t
}

// Add counts one record of the pass as the store keeps it; an unmeasured
// one (extractbench.TransportKind.Measured) is no row of the pass's, as
// TallyPass reads them.
func (t *Tally) Add(r *extractbench.Record) {
	if !r.Kind.Measured() {
		return
	}
	t.add(r)
	t.live.add(r)
}

// Finish completes a tally NewTally began, once the pass's records are
// added: the order statistics, steady-state blocks and prompt drift that
// TallyPass reads from SQLite are computed from what Add kept, which is
// then let go. A variant whose expected prompt counts are filled from
// another variant's rows after the pass (results.Store.FillExpectedPromptTokens)
// has its drift read from the store: the records fed had none.
func (a *Account) Finish(ctx context.Context, key extractbench.PassKey, t *Tally) error {
	reference, refVariant := a.DriftReference(key.Variant)
	drift := t.live.drift.figure(reference)
	if refVariant != "" {
		var err error
		if drift, err = a.Store.PassPromptDrift(ctx, key, reference); err != nil {
			return err
		}
	}
	a.complete(t, drift)
	return nil
}

// ReadPass is TallyPass in one read: the pass's stored rows, in the order
// they were stored, without their long texts (results.Store.EachPassFigures:
// no figure reads them), fed to a tally (NewTally, Add) and completed as Finish
// does, with the drift of the rows as stored. It holds 48 bytes a request
// where TallyPass holds nothing, and spends a quarter of its CPU on a
// run's pass, two fifths on a merged one (BenchmarkReadPass): SQLite's
// sorts and window functions scan the pass some ten times. A resumed run
// tallies its passes with it; the merge, every pass in the read that
// exports them (Tallies).
func (a *Account) ReadPass(ctx context.Context, key extractbench.PassKey, endpoints []string) (*Tally, error) {
	t := a.NewTally(endpoints, 0)
	if err := a.Store.EachPassFigures(ctx, key, t.Add); err != nil {
		return nil, err
	}
	a.completeRead(key.Variant, t)
	return t, nil
}

// completeRead completes a tally of stored rows, as Finish does, with the
// drift of the rows as stored.
func (a *Account) completeRead(variant string, t *Tally) {
	reference, _ := a.DriftReference(variant)
	a.complete(t, t.live.drift.figure(reference))
}

// complete computes the figures of a fed tally that need every request
// (live.go) and lets its requests go.
func (a *Account) complete(t *Tally, drift extractbench.PromptDrift) {
	l := t.live
	t.live = nil
	t.order, t.drift = l.orderStats(), drift
	if a.Merged == nil { // as TallyPass: a merged pass has no one engine's first block
		t.trend = eval.TrendOf(eval.SteadyBlocksOf(l.steady(), t.order.MaxInFlight))
	}
}

// newTally is an empty tally with the run's segments: one per invocation
// (the first, then each resume); in a merge, those of every shard.
func (a *Account) newTally(endpoints []string) *Tally {
	t := &Tally{endpoints: make(map[string]int64, len(endpoints))}
	for _, e := range endpoints {
		t.endpoints[e] = 0
	}
	segments := func(resumes []int64) []segment {
		bounds := append([]int64{0}, resumes...)
		out := make([]segment, len(bounds))
		for i, lo := range bounds {
			hi := int64(1<<63 - 1)
			if i+1 < len(bounds) {
				hi = bounds[i+1]
			}
			out[i] = segment{lo: lo, hi: hi}
		}
		return out
	}
	if a.Merged == nil {
		t.segments = [][]segment{segments(a.Resumes)}
		return t
	}
	for i := range a.Merged.Count { // each shard's process had its own resumes, shifted onto the merged clock
		t.segments = append(t.segments, segments(a.Merged.Resumes[i]))
	}
	return t
}

// tallyRowHook, set by a test only, runs after each row TallyPass reads (to
// sample the live heap while a pass streams through).
var tallyRowHook func(rows int64)

// add counts one record.
func (t *Tally) add(r *extractbench.Record) {
	t.acc.Add(r)
	t.docs++
	if r.OnTime == nil || *r.OnTime {
		t.onTime++
		if r.Accepted {
			t.onTimeOK++
		}
	}
	// A record's usage was checked when it was made
	// (eval.RefuseImpossibleUsage); one stored by an older build
	// may still hold an impossible count, which is not summed.
	// A prompt the engine refused (its n_prompt_tokens kept without usage)
	// was never prefilled: it is not the pass's prompt throughput.
	if r.UsageReported && eval.PlausibleTokens(r.PromptTokens) {
		t.promptTokens += int64(r.PromptTokens)
	}
	if eval.PlausibleTokens(r.CompletionTokens) {
		t.outTokens += int64(r.CompletionTokens)
	}
	if r.UsageReported {
		t.usage++
	}
	t.tokens.add(r)
	t.cache.add(r)
	t.sched.add(r.SchedNS)
	t.send.add(r.SendNS)
	if r.Endpoint != "" {
		t.endpoints[r.Endpoint]++
	}
	segs := t.segments[0]
	if len(t.segments) > 1 {
		segs = t.segments[extractbench.ShardOf(r.DocID, len(t.segments))]
	}
	for i := range segs {
		g := &segs[i]
		if r.SendNS <= 0 || r.SendNS < g.lo || r.SendNS >= g.hi {
			continue
		}
		if g.first == 0 || r.SendNS < g.first {
			g.first = r.SendNS
		}
		g.last = max(g.last, r.DoneNS)
	}
}

// instantSpan is the earliest and latest of a pass's instants of one kind
// (planned arrivals, sends) and how many there were; 0 is never recorded.
type instantSpan struct{ lo, hi, n int64 }

func (s *instantSpan) add(t int64) {
	if t <= 0 {
		return
	}
	if s.n == 0 || t < s.lo {
		s.lo = t
	}
	s.hi = max(s.hi, t)
	s.n++
}

// perSecond is the span's rate, (instants − 1) over the span from the first
// to the last, since n instants hold n − 1 gaps; nil under 2 instants. It is
// a pass's offered rate (rate mode: its planned arrivals) or its achieved
// send rate.
func (s *instantSpan) perSecond() *float64 {
	if s.n < 2 || s.hi <= s.lo {
		return nil
	}
	return ptr(float64(s.n-1) / (float64(s.hi-s.lo) / 1e9))
}

// activeSpan is first t_send to last t_done; for a pass cut by an
// interruption it sums the spans of each segment, so that the time the
// tool was down is not counted as pass duration.
func (t *Tally) activeSpan() (first, last, dur int64) {
	var ivs [][2]int64
	for _, segs := range t.segments {
		for _, g := range segs {
			if g.first != 0 {
				ivs = append(ivs, [2]int64{g.first, g.last})
			}
		}
	}
	return unionSpan(ivs)
}

// unionSpan is the first start, the last end and the length of the union
// of intervals: one process's segments do not overlap (a resume starts
// after the interrupted attempt's last request ended), so their lengths add
// up; a merge's shards ran at the same time, so their common time counts
// once and their throughput adds up.
func unionSpan(ivs [][2]int64) (first, last, dur int64) {
	if len(ivs) == 0 {
		return 0, 0, 0
	}
	slices.SortFunc(ivs, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	first, last = ivs[0][0], ivs[0][1]
	lo, hi := ivs[0][0], ivs[0][1]
	for _, iv := range ivs[1:] {
		last = max(last, iv[1])
		if iv[0] > hi {
			dur += hi - lo
			lo, hi = iv[0], iv[1]
			continue
		}
		hi = max(hi, iv[1])
	}
	return first, last, dur + hi - lo
}
