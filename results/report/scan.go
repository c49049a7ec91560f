package report

import (
	"cmp"
	"context"
	"slices"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
)

// The report reads a series' requests without holding them: one scan of
// each complete pass feeds the counts (length classes, failed documents,
// field quality) and the pooled and per-class latencies (each level's E2E
// and TTFT values, sorted in Go once the level's passes are read: the
// passes are scanned level by level); each replica's E2E is sorted by
// SQLite; the slowest documents come from one scan of the read level
// ordered by document; the changed answers from a join. What stays in
// memory is what the report shows, a map of the documents of one pass (how
// often each ran) and the two latencies of one level's requests (16 bytes
// a request), never the run's rows.

// seriesRows is what the report shows of one series' requests.
type seriesRows struct {
	// PooledE2E is each level's E2E over every request of every complete
	// repetition, for the detail tables (its n and maximum).
	PooledE2E map[int]eval.Distribution
	// Changed lists the answers that differ from level 1's (batch invariance).
	Changed []changedDoc
	// Classes is every level of complete passes split by length class (byClass).
	Classes []classRow
	// Failed are the documents that failed in a complete pass, by id,
	// without their text's excerpt (failed adds it).
	Failed []failedDoc
	// Slowest are the slowestDocs slowest documents at the read level,
	// slowest first, without their text's excerpt (slowest adds it).
	Slowest []slowDoc
	// Fields tallies each level's complete passes for the field tables;
	// FieldsByClass the read level's per length class. A level or class
	// without a record is absent.
	Fields        map[int]eval.PassTally
	FieldsByClass map[string]eval.PassTally
	// Endpoints counts the series' requests per replica, for a variant of
	// several (nil otherwise): the manifest's endpoints first.
	Endpoints []endpointCount
}

