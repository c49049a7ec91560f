package results_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
	_ "github.com/mattn/go-sqlite3"
)

// TestLoadRun_ReadOnlyDirectory is issue 40 item 5 as a user meets it: a
// finished results directory without write permission (a read-only mount)
// is read. A database left in WAL mode failed there with "unable to open
// database file": even a reader creates its -wal and -shm.
func TestLoadRun_ReadOnlyDirectory(t *testing.T) {
	dir := t.TempDir()
	key := extractbench.PassKey{RunID: "r", Variant: "v", Mode: extractbench.ModeConcurrency, Level: 1, Repetition: 1}
	resultstest.Write(t, dir, resultstest.Run{RunID: "r", Records: []extractbench.Record{
		{RunID: "r", Variant: key.Variant, Mode: key.Mode, Level: key.Level, Repetition: key.Repetition, DocID: "d1"},
	}})
	resultstest.AsReader(t, dir, func() error {
		data, err := results.LoadRun(context.Background(), dir)
		if err == nil && data.Measured["v"] != 1 {
			t.Errorf("measured %v, want v: 1", data.Measured)
		}
		return err
	})
}

// TestOpenReadOnly_WALLeftBehind: a database an older extractbench (or a
// killed writer) left in WAL mode, with no WAL file beside it, is read
// without write permission, as immutable: nothing can be writing it.
func TestOpenReadOnly_WALLeftBehind(t *testing.T) {
	dir := t.TempDir()
	resultstest.Write(t, dir, resultstest.Run{RunID: "r"})
	db, err := sql.Open("sqlite3", filepath.Join(dir, results.DBName))
	if err != nil {
		t.Fatal(err)
	}
	var mode string
	err = db.QueryRow(`PRAGMA journal_mode = WAL`).Scan(&mode)
	db.Close() // the last connection copies the WAL in and removes it
	if err != nil || mode != "wal" {
		t.Fatalf("set WAL: %q, %v", mode, err)
	}
	resultstest.AsReader(t, dir, func() error {
		rd, err := results.OpenReadOnly(context.Background(), dir)
		if err != nil {
			return err
		}
		defer rd.Close()
		if runs, err := rd.Runs(context.Background()); err != nil || len(runs) != 1 {
			t.Errorf("runs = %d, %v; want 1", len(runs), err)
		}
		return nil
	})
}
