package results

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// resultValues are the F1 outcomes the result columns' CHECKs allow
// (extractbench.FieldResult), then NULL (not scored), which they let through.
var resultValues = []any{"tp", "fp", "fn", "fp_fn", "tn", nil}

// TestMigration18_SameRuleNoPerRowTable takes a database of schema version
// 17 holding rows of every result value, applies migration 18 on the same
// one connection, and checks that the rows are as before, that the result
// columns still take each F1 outcome and NULL and refuse any other value,
// on this connection and on a new one, and that the writer's INSERTs no
// longer open a lookup table for each row (OpenEphemeral, what the IN
// lists cost): which also shows that the connection read the rewritten
// schema (schema_version moved), since it had parsed the old one.
func TestMigration18_SameRuleNoPerRowTable(t *testing.T) {
	ctx := context.Background()
	db := openBare(t)
	if err := migrateTo(ctx, db, 17); err != nil {
		t.Fatal(err)
	}
	if n := ephemeralTables(t, db); n == 0 {
		t.Fatal("at schema version 17 the INSERTs open no per-row table: the test cannot tell the versions apart")
	}
	for i, v := range resultValues {
		if err := insertResults(db, fmt.Sprintf("doc-%d", i), v); err != nil {
			t.Fatalf("version 17 refused result %v: %v", v, err)
		}
	}
	before := resultRows(t, db)
	var cookie int64
	if err := db.QueryRow(`PRAGMA schema_version`).Scan(&cookie); err != nil {
		t.Fatal(err)
	}

	if err := migrateTo(ctx, db, 18); err != nil {
		t.Fatalf("migrate to 18: %v", err)
	}
	if after := resultRows(t, db); !slices.Equal(before, after) {
		t.Errorf("rows changed:\nbefore %v\nafter  %v", before, after)
	}
	var moved int64
	if err := db.QueryRow(`PRAGMA schema_version`).Scan(&moved); err != nil || moved <= cookie {
		t.Errorf("schema_version %d before migration 18, %d after (%v): other connections keep the old parse", cookie, moved, err)
	}
	if n := ephemeralTables(t, db); n != 0 {
		t.Errorf("after migration 18 the writer's INSERTs still open %d lookup tables", n)
	}
	var sqlText string
	if err := db.QueryRow(`SELECT group_concat(sql, ' ') FROM sqlite_schema WHERE name IN ('requests', 'request_fields')`).Scan(&sqlText); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sqlText, "IN ('tp'") {
		t.Errorf("an IN list is left in the tables' SQL:\n%s", sqlText)
	}
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check: %q (%v)", check, err)
	}

	other, err := openDB(db2Path(t, db), "immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, conn := range []*sql.DB{db, other} {
		for i, v := range resultValues {
			if err := insertResults(conn, fmt.Sprintf("new-%p-%d", conn, i), v); err != nil {
				t.Errorf("version 18 refused result %v: %v", v, err)
			}
		}
		for _, v := range []any{"TP", "fp fn", "", "x"} {
			if err := insertResults(conn, fmt.Sprintf("bad-%p-%v", conn, v), v); err == nil || !strings.Contains(err.Error(), "CHECK") {
				t.Errorf("version 18 took result %q: %v", v, err)
			}
		}
	}
}

// insertResults writes one requests row whose three result columns hold v
// and one request_fields row whose result does, in one transaction.
func insertResults(db *sql.DB, doc string, v any) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO requests (run_id, variant, mode, level, repetition, doc_id, length_class, completion_tokens,
		usage_reported, engine_died, strict_parse_ok, lenient_parse_ok, schema_ok, accepted, output, date_result, amount_result, category_result)
		VALUES ('r', 'v', 'concurrency', 1, 1, ?, 'short', 3, 1, 0, 1, 1, 1, 1, '{}', ?, ?, ?)`, doc, v, v, v); err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT INTO request_fields (run_id, variant, mode, level, repetition, doc_id, field, position, result, correct, tp, fp, fn)
		VALUES ('r', 'v', 'concurrency', 1, 1, ?, 'date', 0, ?, 1, 0, 0, 0)`, doc, v); err != nil {
		return err
	}
	return tx.Commit()
}

// resultRows are the result columns of every requests and request_fields
// row, in key order.
func resultRows(t *testing.T, db *sql.DB) []string {
	t.Helper()
	return textRows(t, db, `SELECT doc_id, quote(date_result), quote(amount_result), quote(category_result) FROM requests
		UNION ALL SELECT doc_id || '/' || field, quote(result), '', '' FROM request_fields ORDER BY 1`)
}

// ephemeralTables counts the lookup tables the writer's INSERTs of
// requests and request_fields (one row each), as db's connection compiles
// them, build for every row: OpenEphemeral steps not behind a Once (an IN
// list in a WHERE clause is built once a statement; in a CHECK, at every
// row).
func ephemeralTables(t *testing.T, db *sql.DB) int {
	t.Helper()
	n := 0
	for _, q := range []string{insertRequestSQL(1), insertFieldSQL(1)} {
		args := make([]any, strings.Count(q, "?")) // EXPLAIN binds nothing, but the driver wants every parameter
		prev := ""
		for _, step := range textRows(t, db, `EXPLAIN `+q, args...) {
			op := strings.Fields(step)[1] // addr, opcode, p1, ...
			if op == "OpenEphemeral" && prev != "Once" {
				n++
			}
			prev = op
		}
	}
	return n
}

// db2Path is the file db (a single-file database) is open on.
func db2Path(t *testing.T, db *sql.DB) string {
	t.Helper()
	var seq int
	var name, file string
	if err := db.QueryRow(`PRAGMA database_list`).Scan(&seq, &name, &file); err != nil {
		t.Fatal(err)
	}
	return file
}