// scanSeries reads what the report shows of series es's requests.
func scanSeries(ctx context.Context, rd *results.Reader, run *results.RunData, es eval.Series) (*seriesRows, error) {
	out := &seriesRows{Fields: map[int]eval.PassTally{}, FieldsByClass: map[string]eval.PassTally{}}
	sel := results.Selection{RunID: run.Run.RunID, Variant: es.Variant, Mode: es.Mode, Passes: [][2]int{}}
	for _, p := range run.Passes {
		k := [2]int{p.Level, p.Repetition}
		if p.Variant == es.Variant && p.Mode == es.Mode && p.Complete() && !slices.Contains(sel.Passes, k) {
			sel.Passes = append(sel.Passes, k)
		}
	}
	lv := readLevelOf(es.Recommendation, es.Levels)
	c := newCounter(lv)
	// Level by level (a level's passes in the run's order, so that each
	// level's records arrive as before), each level's latencies summed up
	// before the next one's are read.
	byLevel := slices.Clone(sel.Passes)
	slices.SortStableFunc(byLevel, func(a, b [2]int) int { return cmp.Compare(a[0], b[0]) })
	for i, k := range byLevel {
		key := extractbench.PassKey{RunID: sel.RunID, Variant: sel.Variant, Mode: sel.Mode, Level: k[0], Repetition: k[1]}
		if err := rd.EachPassOutcome(ctx, key, c.add); err != nil {
			return nil, err
		}
		if i+1 == len(byLevel) || byLevel[i+1][0] != k[0] {
			if err := c.lat.summarize(k[0]); err != nil {
				return nil, err
			}
		}
	}
	out.Failed = c.failedDocs()
	for l, a := range c.fields {
		out.Fields[l] = a.Tally(0, 0, nil) // the field tables read counts and ratios, not distinct documents
	}
	for class, a := range c.fieldsByClass {
		out.FieldsByClass[class] = a.Tally(0, 0, nil)
	}

	out.PooledE2E = c.lat.pooledE2E
	out.Classes = classRows(c.classes, c.lat.ttft, c.lat.e2e)
	var err error
	if out.Slowest, err = slowestAt(ctx, rd, sel, lv); err != nil {
		return nil, err
	}
	if out.Changed, err = changedOf(ctx, rd, sel); err != nil {
		return nil, err
	}
	if eps := run.Manifest.Variant(es.Variant).Engine.Endpoints; len(eps) >= 2 {
		if out.Endpoints, err = endpointsOf(ctx, rd, sel, eps); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// classKey is one length class at one level.
type classKey struct {
	level int
	class string
}

// counter counts a series' complete passes one record at a time.
type counter struct {
	readLevel     int
	classes       map[classKey]*classRow
	ran           map[string]int // passes each document ran in
	failed        map[string]*failedDoc
	firsts        map[string]requestRow // each failed document's first failure (lowest level, repetition)
	fields        map[int]*eval.PassAccumulator
	fieldsByClass map[string]*eval.PassAccumulator
	lat           latencyTally
}

func newCounter(readLevel int) *counter {
	return &counter{readLevel: readLevel, classes: map[classKey]*classRow{}, ran: map[string]int{}, failed: map[string]*failedDoc{},
		firsts: map[string]requestRow{}, fields: map[int]*eval.PassAccumulator{}, fieldsByClass: map[string]*eval.PassAccumulator{},
		lat: latencyTally{ttft: map[results.Group]eval.Distribution{}, e2e: map[results.Group]eval.Distribution{}, pooledE2E: map[int]eval.Distribution{}}}
}

func (c *counter) add(rec *extractbench.Record) {
	r := requestRowOf(*rec)
	k := classKey{r.Level, r.LengthClass}
	row := c.classes[k]
	if row == nil {
		row = &classRow{Level: r.Level, Class: r.LengthClass}
		c.classes[k] = row
	}
	row.Docs++
	if r.Accepted {
		row.Accepted++
	}
	row.Failures.Add(extractbench.Failure(r.Failure), 1)
	c.lat.add(r)

	accumulator(c.fields, r.Level).Add(rec)
	if r.Level == c.readLevel {
		accumulator(c.fieldsByClass, r.LengthClass).Add(rec)
	}

	c.ran[r.DocID]++
	if r.Accepted || r.Failure == "" {
		return
	}
	f := c.failed[r.DocID]
	if f == nil {
		f = &failedDoc{DocID: r.DocID, LengthClass: r.LengthClass, Classes: map[string]int{}}
		c.failed[r.DocID] = f
	}
	f.Failed++
	f.Classes[r.Failure]++
	if !slices.Contains(f.Levels, r.Level) {
		f.Levels = append(f.Levels, r.Level)
	}
	first, seen := c.firsts[r.DocID]
	if !seen || r.Level < first.Level || (r.Level == first.Level && r.Repetition < first.Repetition) {
		c.firsts[r.DocID] = r
	}
}

func accumulator[K comparable](m map[K]*eval.PassAccumulator, k K) *eval.PassAccumulator {
	a := m[k]
	if a == nil {
		a = &eval.PassAccumulator{}
		m[k] = a
	}
	return a
}

// failedDocs are the failed documents by id, each with its first failure.
func (c *counter) failedDocs() []failedDoc {
	out := make([]failedDoc, 0, len(c.failed))
	for id, f := range c.failed {
		first := c.firsts[id]
		f.Passes = c.ran[id]
		slices.Sort(f.Levels)
		f.Class, f.Reason = first.Failure, first.FailureDetail
		f.Output = excerpt(first.Output)
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b failedDoc) int { return cmp.Compare(a.DocID, b.DocID) })
	return out
}

// latencyTally sums up the TTFT and E2E of the requests counted, by level
// and length class, and E2E by level, as results.Reader.LatencyGroups does
// from SQLite's sorted reads, bit for bit: the values of one level, held
// as integers until the level's passes are read, sorted in ascending order
// and streamed through eval.SortedDistribution. A group where a latency is
// never defined is absent.
type latencyTally struct {
	ttftOf, e2eOf map[string][]int64 // the level being read's, by length class
	ttft, e2e     map[results.Group]eval.Distribution
	pooledE2E     map[int]eval.Distribution
}

func (l *latencyTally) add(r requestRow) {
	if l.ttftOf == nil {
		l.ttftOf, l.e2eOf = map[string][]int64{}, map[string][]int64{}
	}
	if r.TTFT != nil {
		l.ttftOf[r.LengthClass] = append(l.ttftOf[r.LengthClass], *r.TTFT)
	}
	if r.E2E != nil {
		l.e2eOf[r.LengthClass] = append(l.e2eOf[r.LengthClass], *r.E2E)
	}
}

// summarize makes the distributions of level's values, added since the
// last summarize, and lets them go.
func (l *latencyTally) summarize(level int) error {
	var pooled []int64
	for class, vs := range l.e2eOf {
		pooled = append(pooled, vs...)
		d, err := sortedDistribution(vs)
		if err != nil {
			return err
		}
		l.e2e[results.Group{Level: level, LengthClass: class}] = d
	}
	for class, vs := range l.ttftOf {
		d, err := sortedDistribution(vs)
		if err != nil {
			return err
		}
		l.ttft[results.Group{Level: level, LengthClass: class}] = d
	}
	if len(pooled) > 0 {
		d, err := sortedDistribution(pooled)
		if err != nil {
			return err
		}
		l.pooledE2E[level] = d
	}
	l.ttftOf, l.e2eOf = nil, nil
	return nil
}

// sortedDistribution is the Distribution of vs (sorted in place), made as
// from SQLite's ORDER BY: the integers in ascending order, as float64s.
func sortedDistribution(vs []int64) (eval.Distribution, error) {
	slices.Sort(vs)
	s := eval.NewSortedDistribution(len(vs))
	for _, v := range vs {
		s.Add(float64(v))
	}
	return s.Distribution()
}

// classRows adds each class row's latencies (ttft and e2e by level and
// length class) and orders the rows by level and length class.
func classRows(rows map[classKey]*classRow, ttft, e2e map[results.Group]eval.Distribution) []classRow {
	out := make([]classRow, 0, len(rows))
	for k, row := range rows {
		g := results.Group{Level: k.level, LengthClass: k.class}
		row.TTFT, row.E2E = ttft[g], e2e[g]
		out = append(out, *row)
	}
	slices.SortFunc(out, func(a, b classRow) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(classRank(a.Class), classRank(b.Class)), cmp.Compare(a.Class, b.Class))
	})
	return out
}

