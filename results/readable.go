package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/mattn/go-sqlite3"
)

// leaveBusyMS bounds how long leaveReadable waits for another process's
// connection to the database: one that keeps it open keeps it in WAL mode.
const leaveBusyMS = 200

// leaveReadable copies the WAL into the database and puts it back in
// rollback-journal mode, so that it opens read-only where nothing can be
// created beside it (a read-only mount, a bucket): in WAL mode even a
// reader needs to create the -shm file. db must be the last connection of
// this process to the file. Another process that has it open keeps it in
// WAL mode, readable as before; that is not an error.
func leaveReadable(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("leave the database readable: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(`PRAGMA busy_timeout = %d`, leaveBusyMS)); err != nil {
		return fmt.Errorf("leave the database readable: %w", err)
	}
	var mode string
	if err := conn.QueryRowContext(ctx, `PRAGMA journal_mode = DELETE`).Scan(&mode); err != nil && !isBusy(err) {
		return fmt.Errorf("leave the database readable: set the rollback journal: %w", err)
	}
	return nil
}

// openReadOnly opens path for reading only and reads its schema, so that a
// file that cannot be opened says so here. A database left in WAL mode (by
// a writer that was killed, or by an older extractbench) needs its -shm
// file even to be read; where that cannot be created and no WAL file holds
// pages the database lacks, nothing can be writing it, and it is read as
// immutable.
func openReadOnly(path string) (*sql.DB, error) {
	db, err := openURI(path, "mode=ro&_busy_timeout=5000")
	if err == nil || !cannotOpen(err) {
		return db, err
	}
	if fi, serr := os.Stat(path + "-wal"); serr == nil && fi.Size() > 0 {
		return nil, fmt.Errorf("%w (its WAL file %s-wal holds pages not yet in it: open it once where it can be written, and it is copied in)", err, path)
	}
	return openURI(path, "mode=ro&immutable=1")
}

func openURI(path, query string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: query}
	db, err := sql.Open("sqlite3", u.String())
	if err != nil {
		return nil, err
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema`).Scan(&n); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// cannotOpen reports whether err is SQLite's: a file it needs beside the
// database cannot be opened or created (CANTOPEN, or READONLY when a WAL
// database's -wal or -shm cannot be made).
func cannotOpen(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrCantOpen || se.Code == sqlite3.ErrReadonly)
}
