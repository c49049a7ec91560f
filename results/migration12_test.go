package results

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

// TestMigration12_RequestsRebuilt takes a database of schema version 11 (the
// requests table with its CHECK on failure) holding request rows, applies
// migration 12 (which rebuilds requests without that CHECK) and checks that
// every column, its type, NOT NULL and default, every row, the UNIQUE key
// and both indexes are as before; that opening it then (the later
// migrations) keeps the rows; that SQL now takes a failure class the old CHECK
// did not list; and that the store itself refuses a class extractbench.Failures
// does not list, with the record's id in the error.
func TestMigration12_RequestsRebuilt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, DBName)
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 11 {
		if _, err := db.Exec(migrations[i]); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
	}
	if _, err := db.Exec(`PRAGMA user_version = 11`); err != nil {
		t.Fatal(err)
	}
	insert := `INSERT INTO requests (run_id, variant, mode, level, repetition, doc_id, length_class, completion_tokens, usage_reported,
		engine_died, failure, strict_parse_ok, lenient_parse_ok, schema_ok, accepted, output, endpoint, expected_prompt_tokens)
		VALUES ('r', 'v', 'concurrency', 1, 1, ?, 'short', 3, 1, 0, ?, 1, 1, 1, ?, '{}', 'http://e', 7)`
	for i, f := range []string{"", "memory", "quality"} {
		var failure any
		if f != "" {
			failure = f
		}
		if _, err := db.Exec(insert, fmt.Sprintf("doc-%d", i), failure, f == ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(insert, "doc-x", "oom_killed", false); err == nil || !strings.Contains(err.Error(), "CHECK") {
		t.Fatalf("version 11 took a class its CHECK does not list: %v", err)
	}
	before := tableShape(t, db)
	rowsBefore := requestRows(t, db)
	if err := migrateTo(ctx, db, 12); err != nil {
		t.Fatalf("migrate to 12: %v", err)
	}
	if after := tableShape(t, db); !slices.Equal(before, after) {
		t.Errorf("requests' columns and indexes changed:\nbefore %v\nafter  %v", before, after)
	}
	if after := requestRows(t, db); !slices.Equal(rowsBefore, after) {
		t.Errorf("rows changed:\nbefore %v\nafter  %v", rowsBefore, after)
	}
	db.Close()

	// Then on to the latest version, which keeps the rows.
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatalf("open (migrate to %d): %v", len(migrations), err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if after := requestRows(t, db); !slices.Equal(rowsBefore, after) {
		t.Errorf("rows changed at version %d:\nbefore %v\nafter  %v", len(migrations), rowsBefore, after)
	}
	var v int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil || v != len(migrations) {
		t.Fatalf("user_version %d (%v), want %d", v, err, len(migrations))
	}
	if _, err := db.Exec(insert, "doc-y", "oom_killed", false); err != nil {
		t.Errorf("after migration 12 SQL refused a new class: %v", err)
	}
	if _, err := db.Exec(insert, "doc-0", nil, true); err == nil {
		t.Error("the UNIQUE key was lost: a duplicate request row was taken")
	}

	store, err := Open(ctx, t.TempDir()) // not MustOpen: its Close would fail the test on the sticky error wanted here
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateRun(ctx, Run{RunID: testKey.RunID, Fingerprint: "f", ProtocolName: "p", Manifest: []byte("{}"), Status: RunRunning}); err != nil {
		t.Fatal(err)
	}
	r := testRecord(testKey, 0)
	r.Accepted, r.Failure = false, extractbench.Failure("oom_killed")
	store.Add(r)
	if err := store.Flush(ctx); err == nil || !strings.Contains(err.Error(), `"oom_killed"`) || !strings.Contains(err.Error(), r.DocID) {
		t.Errorf("store took an unknown class: flush %v", err)
	}
	if err := store.Close(); err == nil {
		t.Error("close after a refused record: no error, want the sticky one")
	}
}

// tableShape is requests' columns (name, type, NOT NULL, default, position)
// and its indexes with their columns.
func tableShape(t *testing.T, db *sql.DB) []string {
	t.Helper()
	var out []string
	rows, err := db.Query(`SELECT cid, name, type, "notnull", coalesce(dflt_value, ''), pk FROM pragma_table_info('requests')`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var cid, notnull, pk int
		var name, typ, dflt string
		if err := rows.Scan(&cid, &name, &typ, &notnull, &dflt, &pk); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d %s %s %d %q %d", cid, name, typ, notnull, dflt, pk))
	}
	rows.Close()
	rows, err = db.Query(`SELECT il.name, il."unique", group_concat(ii.name, ',') FROM pragma_index_list('requests') il, pragma_index_info(il.name) ii GROUP BY il.name ORDER BY il.name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, cols string
		var unique int
		if err := rows.Scan(&name, &unique, &cols); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(name, "sqlite_autoindex_") {
			name = "autoindex" // the UNIQUE key's: its number follows the table's name
		}
		out = append(out, fmt.Sprintf("index %s unique=%d (%s)", name, unique, cols))
	}
	return out
}

// requestRows is every request row as text, in doc order.
func requestRows(t *testing.T, db *sql.DB) []string {
	t.Helper()
	return textRows(t, db, `SELECT doc_id, coalesce(failure, 'NULL'), accepted, endpoint, expected_prompt_tokens, output FROM requests ORDER BY doc_id`)
}

// textRows is each row of query q with args, its values as text joined by
// spaces.
func textRows(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		text := make([]string, len(vals))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			text[i] = fmt.Sprint(v)
		}
		out = append(out, strings.Join(text, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
