package passrow

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// randomPass is n records of one pass, as a run stores them: failures of
// every class, unmeasured requests (interrupted, client, engine dead),
// several replicas and length classes (one empty), requests without some
// instants, send instants that tie (a coarse clock), TPOT with and without
// a withheld end-of-generation token, prompt drift, cached prompts.
func randomPass(rng *rand.Rand, key extractbench.PassKey, n int, endpoints []string) []extractbench.Record {
	classes := []string{"short", "usual", "long", ""}
	kinds := []extractbench.TransportKind{extractbench.TransportOK, extractbench.TransportOK, extractbench.TransportOK, extractbench.TransportOK,
		extractbench.TransportTimeout, extractbench.TransportHTTPStatus, extractbench.TransportInterrupted, extractbench.TransportClient, extractbench.TransportEngineDead}
	fields := []extractbench.FieldResult{extractbench.TP, extractbench.TP, extractbench.FPFN, extractbench.FN, extractbench.FP, extractbench.TN}
	recs := make([]extractbench.Record, 0, n)
	at := int64(1_000_000)
	for i := range n {
		at += rng.Int64N(3) * 100_000 // a third of the requests are sent with the one before
		r := extractbench.Record{RunID: key.RunID, Variant: key.Variant, Mode: key.Mode, Level: key.Level, Repetition: key.Repetition,
			DocID: fmt.Sprintf("doc-%05d", i), LengthClass: classes[rng.IntN(len(classes))]}
		r.Kind = kinds[rng.IntN(len(kinds))]
		if len(endpoints) > 0 {
			r.Endpoint = endpoints[rng.IntN(len(endpoints))]
		}
		// Instants on a 10 µs grid, so that sends tie; each may be missing.
		tm := &r.Timings
		tm.SchedNS = at / 10_000 * 10_000
		tm.SendNS = tm.SchedNS + rng.Int64N(3)*10_000
		tm.FirstTokenNS = tm.SendNS + 10_000 + rng.Int64N(5)*10_000
		tm.LastTokenNS = tm.FirstTokenNS + rng.Int64N(20)*10_000
		tm.DoneNS = tm.LastTokenNS + rng.Int64N(5)*10_000
		switch rng.IntN(12) {
		case 0:
			tm.FirstTokenNS, tm.LastTokenNS = 0, 0
		case 1:
			tm.DoneNS = 0
		case 2:
			tm.SchedNS = 0
		case 3:
			tm.SendNS = 0
		}
		r.CompletionTokens = rng.IntN(300)
		r.ClientChunks = r.CompletionTokens - rng.IntN(3)
		r.UsageReported = rng.IntN(5) > 0
		r.FinishReason = []string{"stop", "stop", "length", ""}[rng.IntN(4)]
		r.PromptTokens = 100 + rng.IntN(900)
		if rng.IntN(3) == 0 {
			c := rng.IntN(r.PromptTokens + 1)
			r.CachedPromptTokens = &c
		}
		if rng.IntN(2) == 0 {
			e := r.PromptTokens + rng.IntN(21) - 10
			r.ExpectedPromptTokens = &e
		}
		if rng.IntN(4) > 0 {
			ok := rng.IntN(3) > 0
			r.OnTime = &ok
		}
		if r.Kind.Measured() {
			r.Date, r.Amount, r.Category = fields[rng.IntN(len(fields))], fields[rng.IntN(len(fields))], fields[rng.IntN(len(fields))]
			r.StrictParseOK, r.LenientParseOK, r.SchemaOK = rng.IntN(4) > 0, rng.IntN(5) > 0, rng.IntN(4) > 0
			r.Accepted = r.Date.OK() && r.Amount.OK() && r.Category.OK()
			if !r.Accepted {
				r.Failure = extractbench.Failures[rng.IntN(len(extractbench.Failures))]
				r.FailureDetail = "random"
			}
			if r.Kind != extractbench.TransportOK {
				r.Failure, r.Accepted = extractbench.Error, false
			}
		}
		recs = append(recs, r)
	}
	return recs
}

// TestTally_AddIsTallyPass: a pass's tally fed one record at a time as the
// run stores them (NewTally, Add, Finish), and the one ReadPass makes in
// one read of the stored rows, are the one TallyPass reads back with
// SQLite's order statistics, field by field and bit for bit: order
// statistics, peak in flight, drift, steady-state blocks, segments,
// endpoints, counts. Many passes, of several sizes and sent concurrencies,
// with and without replicas, in a run, in a merge and resumed: a resumed
// pass holds the killed attempt's rows, some unmeasured, which the resume's
// records for the same documents replace in place (ReadPass only: the run
// tallies a resumed pass with it).
func TestTally_AddIsTallyPass(t *testing.T) {
	ctx := context.Background()
	s, err := results.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 40 {
		rng := rand.New(rand.NewPCG(uint64(i), 43))
		key := extractbench.PassKey{RunID: "run-live", Variant: "v", Mode: extractbench.ModeConcurrency, Level: 1 + rng.IntN(16), Repetition: 1 + i}
		var endpoints []string
		if i%3 > 0 {
			endpoints = []string{"http://a:8000", "http://b:8000", "http://c:8000"}[:i%3+1]
		}
		a := &Account{Store: s}
		n := []int{0, 1, 7, 90, 400, 1500}[i%6]
		recs := randomPass(rng, key, n, endpoints)
		resumed := i%4 == 1
		switch {
		case resumed && n > 0:
			a.Resumes = []int64{recs[len(recs)/2].SchedNS + 1} // the killed attempt sent the first half
			recs = killedAttempt(rng, recs)
		case i%4 == 3: // a merge of two shards
			a.Merged = &Shards{Count: 2, Resumes: map[int][]int64{1: {2_000_000}}}
		}
		live := a.NewTally(endpoints, n)
		for _, r := range recs {
			s.Add(r)
			live.Add(&r)
		}
		if err := a.Finish(ctx, key, live); err != nil {
			t.Fatal(err)
		}
		want, err := a.TallyPass(ctx, key, endpoints)
		if err != nil {
			t.Fatal(err)
		}
		if d := tallyDiff(live, want); d != "" && !resumed {
			t.Errorf("pass %d (%d records, level %d): fed tally differs from TallyPass's:\n%s", i, n, key.Level, d)
		}
		read, err := a.ReadPass(ctx, key, endpoints)
		if err != nil {
			t.Fatal(err)
		}
		if d := tallyDiff(read, want); d != "" {
			t.Errorf("pass %d (%d records, level %d, resumed %v): ReadPass differs from TallyPass:\n%s", i, n, key.Level, resumed, d)
		}
		if n >= 400 && (want.order.TPOT.N == 0 || want.drift.Docs == nil || *want.drift.Docs == 0 || a.Merged == nil && (want.trend.Blocks == 0 || want.trend.Head == 0)) {
			t.Errorf("pass %d of %d records: no TPOT, drift, steady-state blocks or head (%+v, %+v): the comparison compares nothing", i, n, want.drift, want.trend)
		}
	}
}

