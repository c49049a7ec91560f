package results

import (
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/sourcegraph/conc/pool"
)

// The files Export writes into a results directory.
const (
	RequestsParquet  = "requests.parquet"
	PassesParquet    = "passes.parquet"
	TelemetryParquet = "telemetry.parquet"
	RawTableCSV      = "raw_table.csv"
	// RequestFieldsParquet and PassFieldsParquet are the per-field
	// tables: one row per request and field, one per pass and field.
	RequestFieldsParquet = "request_fields.parquet"
	PassFieldsParquet    = "pass_fields.parquet"
)

// ExportFiles are the names of the files Export writes, in its order.
func ExportFiles() []string {
	var names []string
	for _, t := range exportTables() {
		names = append(names, t.file)
	}
	return append(names, RawTableCSV)
}

// exportBatchRows is how many rows of Go values a file's export holds in one
// batch (two batches per file are in flight: one scanned, one encoded);
// batches are appended to row groups of exportRowGroupRows.
const exportBatchRows = 4096

// Export writes the Parquet files and raw_table.csv of every run in
// dir/results.db from one snapshot, each file by its own goroutine, under a
// temporary name renamed into place so that a crash never leaves half a
// file; it returns their paths (on an error, those written). The caller
// holds the directory's lock (LockDir).
func Export(ctx context.Context, dir string) ([]string, error) {
	return export(ctx, dir, nil)
}

// export is Export leaving out the Parquet files in written, which the
// caller wrote: their paths are returned in their place all the same.
func export(ctx context.Context, dir string, written map[string]bool) ([]string, error) {
	if err := removeStaleTemps(dir); err != nil {
		return nil, fmt.Errorf("export %s: %w", dir, err)
	}
	tables := exportTables()
	txs, done, err := exportSnapshots(ctx, dir, len(tables)+1)
	if err != nil {
		return nil, err
	}
	defer done()

	paths := make([]string, len(tables)+1)
	ok := make([]bool, len(paths))
	p := pool.New().WithContext(ctx).WithCancelOnError()
	for i, t := range tables {
		paths[i] = filepath.Join(dir, t.file)
		if written[t.file] {
			ok[i] = true
			continue
		}
		p.Go(func(ctx context.Context) error {
			err := writeAtomic(paths[i], func(w io.Writer) error { return writeParquet(ctx, txs[i], w, t) })
			if err != nil {
				return fmt.Errorf("export %s: %w", paths[i], err)
			}
			ok[i] = true
			return nil
		})
	}
	csvAt := len(tables)
	paths[csvAt] = filepath.Join(dir, RawTableCSV)
	p.Go(func(ctx context.Context) error {
		if err := writeAtomic(paths[csvAt], func(w io.Writer) error { return writeRawTable(ctx, txs[csvAt], w) }); err != nil {
			return fmt.Errorf("export %s: %w", paths[csvAt], err)
		}
		ok[csvAt] = true
		return nil
	})
	if err := p.Wait(); err != nil {
		var done []string
		for i, p := range paths {
			if ok[i] {
				done = append(done, p)
			}
		}
		return done, err
	}
	return paths, nil
}

// exportGCPercent is the GC's goal (GOGC) while ExportBounded runs: the
// heap grows to 1.5 times the live one instead of twice.
const exportGCPercent = 50

// ExportBounded is Export under a tighter GC goal, for the commands whose
// peak memory is their export (a run's end, a merge). The export's live
// heap is bounded (per file two batches, a row group and the zstd
// encoders: 60-85 MB), but it makes garbage as fast as it reads rows, and
// at GOGC 100 the heap doubled it, longer the more rows: a one-pass run of
// 100,000 documents peaked at 198 MiB RSS in its last seconds against 73
// MiB during its pass, a merge at 533 MiB at 960k rows. The caller's GC
// setting is given back.
func ExportBounded(ctx context.Context, dir string) ([]string, error) {
	defer debug.SetGCPercent(debug.SetGCPercent(exportGCPercent))
	return Export(ctx, dir)
}

// ExportBoundedAfterRequests is ExportBounded for a caller that has
// written dir's requests.parquet already (Store.ExportRequests, as it read
// the rows for itself): every other file. The paths returned name it too,
// in Export's order.
func ExportBoundedAfterRequests(ctx context.Context, dir string) ([]string, error) {
	defer debug.SetGCPercent(debug.SetGCPercent(exportGCPercent))
	return export(ctx, dir, map[string]bool{RequestsParquet: true})
}

// exportSnapshot is exportSnapshots of one transaction.
func exportSnapshot(ctx context.Context, dir string) (tx *sql.Tx, done func(), err error) {
	txs, done, err := exportSnapshots(ctx, dir, 1)
	if err != nil {
		return nil, nil, err
	}
	return txs[0], done, nil
}

