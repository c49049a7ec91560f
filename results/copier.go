package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/mattn/go-sqlite3"
)

// instantColumns are the requests columns that are instants on a run's
// clock: a merge shifts them onto the merged run's clock. Durations
// (ttft_ns, e2e_ns, ...) are differences and stay as they are.
var instantColumns = []string{"sched_ns", "send_ns", "first_byte_ns", "first_token_ns", "last_token_ns", "done_ns"}

// Copier copies request rows and telemetry from shard databases into a
// merged results database, inside SQLite (ATTACH, INSERT ... SELECT): a
// merge moves millions of rows without decoding each into Go. It has its
// own connection to the destination; the Store open on the same database
// sees the copied rows once CopyPass returns. Not safe for concurrent use.
type Copier struct {
	db  *sql.DB
	dir string
	// The destination's columns of requests and telemetry, in table order,
	// and the attached source's (a column the source lacks is copied as
	// NULL; one it has beyond the destination's is not copied).
	cols, telCols       []string
	srcCols, srcTelCols map[string]bool
}

// copierCacheKiB is the Copier's page cache, KiB (SQLite's default is 2 MiB).
// The copy appends rows in rowid order and sweeps each index over one pass's
// keys at a time, so its working set is a few pages per b-tree: a larger
// cache only holds pages that are never read again and grows a merge's RSS
// with its rows (a cache of 256 MiB took 1M rows' merge to 525 MiB; the copy
// costs the same CPU at 16 MiB as at 256 MiB).
const copierCacheKiB = 16 << 10