// killedAttempt is a resumed pass's records in the order a run stores
// them: the killed attempt's first half, a third of them unmeasured
// (interrupted, client), then the resume's records: those documents again,
// measured, and the second half.
func killedAttempt(rng *rand.Rand, recs []extractbench.Record) []extractbench.Record {
	half := len(recs) / 2
	var out, again []extractbench.Record
	for _, r := range recs[:half] {
		if rng.IntN(3) == 0 {
			cut := r
			cut.Kind, cut.Failure, cut.Accepted = extractbench.TransportInterrupted, extractbench.None, false
			cut.DoneNS = 0
			out = append(out, cut)
			r.Kind = extractbench.TransportOK
			r.SchedNS, r.SendNS, r.FirstTokenNS, r.LastTokenNS, r.DoneNS = shift(r.SchedNS), shift(r.SendNS), shift(r.FirstTokenNS), shift(r.LastTokenNS), shift(r.DoneNS)
			again = append(again, r)
			continue
		}
		out = append(out, r)
	}
	return append(append(out, again...), recs[half:]...)
}

// shift moves an instant (0: none) past the resume.
func shift(ns int64) int64 {
	if ns == 0 {
		return 0
	}
	return ns + 9_000_000_000
}

// tallyDiff names each field of two tallies that differs, with both values.
func tallyDiff(got, want *Tally) string {
	var b strings.Builder
	gv, wv := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
	for i := range gv.NumField() {
		name := gv.Type().Field(i).Name
		g, w := gv.Field(i), wv.Field(i)
		if name == "order" || name == "drift" { // one line per figure
			for j := range g.NumField() {
				if !reflect.DeepEqual(reflectValue(g.Field(j)), reflectValue(w.Field(j))) {
					fmt.Fprintf(&b, "  %s.%s = %+v, want %+v\n", name, g.Type().Field(j).Name, show(g.Field(j)), show(w.Field(j)))
				}
			}
			continue
		}
		if !reflect.DeepEqual(reflectValue(g), reflectValue(w)) {
			fmt.Fprintf(&b, "  %s = %+v, want %+v\n", name, show(g), show(w))
		}
	}
	return b.String()
}

// reflectValue is v's value for DeepEqual, read through an unexported field.
func reflectValue(v reflect.Value) any {
	return reflect.NewAt(v.Type(), v.Addr().UnsafePointer()).Elem().Interface()
}

func show(v reflect.Value) any {
	x := reflectValue(v)
	if rv := reflect.ValueOf(x); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		return rv.Elem().Interface()
	}
	return x
}

// TestTally_AddHeapPerRequest: a fed tally holds what its figures need of
// each request, a timing of 48 bytes, not the records: 20,000 requests
// take at most 64 bytes each of live heap more than 2,000 (a record held
// takes over 500).
func TestTally_AddHeapPerRequest(t *testing.T) {
	key := extractbench.PassKey{RunID: "run-heap", Variant: "v", Mode: extractbench.ModeConcurrency, Level: 4, Repetition: 1}
	recs := randomPass(rand.New(rand.NewPCG(7, 8)), key, 20_000, []string{"http://a:8000", "http://b:8000"})
	for i := range recs {
		recs[i].Output = fmt.Sprintf(`{"date": "2025-01-%02d", "amount": "%d.50", "category": "rent"}`, i%28+1, i)
	}
	fed := func(n int) int64 {
		before := liveHeap()
		tally := (&Account{}).NewTally(nil, 0)
		for i := range recs[:n] {
			r := recs[i] // a copy, as keep hands over
			tally.Add(&r)
		}
		grown := liveHeap() - before
		runtime.KeepAlive(tally)
		return grown
	}
	small, large := fed(2_000), fed(20_000)
	runtime.KeepAlive(recs)
	perRequest := (large - small) / 18_000
	t.Logf("live heap of a fed tally: %d KB at 2,000 requests, %d KB at 20,000: %d bytes a request", small>>10, large>>10, perRequest)
	if perRequest > 64 {
		t.Errorf("a fed tally holds %d bytes a request, want at most 64: more than its timings", perRequest)
	}
}