// exportSnapshots opens dir's results.db for an export, brought to this
// binary's schema first, and begins n read transactions on n connections
// that all read one snapshot, so that passes and requests agree even while
// a run is still writing: they begin while a BEGIN IMMEDIATE on another
// connection holds the write lock, so no commit can fall between them (a
// writer waits for it as for any other, within its busy timeout). done
// ends them and closes the database.
func exportSnapshots(ctx context.Context, dir string, n int) (txs []*sql.Tx, done func(), err error) {
	path := filepath.Join(dir, DBName)
	if _, err := os.Stat(path); err != nil {
		return nil, nil, fmt.Errorf("export %s: %w", dir, err)
	}
	if err := migrateFile(ctx, path); err != nil {
		return nil, nil, fmt.Errorf("export %s: %w", dir, err)
	}
	db, err := openDB(path, "deferred")
	if err != nil {
		return nil, nil, fmt.Errorf("export %s: %w", dir, err)
	}
	db.SetMaxOpenConns(n + 1)
	end := func() {
		for _, tx := range txs {
			tx.Rollback()
		}
		db.Close()
	}
	defer func() {
		if err != nil {
			end()
		}
	}()
	lock, err := db.Conn(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("export %s: begin read: %w", dir, err)
	}
	defer lock.Close()
	if n > 1 {
		if _, err := lock.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
			return nil, nil, fmt.Errorf("export %s: begin read: %w", dir, err)
		}
		defer lock.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)
	}
	for range n {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("export %s: begin read: %w", dir, err)
		}
		txs = append(txs, tx)
		// A deferred transaction takes its snapshot at its first read.
		var v int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&v); err != nil {
			return nil, nil, fmt.Errorf("export %s: begin read: %w", dir, err)
		}
	}
	return txs, end, nil
}

// removeStaleTemps removes the temporary files (".requests.parquet.tmp-*",
// ...) of an export that was killed before its rename.
func removeStaleTemps(dir string) error {
	for _, name := range ExportFiles() {
		stale, err := filepath.Glob(filepath.Join(dir, "."+name+".tmp-*"))
		if err != nil {
			return err
		}
		for _, f := range stale {
			if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove stale temporary file: %w", err)
			}
		}
	}
	return nil
}

// migrateFile brings an older database up to date before it is read, so that
// the export's columns exist; a current one is not written to.
func migrateFile(ctx context.Context, path string) error {
	db, err := openDB(path, "immediate")
	if err != nil {
		return err
	}
	defer db.Close()
	var v int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return fmt.Errorf("read user_version: %w", err)
	}
	if v == len(migrations) {
		return nil
	}
	return migrate(ctx, db)
}

// writeAtomic writes path through fill into a temporary file in the same
// directory, syncs it and renames it over path.
func writeAtomic(path string, fill func(w io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	// The Parquet writer closes a sink that is an io.Closer; hide Close so the
	// file can be synced first.
	if err := fill(struct{ io.Writer }{f}); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	// CreateTemp makes the file 0600; results are for every reader of the
	// directory, as report.html is.
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("chmod: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	return nil
}

// writeRawTable writes raw_table.csv: one row per pass of every run, with the
// run's protocol, fingerprint and simulated flag next to the pass's
// parameters, measurements and verdict. NULL is an empty cell; numbers are
// written as SQLite holds them (integers exactly, reals shortest-round-trip).
func writeRawTable(ctx context.Context, tx *sql.Tx, w io.Writer) error {
	cols := []string{"p.run_id", "r.protocol_name", "r.fingerprint", "r.simulated"}
	for _, c := range passColumns[1:] {
		if to, ok := exportRenames["passes"][c.name]; ok {
			cols = append(cols, "p."+c.name+" AS "+to)
			continue
		}
		cols = append(cols, "p."+c.name)
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+strings.Join(cols, ", ")+`
		FROM passes p LEFT JOIN runs r ON r.run_id = p.run_id
		ORDER BY r.rowid, p.run_id, p.variant, p.mode, p.level, p.repetition`)
	if err != nil {
		return fmt.Errorf("query passes: %w", err)
	}
	defer rows.Close()
	header, err := rows.Columns()
	if err != nil {
		return fmt.Errorf("query passes: %w", err)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("write header: %w", err)
	}
	vals := make([]sql.NullString, len(header))
	dest := make([]any, len(header))
	for i := range vals {
		dest[i] = &vals[i]
	}
	record := make([]string, len(header))
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("scan pass: %w", err)
		}
		for i, v := range vals {
			record[i] = v.String
		}
		if err := cw.Write(record); err != nil {
			return fmt.Errorf("write pass: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read passes: %w", err)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}
