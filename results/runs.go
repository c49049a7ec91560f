package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The run statuses stored in runs.status.
const (
	RunRunning     = "running"
	RunInterrupted = "interrupted"
	RunComplete    = "complete"
	RunFailed      = "failed"
)

// Run is one row of the runs table: one invocation of a protocol, pinned by
// its manifest and fingerprint. A resumed run keeps its RunID.
type Run struct {
	RunID        string
	Fingerprint  string // content hash of the manifest (MEASUREMENT.md section 1)
	ProtocolName string
	Manifest     json.RawMessage
	StartedAt    int64 // Unix milliseconds; 0 = unset (NULL)
	EndedAt      int64 // Unix milliseconds; 0 = unset (NULL): still running, or never ended cleanly
	Status       string
	Simulated    bool // the engine was the built-in simulator: figures say nothing about a GPU

	// ClockOriginNS is the Unix time in nanoseconds of the run clock's
	// origin: every *_ns instant is relative to it, and a resumed run keeps
	// it so that instants stay comparable. 0 = unset (NULL).
	ClockOriginNS int64
}

// runColumns lists every runs column, in table order: the one list
// CreateRun and the readers derive from (see requestColumns). A run's
// Parquet context (runContextFields) is read from its row in SQL.
var runColumns = columns[Run]{
	{name: "run_id", kind: text, value: func(r *Run) any { return r.RunID }, load: func(r *Run, c *cell) { r.RunID = c.s }},
	{name: "fingerprint", kind: text, value: func(r *Run) any { return r.Fingerprint }, load: func(r *Run, c *cell) { r.Fingerprint = c.s }},
	{name: "protocol_name", kind: text, value: func(r *Run) any { return r.ProtocolName }, load: func(r *Run, c *cell) { r.ProtocolName = c.s }},
	{name: "manifest", kind: text, value: func(r *Run) any { return string(r.Manifest) }, load: func(r *Run, c *cell) { r.Manifest = json.RawMessage(c.s) }},
	{name: "started_at", kind: integer, nullable: true, value: func(r *Run) any { return nullInt(r.StartedAt) }, load: func(r *Run, c *cell) { r.StartedAt = c.i }},
	{name: "ended_at", kind: integer, nullable: true, value: func(r *Run) any { return nullInt(r.EndedAt) }, load: func(r *Run, c *cell) { r.EndedAt = c.i }},
	{name: "status", kind: text, value: func(r *Run) any { return r.Status }, load: func(r *Run, c *cell) { r.Status = c.s }},
	{name: "simulated", kind: flag, value: func(r *Run) any { return r.Simulated }, load: func(r *Run, c *cell) { r.Simulated = c.i != 0 }},
	{name: "clock_origin_unix_ns", kind: integer, nullable: true, value: func(r *Run) any { return nullInt(r.ClockOriginNS) }, load: func(r *Run, c *cell) { r.ClockOriginNS = c.i }},
}

func validRunStatus(s string) bool {
	switch s {
	case RunRunning, RunInterrupted, RunComplete, RunFailed:
		return true
	}
	return false
}

// CreateRun inserts r. A run id that exists already is an error: a resumed run
// changes its status with SetRunStatus instead.
func (s *Store) CreateRun(ctx context.Context, r Run) error {
	if r.RunID == "" {
		return errors.New("create run: empty run id")
	}
	if !validRunStatus(r.Status) {
		return fmt.Errorf("create run %s: status %q is not running, interrupted, complete or failed", r.RunID, r.Status)
	}
	manifest := s.secrets.redact(string(r.Manifest))
	if manifest == "" {
		manifest = "{}"
	}
	if !json.Valid([]byte(manifest)) {
		return fmt.Errorf("create run %s: manifest is not valid JSON", r.RunID)
	}
	r.Manifest = json.RawMessage(manifest)
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, runColumns.insertSQL("runs", 1, ""), runColumns.values(nil, &r)...); err != nil {
			return fmt.Errorf("create run %s: %w", r.RunID, err)
		}
		return nil
	})
}

// LatestRun returns the run created last, or nil and no error when the
// database holds none. The runner reads it to decide whether to resume.
func (r *reader) LatestRun(ctx context.Context) (*Run, error) {
	runs, err := selectRows(ctx, r.rdb, runColumns, `runs ORDER BY rowid DESC LIMIT 1`)
	if err != nil {
		return nil, fmt.Errorf("read latest run: %w", err)
	}
	if len(runs) == 0 {
		return nil, nil
	}
	return &runs[0], nil
}