// slowestAt lists the documents with the longest median E2E at level lv
// over every request there (complete passes or not), from one scan ordered
// by document: one document's requests at a time, and the slowest kept.
func slowestAt(ctx context.Context, rd *results.Reader, sel results.Selection, lv int) ([]slowDoc, error) {
	var out []slowDoc
	var e2e, ttft, queue []int64
	var last requestRow
	done := func() {
		if len(e2e) == 0 {
			return
		}
		d := slowDoc{DocID: last.DocID, LengthClass: last.LengthClass, Level: lv,
			E2E: medianNS(e2e), TTFT: medianNS(ttft), Queue: medianNS(queue), Outcome: "accepted"}
		if last.PromptTokens != nil {
			d.PromptTokens = *last.PromptTokens
		}
		if last.CompletionTokens != nil {
			d.CompletionTokens = *last.CompletionTokens
		}
		if !last.Accepted && last.Failure != "" {
			d.Outcome = last.Failure
		}
		out = append(out, d)
		slices.SortFunc(out, func(a, b slowDoc) int { return cmp.Or(cmp.Compare(b.E2E, a.E2E), cmp.Compare(a.DocID, b.DocID)) })
		out = out[:min(len(out), slowestDocs)]
		e2e, ttft, queue = e2e[:0], ttft[:0], queue[:0]
	}
	all := sel
	all.Passes = nil // every request at the level, as the sheet's level reads them
	err := rd.EachRequestByDoc(ctx, all, lv, func(rec *extractbench.Record) {
		r := requestRowOf(*rec)
		if r.E2E == nil {
			return
		}
		if r.DocID != last.DocID {
			done()
		}
		e2e = append(e2e, *r.E2E)
		if r.TTFT != nil {
			ttft = append(ttft, *r.TTFT)
		}
		if r.ClientQueue != nil {
			queue = append(queue, *r.ClientQueue)
		}
		last = r
	})
	if err != nil {
		return nil, err
	}
	done()
	for i := range out { // the slowest alone: most documents are let go
		out[i].Why = slowWhy(out[i])
	}
	return out, nil
}

// changedOf compares every complete pass with the lowest level's complete
// pass of the same repetition (eval.Invariance, in SQL).
func changedOf(ctx context.Context, rd *results.Reader, sel results.Selection) ([]changedDoc, error) {
	if len(sel.Passes) == 0 {
		return nil, nil
	}
	base := sel.Passes[0][0]
	for _, k := range sel.Passes {
		base = min(base, k[0])
	}
	var out []changedDoc
	for _, k := range sel.Passes {
		if k[0] == base || !slices.Contains(sel.Passes, [2]int{base, k[1]}) {
			continue
		}
		key := extractbench.PassKey{RunID: sel.RunID, Variant: sel.Variant, Mode: sel.Mode, Level: k[0], Repetition: k[1]}
		docs, err := rd.ChangedDocs(ctx, key, base)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			out = append(out, changedDoc{Level: k[0], Repetition: k[1], DocID: d.DocID, VerdictChanged: d.VerdictChanged})
		}
	}
	slices.SortFunc(out, func(a, b changedDoc) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(a.Repetition, b.Repetition), cmp.Compare(a.DocID, b.DocID))
	})
	return out, nil
}

// endpointsOf counts the series' measured requests per endpoint (every
// pass, whole or not), in the manifest's order of the variant's replicas,
// then any other endpoint its rows name, in the order of their first
// request.
func endpointsOf(ctx context.Context, rd *results.Reader, sel results.Selection, endpoints []string) ([]endpointCount, error) {
	all := sel
	all.Passes = nil
	counts, err := rd.EndpointCounts(ctx, all)
	if err != nil {
		return nil, err
	}
	e2e, err := rd.LatencyGroups(ctx, all, results.LatencyE2E, results.GroupEndpoint)
	if err != nil {
		return nil, err
	}
	var out []endpointCount
	at := map[string]int{}
	for _, e := range endpoints {
		at[e] = len(out)
		out = append(out, endpointCount{Endpoint: e})
	}
	for _, c := range counts {
		i, ok := at[c.Endpoint]
		if !ok {
			i = len(out)
			at[c.Endpoint] = i
			out = append(out, endpointCount{Endpoint: c.Endpoint})
		}
		out[i].Requests, out[i].Accepted = c.Requests, c.Accepted
	}
	for i := range out {
		out[i].E2E = e2e[results.Group{Endpoint: out[i].Endpoint}]
	}
	return out, nil
}
