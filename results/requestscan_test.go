package results

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// TestLatencyGroupsPooled: one read gives each (level, length class)'s E2E
// and each level's, both as LatencyGroups gives them and as
// eval.DescribeNS makes them of the records, bit for bit (values out of
// order, ties, a row without E2E).
func TestLatencyGroupsPooled(t *testing.T) {
	ctx := context.Background()
	st, dir := MustOpen(t)
	if err := st.CreateRun(ctx, Run{RunID: "r", Fingerprint: "fp", Status: RunComplete, Manifest: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	byClass, byLevel := map[Group][]int64{}, map[Group][]int64{}
	for _, level := range []int{1, 2} {
		key := extractbench.PassKey{RunID: "r", Variant: "v", Mode: "concurrency", Level: level, Repetition: 1}
		for i := range 60 {
			rec := testRecord(key, i)
			rec.Timings.DoneNS = rec.Timings.SendNS + int64((i*7919)%97)*1_000_003 + int64(level)
			if i == 5 {
				rec.Timings.DoneNS = 0 // no E2E
			} else {
				byClass[Group{Level: level, LengthClass: rec.LengthClass}] = append(byClass[Group{Level: level, LengthClass: rec.LengthClass}], rec.Timings.DoneNS-rec.Timings.SendNS)
				byLevel[Group{Level: level}] = append(byLevel[Group{Level: level}], rec.Timings.DoneNS-rec.Timings.SendNS)
			}
			st.Add(rec)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	sel := Selection{RunID: "r", Variant: "v", Mode: "concurrency"}
	fine, coarse, err := rd.LatencyGroupsPooled(ctx, sel, LatencyE2E, GroupLevel|GroupLengthClass, GroupLevel)
	if err != nil {
		t.Fatal(err)
	}
	wantFine, err := rd.LatencyGroups(ctx, sel, LatencyE2E, GroupLevel|GroupLengthClass)
	if err != nil {
		t.Fatal(err)
	}
	wantCoarse, err := rd.LatencyGroups(ctx, sel, LatencyE2E, GroupLevel)
	if err != nil {
		t.Fatal(err)
	}
	describe := func(m map[Group][]int64) map[Group]eval.Distribution {
		out := map[Group]eval.Distribution{}
		for g, v := range m {
			out[g] = eval.DescribeNS(v)
		}
		return out
	}
	for _, c := range []struct {
		name           string
		got, sql, recs map[Group]eval.Distribution
	}{{"by level and class", fine, wantFine, describe(byClass)}, {"by level", coarse, wantCoarse, describe(byLevel)}} {
		if !reflect.DeepEqual(c.got, c.sql) || !reflect.DeepEqual(c.got, c.recs) {
			t.Errorf("%s:\n got %v\n LatencyGroups %v\n DescribeNS %v", c.name, c.got, c.sql, c.recs)
		}
	}
	if len(fine) != 6 || len(coarse) != 2 {
		t.Errorf("%d and %d groups, want 6 and 2", len(fine), len(coarse))
	}
	if _, _, err := rd.LatencyGroupsPooled(ctx, sel, LatencyE2E, GroupLevel, GroupLengthClass); err == nil {
		t.Error("pooled by a column outside by: no error")
	}
}

// TestEachRequestByDoc_FewColumns: EachRequestByDoc gives the level's
// measured rows by document, then in the order stored, each holding only
// byDocColumns' fields, those equal to the stored record's.
func TestEachRequestByDoc_FewColumns(t *testing.T) {
	ctx := context.Background()
	st, dir := MustOpen(t)
	if err := st.CreateRun(ctx, Run{RunID: "r", Fingerprint: "fp", Status: RunComplete, Manifest: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	var want []extractbench.Record
	for _, rep := range []int{1, 2} {
		key := extractbench.PassKey{RunID: "r", Variant: "v", Mode: "concurrency", Level: 2, Repetition: rep}
		for i := range 30 {
			rec := testRecord(key, 29-i) // stored against document order
			rec.SchedNS = rec.SendNS - int64(i+1)
			rec.PromptTokens, rec.CompletionTokens = 100+i, 10+i
			rec.Output, rec.ErrorBody, rec.FailureDetail, rec.HTTPStatus = "out", "body", "why", 200
			if i%4 == 0 {
				rec.Accepted, rec.Failure = false, extractbench.Format
			}
			st.Add(rec)
			want = append(want, extractbench.Record{DocID: rec.DocID, LengthClass: rec.LengthClass})
			w := &want[len(want)-1]
			w.SchedNS, w.SendNS, w.FirstTokenNS, w.DoneNS = rec.SchedNS, rec.SendNS, rec.FirstTokenNS, rec.DoneNS
			w.PromptTokens, w.CompletionTokens, w.Accepted, w.Failure = rec.PromptTokens, rec.CompletionTokens, rec.Accepted, rec.Failure
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(want, func(a, b extractbench.Record) int { return strings.Compare(a.DocID, b.DocID) })
	rd, err := OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var got []extractbench.Record
	if err := rd.EachRequestByDoc(ctx, Selection{RunID: "r", Variant: "v", Mode: "concurrency"}, 2, func(r *extractbench.Record) { got = append(got, *r) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("record %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// TestEachPassOutcome: EachPassOutcome gives every record EachPassRequest
// gives, in the same order, with the fields the report counts (every one
// but those zeroed below), and the texts it quotes only where the row
// failed.
func TestEachPassOutcome(t *testing.T) {
	ctx := context.Background()
	st, dir := MustOpen(t)
	if err := st.CreateRun(ctx, Run{RunID: "r", Fingerprint: "fp", Status: RunComplete, Manifest: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	key := extractbench.PassKey{RunID: "r", Variant: "v", Mode: "concurrency", Level: 1, Repetition: 1}
	for i := range 60 {
		rec := testRecord(key, i)
		rec.ErrorBody, rec.Transport.Detail = fmt.Sprintf("body %d", i), fmt.Sprintf("detail %d", i)
		st.Add(rec)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	rd, err := OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var whole, got []extractbench.Record
	if err := rd.EachPassRequest(ctx, key, func(r *extractbench.Record) { whole = append(whole, *r) }); err != nil {
		t.Fatal(err)
	}
	if err := rd.EachPassOutcome(ctx, key, func(r *extractbench.Record) { got = append(got, *r) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(whole) || len(got) != 60 {
		t.Fatalf("%d records, EachPassRequest %d, want 60", len(got), len(whole))
	}
	failed := 0
	for i, want := range whole {
		if want.Failure != extractbench.None {
			failed++
		} else {
			want.Output, want.ErrorBody, want.FailureDetail = "", "", ""
		}
		// Not read: no count of the report's is made of them.
		want.FirstByteNS, want.LastTokenNS, want.UsageReported, want.Transport.Kind, want.Transport.Detail = 0, 0, false, "", ""
		want.EngineDied, want.SchemaOK, want.Prediction.Date, want.Prediction.Amount = false, false, nil, nil
		want.ClientChunks, want.OnTime, want.Endpoint, want.CachedPromptTokens, want.ExpectedPromptTokens = 0, nil, "", nil, nil
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("record %d (%s, failure %q):\n got %+v\nwant %+v", i, want.DocID, want.Failure, got[i], want)
		}
	}
	if failed == 0 || failed == len(whole) {
		t.Fatalf("%d of %d rows failed: the test needs both", failed, len(whole))
	}
}
