package results

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/extractbench/extractbench"
)

// TestSealRun: a sealed run has one digest per pass over every requests
// column and every request_fields column, matching its rows as AuditPass
// and AuditFields read them; any edit of a row (a value, NULL made empty
// text, a row deleted; of a request or of one of its fields) changes its
// pass's digest and no other's, Verify counts it, and a run set back to
// running loses its digests.
func TestSealRun(t *testing.T) {
	ctx := context.Background()
	s, dir := MustOpen(t)
	fillStore(t, s, 40)
	if err := s.SealRun(ctx, "run-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.SealRun(ctx, "run-1"); err != nil { // sealing again replaces
		t.Fatal(err)
	}
	digests, err := s.Digests(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	cols, err := tableColumns(ctx, s.rdb, "main", "requests")
	if err != nil {
		t.Fatal(err)
	}
	fieldCols, err := tableColumns(ctx, s.rdb, "main", "request_fields")
	if err != nil {
		t.Fatal(err)
	}
	if len(digests) != 2 {
		t.Fatalf("%d digests of run-1, want one per pass (2)", len(digests))
	}
	for key, d := range digests {
		a, err := s.AuditPass(ctx, key, d.Columns, nil, 5)
		if err != nil {
			t.Fatal(err)
		}
		if d.Rows != 20 || a.Rows != 20 || a.SHA256 != d.SHA256 || len(d.SHA256) != 64 || !slices.Equal(d.Columns, cols) || a.Contradicted != 0 {
			t.Errorf("pass %s: digest %d rows %.12s over %d columns; audit %d rows %.12s, %d contradicted; want 20 rows, the same SHA-256, all %d columns",
				key, d.Rows, d.SHA256, len(d.Columns), a.Rows, a.SHA256, a.Contradicted, len(cols))
		}
		fa, err := s.AuditFields(ctx, key, d.FieldColumns)
		if err != nil {
			t.Fatal(err)
		}
		if !d.CoversFields() || d.FieldRows != 60 || fa.Rows != 60 || fa.SHA256 != d.FieldSHA256 || len(d.FieldSHA256) != 64 || !slices.Equal(d.FieldColumns, fieldCols) {
			t.Errorf("pass %s: field digest %d rows %.12s over %v; audit %d rows %.12s; want 60 rows (3 per request), the same SHA-256, columns %v",
				key, d.FieldRows, d.FieldSHA256, d.FieldColumns, fa.Rows, fa.SHA256, fieldCols)
		}
	}
	if other, _ := s.Digests(ctx, "run-2"); len(other) != 0 {
		t.Errorf("run-2, never sealed, has %d digests", len(other))
	}

	level1 := extractbench.PassKey{RunID: "run-1", Variant: "ref", Mode: "concurrency", Level: 1, Repetition: 1}
	level2 := level1
	level2.Level = 2
	where := ` WHERE run_id = 'run-1' AND level = 2 AND doc_id = 'doc-00004'`
	for _, edit := range []string{
		`UPDATE requests SET output = output || ' '` + where,
		`UPDATE requests SET error_body = ''` + where, // NULL and empty text differ
		`UPDATE requests SET http_status = 201` + where,
		`DELETE FROM requests` + where,
		// A field row edited or deleted, its request row untouched.
		`UPDATE request_fields SET got = '"2031-12-31"'` + where + ` AND field = 'date'`,
		`UPDATE request_fields SET tp = tp + 1` + where + ` AND field = 'amount'`,
		`DELETE FROM request_fields` + where + ` AND field = 'category'`,
	} {
		t.Run(edit, func(t *testing.T) {
			s, dir := MustOpen(t)
			fillStore(t, s, 40)
			if err := s.SealRun(ctx, "run-1"); err != nil {
				t.Fatal(err)
			}
			if err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error { _, err := tx.ExecContext(ctx, edit); return err }); err != nil {
				t.Fatal(err)
			}
			digests, _ := s.Digests(ctx, "run-1")
			for key, changed := range map[extractbench.PassKey]bool{level1: false, level2: true} {
				a, err := s.AuditPass(ctx, key, digests[key].Columns, nil, 0)
				if err != nil {
					t.Fatal(err)
				}
				fa, err := s.AuditFields(ctx, key, digests[key].FieldColumns)
				if err != nil {
					t.Fatal(err)
				}
				if (a.SHA256 != digests[key].SHA256 || !fa.Matches(digests[key])) != changed {
					t.Errorf("pass level %d: digest changed = %v, want %v", key.Level, !changed, changed)
				}
			}
			if c, err := Verify(ctx, dir); err != nil || c.DigestMismatch != 1 {
				t.Errorf("Verify: %d digest mismatches (%v), want 1", c.DigestMismatch, err)
			}
		})
	}

	holds := func(id string) bool { return id != "doc-00003" }
	if a, err := s.AuditPass(ctx, level1, nil, holds, 5); err != nil || a.Foreign != 1 || !slices.Equal(a.ForeignIDs, []string{"doc-00003"}) || a.SHA256 != "" {
		t.Errorf("audit with doc-00003 outside the shard: %+v, %v", a, err)
	}
	if c, err := Verify(ctx, dir); err != nil || c.DigestMismatch != 0 {
		t.Errorf("Verify of the intact run: %d digest mismatches (%v), want 0", c.DigestMismatch, err)
	}
	if err := s.SetRunStatus(ctx, "run-1", RunRunning, 0); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.Digests(ctx, "run-1"); len(d) != 0 {
		t.Errorf("a run set back to running kept %d digests", len(d))
	}
}

// TestAuditPass_Contradictions: a row accepted with a failure class or a
// wrong field, or refused without a class, is named.
func TestAuditPass_Contradictions(t *testing.T) {
	ctx := context.Background()
	s, _ := MustOpen(t)
	fillStore(t, s, 40)
	key := extractbench.PassKey{RunID: "run-1", Variant: "ref", Mode: "concurrency", Level: 1, Repetition: 1}
	for edit, want := range map[string]string{
		`UPDATE requests SET accepted = 1 WHERE doc_id = 'doc-00003'`:                 "doc-00003: accepted = 1 with failure quality",
		`UPDATE requests SET failure = NULL WHERE doc_id = 'doc-00001'`:               "doc-00001: accepted = 0 without a failure class",
		`UPDATE requests SET amount_ok = 0 WHERE doc_id = 'doc-00004'`:                "doc-00004: accepted = 1 with amount_ok = 0",
		`UPDATE requests SET failure = NULL, accepted = 1 WHERE doc_id = 'doc-00007'`: "doc-00007: accepted = 1 with date_ok = 0",
		`UPDATE requests SET failure = NULL, accepted = 1 WHERE doc_id = 'doc-00005'`: "doc-00005: accepted = 1 with date_ok = NULL",
		`UPDATE requests SET failure = 'memory' WHERE doc_id = 'doc-00000'`:           "doc-00000: accepted = 1 with failure memory",
	} {
		if err := s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, edit+` AND level = 1`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		a, err := s.AuditPass(ctx, key, nil, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(a.ContradictedRows, want) {
			t.Errorf("after %s: contradicted %q, want %q among them", edit, a.ContradictedRows, want)
		}
	}
}
