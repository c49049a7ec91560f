package results

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

// TestPassRange_ScansTheStretch: a pass whose rows lie together is read from
// its stretch of rowids, in table order, with no sort (the copy and the
// pass figures read it so, where the pass's index would look up every row
// and sort them all by rowid); a pass spread far apart (resumed after a
// long pass) is read through its index; either way exactly its rows.
func TestPassRange_ScansTheStretch(t *testing.T) {
	ctx := context.Background()
	st, _ := MustOpen(t)
	a, b := testKey, testKey
	b.Level = 8
	for i := range 40 {
		st.Add(testRecord(a, i))
	}
	for i := range 400 {
		st.Add(testRecord(b, i))
	}
	for i := 40; i < 50; i++ {
		st.Add(testRecord(a, i)) // a resumed: its last rows far from its first
	}
	if err := st.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key    extractbench.PassKey
		rows   int64
		ranged bool
	}{{b, 400, true}, {a, 50, false}} {
		where, args, rows, err := passRange(ctx, st.rdb, "", c.key)
		if err != nil {
			t.Fatal(err)
		}
		if rows != c.rows || strings.HasPrefix(where, "rowid BETWEEN") != c.ranged {
			t.Errorf("pass level %d: %d rows, condition %q; want %d rows, rowid stretch %v", c.key.Level, rows, where, c.rows, c.ranged)
		}
		var n int64
		if err := st.rdb.QueryRowContext(ctx, `SELECT COUNT(*) FROM requests WHERE `+where, args...).Scan(&n); err != nil || n != c.rows {
			t.Errorf("pass level %d: the condition selects %d rows (%v), want %d", c.key.Level, n, err, c.rows)
		}
		plan := queryPlan(t, st, `SELECT * FROM requests WHERE `+where+` ORDER BY rowid`, args)
		if c.ranged && (!strings.Contains(plan, "INTEGER PRIMARY KEY") || strings.Contains(plan, "TEMP B-TREE")) {
			t.Errorf("pass level %d: plan %q; want a rowid range read in order, no sort", c.key.Level, plan)
		}
	}
}

// TestOpenCopier_AloneWritesWithoutWAL: a Copier alone on a database writes
// it in place with no journal (no WAL to write each page to, then
// checkpoint, and no undo journal growing with the pages a pass's copy
// changes: the database being built is thrown away on any failure); with a
// Store open on it, it stays in WAL mode and still works.
func TestOpenCopier_AloneWritesWithoutWAL(t *testing.T) {
	ctx := context.Background()
	st, dir := MustOpen(t)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	cp, err := OpenCopier(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := cp.db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "off" {
		t.Errorf("journal mode of a Copier alone: %q (%v), want off", mode, err)
	}
	if err := cp.Close(); err != nil {
		t.Fatal(err)
	}
	st2, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	cp, err = OpenCopier(ctx, dir)
	if err != nil {
		t.Fatalf("a Copier beside an open Store: %v", err)
	}
	defer cp.Close()
	if err := cp.db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal mode of a Copier beside a Store: %q (%v), want wal", mode, err)
	}
}

// queryPlan is EXPLAIN QUERY PLAN of query, its steps joined by "; ".
func queryPlan(t *testing.T, st *Store, query string, args []any) string {
	t.Helper()
	rows, err := st.rdb.Query(`EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	return strings.Join(steps, "; ")
}

// TestEachPassFigures_LeavesTheTextsOut: EachPassFigures hands over the
// records EachPassRecord does, in the same order and field for field, but
// with the long texts (output, error body, details) and the fields no
// figure of a pass reads (zeroed below) left unread.
func TestEachPassFigures_LeavesTheTextsOut(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 60 {
		r := randomRecord(rng, testKey, i)
		r.ErrorBody, r.Transport.Detail, r.FailureDetail = "body "+r.DocID, "detail "+r.DocID, "why "+r.DocID
		s.Add(r)
	}
	var want, got []extractbench.Record
	if err := s.EachPassRecord(ctx, testKey, func(r *extractbench.Record) { want = append(want, *r) }); err != nil {
		t.Fatal(err)
	}
	texts := 0
	for i := range want {
		if want[i].Output != "" && want[i].ErrorBody != "" && want[i].Detail != "" && want[i].FailureDetail != "" {
			texts++
		}
		want[i].Output, want[i].ErrorBody, want[i].Detail, want[i].FailureDetail = "", "", "", ""
		w := &want[i]
		w.FirstByteNS, w.HTTPStatus, w.Transport.Kind, w.EngineDied, w.SchemaOK, w.Prediction.Date, w.Prediction.Amount = 0, 0, "", false, false, nil, nil
	}
	if texts == 0 {
		t.Fatal("no stored record holds every long text: the test reads nothing to leave out")
	}
	if err := s.EachPassFigures(ctx, testKey, func(r *extractbench.Record) { got = append(got, *r) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || !reflect.DeepEqual(got, want) {
		t.Errorf("EachPassFigures gave %d records, EachPassRecord %d; equal but for the texts: %v", len(got), len(want), reflect.DeepEqual(got, want))
	}
}
