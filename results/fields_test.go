package results

import (
	"context"
	"database/sql"
	"reflect"
	"testing"

	"github.com/extractbench/extractbench"
)

// requestFieldRows reads request_fields as SQL holds it, in key order,
// correct included.
func requestFieldRows(t *testing.T, db *sql.DB) [][]any {
	t.Helper()
	rows, err := db.Query(`SELECT run_id, variant, mode, level, repetition, doc_id, field, position,
		expected, got, result, correct, reason, tp, fp, fn FROM request_fields
		ORDER BY run_id, variant, mode, level, repetition, doc_id, position`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		row := make([]any, 16)
		dest := make([]any, len(row))
		for i := range row {
			dest[i] = &row[i]
		}
		if err := rows.Scan(dest...); err != nil {
			t.Fatal(err)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStore_RequestFieldsResume checks that a pass written in two
// invocations (the first killed with requests unmeasured, the second
// sending documents again) leaves the request_fields rows of a pass that
// ran through: an interrupted row never has fields, its replacement's are
// written, and a measured document sent again keeps its first fields (none
// when its first row had none), with no duplicate row. The old store wrote no field rows at all.
func TestStore_RequestFieldsResume(t *testing.T) {
	ctx := context.Background()
	measured := func(i int) extractbench.Record { return testRecord(testKey, i) }
	interrupted := func(i int) extractbench.Record {
		r := testRecord(testKey, i)
		r.Transport = extractbench.Transport{Kind: extractbench.TransportInterrupted, Detail: "context canceled"}
		return r // its Score.Fields set: the store must still not write them
	}
	// The pass run through: documents 0-7, each measured once.
	whole, _ := MustOpen(t)
	for i := range 8 {
		whole.Add(measured(i))
	}
	whole.Add(measured(testFieldDocs)) // a row without fields (as before schema version 16)
	if err := whole.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	want := requestFieldRows(t, whole.rdb)
	if len(want) != 8*3 {
		t.Fatalf("the pass run through has %d field rows, want 24", len(want))
	}

	// The killed run: 0-3 measured, 4-5 interrupted; then resumed in a new
	// store on the same directory, sending 4-7 and, again, 0 with another
	// answer (a duplicate: the first row stays).
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		s.Add(measured(i))
	}
	s.Add(measured(testFieldDocs))
	s.Add(interrupted(4))
	s.Add(interrupted(5))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var n int
	s, err = Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.rdb.QueryRow(`SELECT COUNT(*) FROM request_fields WHERE doc_id IN ('doc-00004', 'doc-00005')`).Scan(&n); err != nil || n != 0 {
		t.Errorf("interrupted rows have %d field rows (%v), want none", n, err)
	}
	again := measured(0)
	again.Output = `{"date": "2025-03-03"}`
	again.Score.Fields = testFields(testRecord(testKey, 3).Score) // wrong answers this time
	for i := 4; i < 8; i++ {
		s.Add(measured(i))
	}
	s.Add(again)
	late := measured(testFieldDocs) // sent again, now with fields: its kept row has none, so none are written
	late.Score.Fields = testFields(late.Score)
	s.Add(late)
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := requestFieldRows(t, s.rdb); !reflect.DeepEqual(got, want) {
		t.Errorf("after the resume, request_fields =\n%v\nwant the pass run through's\n%v", got, want)
	}
	recs, err := s.PassRecords(ctx, testKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if w := measured(0); r.DocID == w.DocID && (r.Output != w.Output || !reflect.DeepEqual(r.Score.Fields, w.Score.Fields)) {
			t.Errorf("%s read back with output %q fields %+v, want the first row's", r.DocID, r.Output, r.Score.Fields)
		}
	}
}

// TestStore_RequestFieldsRead checks that records read back carry their
// own fields, also when a request between them has none and when the
// read spans passes (the fields follow the requests' order, not their key).
func TestStore_RequestFieldsRead(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	other := testKey
	other.Level = 1
	var want []extractbench.Record
	for i := range 6 {
		for _, k := range []extractbench.PassKey{testKey, other} {
			r := testRecord(k, 5-i)
			if i == 2 {
				r.Score.Fields = nil // a row without fields, between two with
			}
			if k == other {
				r.Score.Fields = append([]extractbench.FieldScore{{Name: "order_no", Expected: `"PO-1"`, Got: `"PO-1"`, Result: extractbench.TP, TP: 1}}, r.Score.Fields...)
			}
			s.Add(r)
			want = append(want, r)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := s.records(ctx, `run_id = ?`, testKey.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(rows[i].Score.Fields, want[i].Score.Fields) {
			t.Errorf("row %d (%s level %d): fields %+v, want %+v", i, rows[i].DocID, rows[i].Level, rows[i].Score.Fields, want[i].Score.Fields)
		}
	}
}

// TestStore_PassFields checks that a pass's per-field figures are written
// with its row, replaced when the row is, cleared when a recomputed row
// has none, and left alone when a put is refused.
func TestStore_PassFields(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	p := extractbench.Pass{RunID: testKey.RunID, Variant: testKey.Variant, Mode: testKey.Mode, Level: testKey.Level, Repetition: testKey.Repetition,
		Phase: extractbench.PhaseSweep, Attempt: 1, Status: extractbench.PassComplete, Fields: testPassFields()}
	if err := s.PutPass(ctx, p); err != nil {
		t.Fatal(err)
	}
	check := func(when string, want []extractbench.PassField) {
		t.Helper()
		one, err := s.Pass(ctx, testKey)
		if err != nil || one == nil || !reflect.DeepEqual(one.Fields, want) {
			t.Errorf("%s: Pass fields = %+v (%v), want %+v", when, one, err, want)
		}
		all, err := s.Passes(ctx, testKey.RunID)
		if err != nil || len(all) != 1 || !reflect.DeepEqual(all[0].Fields, want) {
			t.Errorf("%s: Passes = %+v (%v), want one with fields %+v", when, all, err, want)
		}
	}
	check("first put", p.Fields)
	p.Fields = testPassFields()[1:]
	p.Fields[0].Position, p.Fields[0].TP = 0, 17
	if err := s.PutPass(ctx, p); err != nil {
		t.Fatal(err)
	}
	check("replaced", p.Fields)
	retry := p
	retry.Phase, retry.Attempt, retry.Fields = extractbench.PhaseRetry, 2, testPassFields()
	if err := s.PutPass(ctx, retry); err == nil {
		t.Error("PutPass of a retry over a planned pass succeeded, want an error")
	}
	check("after a refused put", p.Fields)
	p.Fields = nil
	if err := s.PutPass(ctx, p); err != nil {
		t.Fatal(err)
	}
	check("recomputed without fields", nil)
}
