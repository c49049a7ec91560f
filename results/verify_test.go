package results

import (
	"context"
	"database/sql"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// TestVerify_PassFields: Verify recomputes each pass's per-field figures
// from its stored request_fields rows, as the run made them, and counts
// the passes whose pass_fields rows say otherwise: a pass_fields F1
// edited, or a request_fields row edited under an untouched pass_fields
// row. Before, Verify read neither table's rows and counted nothing.
func TestVerify_PassFields(t *testing.T) {
	ctx := context.Background()
	s, dir := MustOpen(t)
	if err := s.CreateRun(ctx, Run{RunID: "run-1", Fingerprint: "fp", ProtocolName: "default", Manifest: []byte(`{}`), StartedAt: 1, Status: RunComplete}); err != nil {
		t.Fatal(err)
	}
	for _, level := range []int{1, 2} {
		key := extractbench.PassKey{RunID: "run-1", Variant: "ref", Mode: "concurrency", Level: level, Repetition: 1}
		var recs []extractbench.Record
		for i := range 20 {
			recs = append(recs, testRecord(key, i))
			s.Add(recs[i])
		}
		fields := eval.Aggregate(recs).PerField // what pipeline/passrow stores
		if len(fields) != 3 || fields[0].F1 <= 0 || fields[0].F1 >= 1 {
			t.Fatalf("the records' field figures %+v do not vary", fields)
		}
		if err := s.PutPass(ctx, extractbench.Pass{RunID: key.RunID, Variant: key.Variant, Mode: key.Mode, Level: level, Repetition: 1,
			Phase: extractbench.PhaseSweep, Attempt: 1, SentConcurrency: int64(level), Status: extractbench.PassComplete, Docs: 20, Fields: fields}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	verify := func(want int) {
		t.Helper()
		c, err := Verify(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if c.PassFieldsMismatch != want || c.PassDocsMismatch != 0 {
			t.Errorf("Verify: %d passes whose per-field figures differ from their field rows, want %d (%d docs mismatches, want 0)",
				c.PassFieldsMismatch, want, c.PassDocsMismatch)
		}
	}
	edit := func(q string) {
		t.Helper()
		err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, q)
			if n, _ := res.RowsAffected(); err == nil && n != 1 {
				t.Fatalf("%s changed %d rows, want 1", q, n)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	verify(0)
	edit(`UPDATE pass_fields SET f1 = f1 + 0.01 WHERE level = 2 AND field = 'date'`)
	verify(1)
	edit(`UPDATE request_fields SET tp = tp + 1 WHERE rowid = (SELECT rowid FROM request_fields WHERE level = 1 AND field = 'amount' ORDER BY doc_id LIMIT 1)`)
	verify(2)
}