// OpenCopier opens dir/results.db (written by a Store, so migrated) for
// copying into.
func OpenCopier(ctx context.Context, dir string) (*Copier, error) {
	db, err := openDB(filepath.Join(dir, DBName), "immediate")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // ATTACH belongs to a connection: keep exactly one
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	// The copy is the bulk of a merge's writes into a database being built
	// (the merge moves it into place when done; a crash leaves a temporary
	// directory that the next merge clears): no fsync per commit, and a
	// cache that holds the indexes' pages while millions of rows go in.
	for _, pragma := range []string{`PRAGMA synchronous = OFF`, fmt.Sprintf(`PRAGMA cache_size = -%d`, copierCacheKiB)} {
		if _, err := db.ExecContext(ctx, pragma); err != nil {
			db.Close()
			return nil, fmt.Errorf("copy into %s: %s: %w", dir, pragma, err)
		}
	}
	// Alone on the database, the Copier writes it in place without an undo
	// journal: a WAL would take every page twice (the commit, then the
	// checkpoint into the database), and a journal in memory holds the
	// original of every page a pass's copy changes, which grows with the
	// rows already copied (each pass's copy changes the whole document
	// index), for nothing, since a kill or a failed copy leaves a database
	// to throw away either way. With another connection open (a Store),
	// SQLite keeps the WAL, and the copy goes through it.
	var mode string // what SQLite kept: off, or wal when it could not change
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode = OFF`).Scan(&mode); err != nil && !isBusy(err) {
		db.Close()
		return nil, fmt.Errorf("copy into %s: set the journal mode: %w", dir, err)
	}
	c := &Copier{db: db, dir: dir}
	if c.cols, err = tableColumns(ctx, db, "main", "requests"); err == nil {
		c.telCols, err = tableColumns(ctx, db, "main", "telemetry")
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("copy into %s: %w", dir, err)
	}
	return c, nil
}

// isBusy reports whether err is SQLite's: another connection holds the
// database.
func isBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

// tableColumns lists the columns of schema's table in table order.
func tableColumns(ctx context.Context, db querier, schema, table string) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?, ?) ORDER BY cid`, table, schema)
	if err != nil {
		return nil, fmt.Errorf("read the %s columns of %s: %w", table, schema, err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}

// Attach makes rd's database (its migrated copy, for an older schema) the
// source of the next copies, in place of the previous one.
func (c *Copier) Attach(ctx context.Context, rd *Reader) error {
	c.detach(ctx)
	path := rd.dbPath()
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if _, err := c.db.ExecContext(ctx, `ATTACH DATABASE ? AS shard`, "file:"+abs+"?mode=ro"); err != nil {
		return fmt.Errorf("attach %s: %w", path, err)
	}
	c.srcCols, c.srcTelCols = map[string]bool{}, map[string]bool{}
	for table, set := range map[string]map[string]bool{"requests": c.srcCols, "telemetry": c.srcTelCols} {
		cols, err := tableColumns(ctx, c.db, "shard", table)
		if err != nil {
			return fmt.Errorf("attach %s: %w", path, err)
		}
		for _, col := range cols {
			set[col] = true
		}
	}
	return nil
}

func (c *Copier) detach(ctx context.Context) {
	if c.srcCols != nil {
		_, _ = c.db.ExecContext(ctx, `DETACH DATABASE shard`)
		c.srcCols = nil
	}
}

// Close detaches the source and closes the connection.
func (c *Copier) Close() error {
	c.detach(context.Background())
	return c.db.Close()
}

// CopyResult is what one CopyPass did.
type CopyResult struct {
	Copied     int64    // rows inserted
	Duplicates int64    // rows left out: the destination had the (pass, document) already
	Examples   []string // the first duplicates' document ids
	Telemetry  int64    // telemetry samples copied
}

// CopyPass copies the measured request rows (interrupted ones left out, as
// every reader leaves them out), their request_fields rows and the
// telemetry of pass src of the
// attached database into pass dst of the destination, every instant shifted
// by offsetNS. A (pass, document) the destination already holds is kept
// and counted as a duplicate; maxExamples of them are named. Columns the
// source lacks are NULL.
func (c *Copier) CopyPass(ctx context.Context, src, dst extractbench.PassKey, offsetNS int64, maxExamples int) (CopyResult, error) {
	var res CopyResult
	if c.srcCols == nil {
		return res, fmt.Errorf("copy pass %s: no source attached", src)
	}
	srcKey := []any{src.RunID, src.Variant, src.Mode, src.Level, src.Repetition}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return res, fmt.Errorf("copy pass %s: %w", src, err)
	}
	defer tx.Rollback()
	where, scanArgs, total, err := passRange(ctx, tx, "shard.", src)
	if err != nil {
		return res, fmt.Errorf("copy pass %s: %w", src, err)
	}
	scan := "shard.requests WHERE " + where // the pass's rows in the order the shard stored them
	var before int64                        // the destination's rows end here: the copied ones come after
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(rowid), 0) FROM main.requests`).Scan(&before); err != nil {
		return res, fmt.Errorf("copy pass %s: %w", src, err)
	}
	sel, args := copySelect(c.cols, c.srcCols, instantColumns, dst.RunID, offsetNS)
	r, err := tx.ExecContext(ctx, `INSERT INTO main.requests (`+strings.Join(c.cols, ", ")+`)
		SELECT `+strings.Join(sel, ", ")+` FROM `+scan+` AND `+measured+`
		ORDER BY rowid
		ON CONFLICT (run_id, variant, mode, level, repetition, doc_id) DO NOTHING`, append(args, scanArgs...)...)
	if err != nil {
		return res, fmt.Errorf("copy requests of pass %s: %w", src, err)
	}
	if res.Copied, err = r.RowsAffected(); err != nil {
		return res, fmt.Errorf("copy requests of pass %s: %w", src, err)
	}
	// A (pass, document) the destination holds is left out by the unique
	// key (ON CONFLICT): the measured rows beyond those copied are the
	// duplicates. Every row copied, there is none; else the measured rows
	// are counted (a shard written twice, or one with interrupted rows) and
	// the duplicates named from the destination's rows up to before.
	if res.Copied < total {
		var measuredRows int64
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+scan+` AND `+measured, scanArgs...).Scan(&measuredRows); err != nil {
			return res, fmt.Errorf("copy pass %s: count its rows: %w", src, err)
		}
		if res.Duplicates = measuredRows - res.Copied; res.Duplicates > 0 && maxExamples > 0 {
			if res.Examples, err = duplicateExamples(ctx, tx, scan, scanArgs, dst, before, maxExamples); err != nil {
				return res, fmt.Errorf("copy pass %s: %w", src, err)
			}
		}
	}
	if res.Copied > 0 {
		if err := copyFields(ctx, tx, src, dst, before); err != nil {
			return res, fmt.Errorf("copy request fields of pass %s: %w", src, err)
		}
	}
	tsel, targs := copySelect(c.telCols, c.srcTelCols, []string{"t_ns"}, dst.RunID, offsetNS)
	r, err = tx.ExecContext(ctx, `INSERT INTO main.telemetry (`+strings.Join(c.telCols, ", ")+`)
		SELECT `+strings.Join(tsel, ", ")+` FROM shard.telemetry
		WHERE run_id = ? AND variant = ? AND mode = ? AND level = ? AND repetition = ? ORDER BY rowid`,
		append(targs, srcKey...)...)
	if err != nil {
		return res, fmt.Errorf("copy telemetry of pass %s: %w", src, err)
	}
	if res.Telemetry, err = r.RowsAffected(); err != nil {
		return res, fmt.Errorf("copy telemetry of pass %s: %w", src, err)
	}
	if err := tx.Commit(); err != nil {
		return res, fmt.Errorf("copy pass %s: %w", src, err)
	}
	return res, nil
}

// copyFields copies the request_fields rows of the requests of pass src of
// the attached database that CopyPass has just copied into pass dst (the
// destination's rows after rowid before), in their order: a duplicate's
// fields stay those of the row the destination kept.
func copyFields(ctx context.Context, tx *sql.Tx, src, dst extractbench.PassKey, before int64) error {
	cols := requestFieldColumns.names()
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = "f." + c
	}
	sel[0] = "?" // run_id: the merged run's
	_, err := tx.ExecContext(ctx, `INSERT INTO main.request_fields (`+strings.Join(cols, ", ")+`)
		SELECT `+strings.Join(sel, ", ")+` FROM shard.request_fields f
		JOIN main.requests m ON m.run_id = ? AND m.variant = f.variant AND m.mode = f.mode AND m.level = f.level
			AND m.repetition = f.repetition AND m.doc_id = f.doc_id AND m.rowid > ?
		WHERE f.run_id = ? AND f.variant = ? AND f.mode = ? AND f.level = ? AND f.repetition = ?
		ORDER BY m.rowid, f.position
		ON CONFLICT (`+strings.Join(cols[:requestFieldKeyColumns], ", ")+`) DO NOTHING`,
		dst.RunID, dst.RunID, before, src.RunID, src.Variant, src.Mode, src.Level, src.Repetition)
	return err
}

// duplicateExamples are the first maxExamples document ids of pass src of
// the attached database, in the order it stored them, whose (pass,
// document) pass dst of the destination held before the copy, in rows up to
// rowid before: the rows CopyPass left out. It runs only when some were
// left out (a shard written twice), since it looks every row of the pass up
// in the destination.
func duplicateExamples(ctx context.Context, tx *sql.Tx, scan string, scanArgs []any, dst extractbench.PassKey, before int64, maxExamples int) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT s.doc_id FROM (SELECT rowid AS rid, * FROM `+scan+` AND `+measured+`) s
		JOIN main.requests m ON m.run_id = ? AND m.variant = s.variant AND m.mode = s.mode AND m.level = s.level AND m.repetition = s.repetition AND m.doc_id = s.doc_id
		WHERE m.rowid <= ? ORDER BY s.rid LIMIT ?`, append(scanArgs, dst.RunID, before, maxExamples)...)
	if err != nil {
		return nil, fmt.Errorf("find duplicates: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("find duplicates: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find duplicates: %w", err)
	}
	return ids, nil
}

// copySelect is the select list that copies the source's columns into the
// destination's cols: run_id becomes runID, the instants are shifted by
// offsetNS (NULL stays NULL), a column the source lacks is NULL; args are
// the list's parameters in order.
func copySelect(cols []string, src map[string]bool, instants []string, runID string, offsetNS int64) ([]string, []any) {
	sel := make([]string, len(cols))
	var args []any
	for i, col := range cols {
		switch {
		case col == "run_id":
			sel[i] = "?"
			args = append(args, runID)
		case !src[col]:
			sel[i] = "NULL"
		case slices.Contains(instants, col):
			sel[i] = col + " + ?"
			args = append(args, offsetNS)
		default:
			sel[i] = col
		}
	}
	return sel, args
}
