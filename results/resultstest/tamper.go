package resultstest

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3" // the driver results uses

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// Edit is one change to a results.db made behind its run's back, as
// someone with sqlite3 would: what merge's audit and resume must catch.
// Tamper applies edits; each must change at least one row.
type Edit struct {
	what  string
	stmts []string
	args  []any
}

// Row picks one requests row: the first of Level in doc_id order, the
// first not accepted when Failed.
type Row struct {
	Level  int
	Failed bool
}

func (r Row) rowid() (string, []any) {
	cond := `level = ?`
	if r.Failed {
		cond += ` AND accepted = 0`
	}
	return `(SELECT rowid FROM requests WHERE ` + cond + ` ORDER BY doc_id LIMIT 1)`, []any{r.Level}
}

// DeleteRequests deletes the first n requests rows of level, in doc_id order.
func DeleteRequests(level, n int) Edit {
	return Edit{fmt.Sprintf("delete %d rows of level %d", n, level),
		[]string{`DELETE FROM requests WHERE rowid IN (SELECT rowid FROM requests WHERE level = ? ORDER BY doc_id LIMIT ?)`},
		[]any{level, n}}
}

// DeletePass deletes a level's requests rows and its passes rows.
func DeletePass(level int) Edit {
	return Edit{fmt.Sprintf("delete the pass at level %d", level),
		[]string{`DELETE FROM requests WHERE level = ?`, `DELETE FROM passes WHERE level = ?`}, []any{level}}
}

// DeleteDigests deletes every digest (a shard written before digests).
func DeleteDigests() Edit {
	return Edit{"delete the digests", []string{`DELETE FROM digests`}, nil}
}

// SetFieldGot sets the answer (got) of the first request_fields row of
// level, in (doc_id, position) order: a field row edited, its request row
// untouched.
func SetFieldGot(level int, got string) Edit {
	return Edit{fmt.Sprintf("set got %q on the first field row of level %d", got, level),
		[]string{`UPDATE request_fields SET got = ? WHERE rowid = (SELECT rowid FROM request_fields WHERE level = ? ORDER BY doc_id, position LIMIT 1)`},
		[]any{got, level}}
}

// DeleteFieldRows deletes the first n request_fields rows of level, in
// (doc_id, position) order, their request rows untouched.
func DeleteFieldRows(level, n int) Edit {
	return Edit{fmt.Sprintf("delete %d field rows of level %d", n, level),
		[]string{`DELETE FROM request_fields WHERE rowid IN (SELECT rowid FROM request_fields WHERE level = ? ORDER BY doc_id, position LIMIT ?)`},
		[]any{level, n}}
}

// SetRunStatus sets every run's status, as a run killed mid-way (running)
// leaves it.
func SetRunStatus(status string) Edit {
	return Edit{"set the run status " + status, []string{`UPDATE runs SET status = ?`}, []any{status}}
}

// SetFailure sets the failure class of row r (its scores unchanged).
func SetFailure(r Row, f extractbench.Failure) Edit {
	id, args := r.rowid()
	return Edit{fmt.Sprintf("set failure %q on %+v", f, r),
		[]string{`UPDATE requests SET failure = ? WHERE rowid = ` + id}, append([]any{string(f)}, args...)}
}

// SetDocID changes the document id of row r.
func SetDocID(r Row, docID string) Edit {
	id, args := r.rowid()
	return Edit{fmt.Sprintf("set doc_id %q on %+v", docID, r),
		[]string{`UPDATE requests SET doc_id = ? WHERE rowid = ` + id}, append([]any{docID}, args...)}
}

// SetAccepted flips row r to accepted; with clear, its failure class and
// detail are cleared and every field scored right, so that the row agrees
// with itself.
func SetAccepted(r Row, clear bool) Edit {
	id, args := r.rowid()
	set := `accepted = 1`
	if clear {
		set += `, failure = NULL, failure_detail = NULL, date_ok = 1, amount_ok = 1, category_ok = 1`
	}
	return Edit{fmt.Sprintf("set accepted (clear %v) on %+v", clear, r),
		[]string{`UPDATE requests SET ` + set + ` WHERE rowid = ` + id}, args}
}

// Tamper applies edits to dir's results.db in order. An edit that changes
// no row fails t: the test would test nothing.
func Tamper(t testing.TB, dir string, edits ...Edit) {
	t.Helper()
	db, err := sql.Open("sqlite3", filepath.Join(dir, results.DBName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, e := range edits {
		for _, q := range e.stmts {
			res, err := db.Exec(q, e.args[:countArgs(q)]...)
			if err != nil {
				t.Fatalf("tamper %s: %s: %v", dir, e.what, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				t.Fatalf("tamper %s: %s changed nothing", dir, e.what)
			}
		}
	}
}

// fieldDigestsSince is the schema version whose migration added the
// digests' field columns (results' migration 17).
const fieldDigestsSince = 17

// BeforeFieldDigests rewrites dir's results.db as an extractbench of
// schema version 16 left it: its digests cover its requests rows alone
// (the field columns dropped), every column a later migration added is
// dropped too, and its user_version says 16, so that a reader migrates a
// copy as it does an older shard's.
func BeforeFieldDigests(t testing.TB, dir string) {
	t.Helper()
	db, err := sql.Open("sqlite3", filepath.Join(dir, results.DBName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	migrations := results.Migrations()
	var undo []string
	for v := len(migrations); v >= fieldDigestsSince; v-- { // newest first
		drops, ok := dropAdded(migrations[v-1])
		if !ok {
			t.Fatalf("migration %d does more than add columns: BeforeFieldDigests cannot undo it", v)
		}
		undo = append(undo, drops...)
	}
	undo = append(undo, fmt.Sprintf(`PRAGMA user_version = %d`, fieldDigestsSince-1))
	for _, q := range undo {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("rewrite %s as schema version %d: %s: %v", dir, fieldDigestsSince-1, q, err)
		}
	}
}

// addColumn is a migration's statement that adds one column.
var addColumn = regexp.MustCompile(`^ALTER TABLE (\w+) ADD COLUMN (\w+)\b`)

// dropAdded returns the statements that undo migration m, last first, and
// false when m holds a statement other than ALTER TABLE ... ADD COLUMN or
// a rewrite of the schema's text (migration 18: the result columns' CHECKs
// as comparisons), which needs no undo: the rule is the one an older
// version kept, and migrating again finds nothing left to rewrite.
func dropAdded(m string) ([]string, bool) {
	var drops []string
	for _, stmt := range strings.Split(m, ";") {
		stmt = strings.TrimSpace(stmt)
		if stmt == "" || strings.HasPrefix(stmt, "PRAGMA writable_schema") || strings.HasPrefix(stmt, "UPDATE sqlite_schema SET sql") {
			continue
		}
		g := addColumn.FindStringSubmatch(stmt)
		if g == nil {
			return nil, false
		}
		drops = append([]string{fmt.Sprintf("ALTER TABLE %s DROP COLUMN %s", g[1], g[2])}, drops...)
	}
	return drops, true
}

// countArgs is how many placeholders q has.
func countArgs(q string) int {
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
		}
	}
	return n
}

// CopyDir copies dir's results.db into a new directory named name under a
// fresh temporary directory and returns it: a shard to tamper with while
// the original stays intact.
func CopyDir(t testing.TB, dir, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, results.DBName))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, results.DBName), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