// RunsIn returns the runs the results directory dir holds, oldest first:
// none when it has no results.db yet. A results.db that cannot be opened is
// a *RefusedError wrapping why: not a directory for a writer to take over.
func RunsIn(ctx context.Context, dir string) ([]Run, error) {
	if _, err := os.Stat(filepath.Join(dir, DBName)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	rd, err := OpenReadOnly(ctx, dir)
	if err != nil {
		return nil, &RefusedError{err}
	}
	defer rd.Close()
	runs, err := rd.Runs(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the runs in %s: %w", dir, err)
	}
	return runs, nil
}

// Runs returns every run, oldest first.
func (r *reader) Runs(ctx context.Context) ([]Run, error) {
	runs, err := selectRows(ctx, r.rdb, runColumns, `runs ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	return runs, nil
}

// SetRunStatus sets the status of run runID and its end time (Unix ms; 0
// stores NULL, as when a resumed run goes back to running). A run set back
// to running loses its digests (SealRun). It is an error if the run does not
// exist.
func (s *Store) SetRunStatus(ctx context.Context, runID, status string, endedAt int64) error {
	if !validRunStatus(status) {
		return fmt.Errorf("set status of run %s: status %q is not running, interrupted, complete or failed", runID, status)
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, ended_at = ? WHERE run_id = ?`,
			status, nullInt(endedAt), runID)
		if err != nil {
			return fmt.Errorf("set status of run %s: %w", runID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("set status of run %s: %w", runID, err)
		} else if n == 0 {
			return fmt.Errorf("set status of run %s: no such run", runID)
		}
		if status == RunRunning {
			// Its digests describe the rows as it ended; it is about to write more.
			if _, err := tx.ExecContext(ctx, `DELETE FROM digests WHERE run_id = ?`, runID); err != nil {
				return fmt.Errorf("set status of run %s: drop its digests: %w", runID, err)
			}
		}
		return nil
	})
}

// runTables are the tables that hold a run's rows, by run_id; runs last.
var runTables = []string{"requests", "passes", "telemetry", "decisions", "events", "digests", "runs"}

// DiscardRun removes run runID and every row of it when it measured
// nothing: no request and no pass was recorded (a run whose engine failed
// its pre-flight, such as a model the engine does not serve). Such a run
// holds nothing to resume or report, and left behind it would block its
// directory: a new run there is refused, and -resume of a corrected
// protocol is refused by its fingerprint. It reports whether the run was
// removed, and how many runs the database still holds; a run that measured
// anything is never removed.
func (s *Store) DiscardRun(ctx context.Context, runID string) (discarded bool, left int, err error) {
	err = s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var measured int
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM requests WHERE run_id = ?) + (SELECT count(*) FROM passes WHERE run_id = ?)`,
			runID, runID).Scan(&measured); err != nil {
			return fmt.Errorf("discard run %s: count what it measured: %w", runID, err)
		}
		if measured == 0 {
			for _, table := range runTables {
				if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE run_id = ?`, runID); err != nil {
					return fmt.Errorf("discard run %s: delete its %s: %w", runID, table, err)
				}
			}
			discarded = true
		}
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&left)
	})
	return discarded, left, err
}

// SetRunSimulated sets whether run runID measured a simulated engine: known
// once an engine says what it is (its /version), after the run was created.
func (s *Store) SetRunSimulated(ctx context.Context, runID string, simulated bool) error {
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET simulated = ? WHERE run_id = ?`, simulated, runID)
		if err != nil {
			return fmt.Errorf("set simulated of run %s: %w", runID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("set simulated of run %s: %w", runID, err)
		} else if n == 0 {
			return fmt.Errorf("set simulated of run %s: no such run", runID)
		}
		return nil
	})
}

// UpdateManifest replaces the manifest of run runID, as when the engine and
// GPU facts become known after the run was created. manifest is marshalled to
// JSON; a json.RawMessage is stored as is. The fingerprint is not changed: it
// covers only what was pinned before the run started.
func (s *Store) UpdateManifest(ctx context.Context, runID string, manifest any) error {
	b, ok := manifest.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(manifest); err != nil {
			return fmt.Errorf("update manifest of run %s: %w", runID, err)
		}
	}
	b = []byte(s.secrets.redact(string(b)))
	if !json.Valid(b) {
		return fmt.Errorf("update manifest of run %s: not valid JSON", runID)
	}
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET manifest = ? WHERE run_id = ?`, string(b), runID)
		if err != nil {
			return fmt.Errorf("update manifest of run %s: %w", runID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("update manifest of run %s: %w", runID, err)
		} else if n == 0 {
			return fmt.Errorf("update manifest of run %s: no such run", runID)
		}
		return nil
	})
}

// nullInt stores 0 as NULL: the zero of an instant or a count that is
// unknown.
func nullInt[T int | int64](v T) any {
	if v == 0 {
		return nil
	}
	return int64(v)
}

// nullStr stores "" as NULL.
func nullStr[T ~string](v T) any {
	if v == "" {
		return nil
	}
	return string(v)
}
