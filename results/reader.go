package results

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// reader holds the read queries. Store embeds it (its read connections) and
// so does Reader, so that a run is read back by the writer's own code into
// the writer's own types.
type reader struct{ rdb *sql.DB }

// Reader reads a results directory without ever writing to it: report,
// compare, plan, memory and the nightly regression read through it. Only
// package results opens results.db.
//
// Older schema versions have one policy: the database is copied (SQLite's
// VACUUM INTO) to a temporary file, the copy is migrated like a database
// the writer opens, and the copy is read; the directory is never written.
// A database newer than this binary is refused.
type Reader struct {
	reader
	dir      string
	tmp      string // the migrated copy of an older database; "" when none
	unpacked string // the decompressed copy of results.db.xz; "" when none
	version  int    // the database's schema version as stored, before any migration of a copy
}

// OpenReadOnly opens dir/results.db for reading. A missing file is an error
// naming the directory, never a new database. A directory holding only
// results.db.xz (a committed reference run) is read through a decompressed
// temporary copy, removed by Close.
func OpenReadOnly(ctx context.Context, dir string) (*Reader, error) {
	path := filepath.Join(dir, DBName)
	unpacked := ""
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		xzPath := filepath.Join(dir, DBNameXZ)
		if _, xerr := os.Stat(xzPath); xerr != nil {
			return nil, Refused("open results %s: %w (is it a results directory written by extractbench run?)", dir, err)
		}
		if unpacked, err = unpackXZ(ctx, xzPath); err != nil {
			return nil, fmt.Errorf("open results %s: %w", dir, err)
		}
		path = unpacked
	} else if err != nil {
		return nil, fmt.Errorf("open results %s: %w", dir, err)
	}
	db, err := openReadOnly(path)
	if err != nil {
		if unpacked != "" {
			removeDB(unpacked)
		}
		if !cannotOpen(err) {
			return nil, fmt.Errorf("open results %s: read schema version: %w (is %s an SQLite database?)", dir, err, path)
		}
		return nil, fmt.Errorf("open results %s: %w", dir, err)
	}
	rd := &Reader{reader: reader{rdb: db}, dir: dir, unpacked: unpacked}
	var v int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		rd.Close()
		return nil, fmt.Errorf("open results %s: read schema version: %w", dir, err)
	}
	rd.version = v
	switch {
	case v > len(migrations):
		rd.Close()
		return nil, Refused("open results %s: schema version %d is newer than this binary knows (%d): use a newer extractbench", dir, v, len(migrations))
	case v == 0:
		rd.Close()
		return nil, Refused("open results %s: %s holds no extractbench tables", dir, path)
	default:
		missing, err := missingFailureColumns(ctx, db)
		if err != nil {
			rd.Close()
			return nil, fmt.Errorf("open results %s: %w", dir, err)
		}
		if len(missing) == 0 {
			return rd, nil
		}
		fallthrough // a failure class this binary knows and the database lacks
	case v < len(migrations):
		if err := rd.migrateCopy(ctx, path); err != nil {
			rd.Close()
			return nil, fmt.Errorf("open results %s (schema version %d): %w", dir, v, err)
		}
	}
	return rd, nil
}

// migrateCopy replaces the reader's connection by one to a migrated
// temporary copy of the database at path.
func (rd *Reader) migrateCopy(ctx context.Context, path string) error {
	f, err := os.CreateTemp("", "extractbench-read-*.db")
	if err != nil {
		return fmt.Errorf("copy older database: %w", err)
	}
	rd.tmp = f.Name()
	f.Close()
	os.Remove(rd.tmp) // VACUUM INTO wants a path that does not exist
	if _, err := rd.rdb.ExecContext(ctx, `VACUUM INTO ?`, rd.tmp); err != nil {
		return fmt.Errorf("copy older database: %w", err)
	}
	rd.rdb.Close()
	w, err := openDB(rd.tmp, "immediate")
	if err != nil {
		return err
	}
	err = migrate(ctx, w)
	w.Close()
	if err != nil {
		return fmt.Errorf("migrate the copy: %w", err)
	}
	rd.rdb, err = openReadOnly(rd.tmp)
	return err
}

// removeDB removes a temporary database and the -wal and -shm files that
// SQLite keeps beside a database in WAL mode, even one opened read-only.
func removeDB(path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
}

// dbPath is the file the reader reads: the migrated copy, else the
// decompressed one, else dir/results.db.
func (rd *Reader) dbPath() string {
	switch {
	case rd.tmp != "":
		return rd.tmp
	case rd.unpacked != "":
		return rd.unpacked
	}
	return filepath.Join(rd.dir, DBName)
}

// Dir is the results directory.
func (rd *Reader) Dir() string { return rd.dir }

// Close closes the database and removes a migrated or decompressed copy.
func (rd *Reader) Close() error {
	err := rd.rdb.Close()
	for _, tmp := range []string{rd.tmp, rd.unpacked} {
		if tmp != "" {
			removeDB(tmp)
		}
	}
	return err
}

// RequestFilter selects requests rows; zero fields select all, but for
// Level: with a Mode it is always a level of that mode, 0 included (a rate
// sweep's sync baseline is level 0).
type RequestFilter struct {
	Variant    string
	Mode       extractbench.Mode
	Level      int
	Repetition int
}

// Requests returns the run's requests rows matching f, in stored order.
func (rd *Reader) Requests(ctx context.Context, runID string, f RequestFilter) ([]extractbench.Record, error) {
	where, args := f.where(runID)
	recs, err := rd.records(ctx, where, args...)
	if err != nil {
		return nil, fmt.Errorf("read requests of run %s in %s: %w", runID, rd.dir, err)
	}
	return recs, nil
}

// where is the filter's condition on requests and its arguments.
func (f RequestFilter) where(runID string) (string, []any) {
	where, args := []string{"run_id = ?"}, []any{runID}
	if f.Variant != "" {
		where, args = append(where, "variant = ?"), append(args, f.Variant)
	}
	if f.Mode != "" {
		where, args = append(where, "mode = ?"), append(args, f.Mode)
	}
	if f.Level != 0 || f.Mode != "" {
		where, args = append(where, "level = ?"), append(args, f.Level)
	}
	if f.Repetition != 0 {
		where, args = append(where, "repetition = ?"), append(args, f.Repetition)
	}
	return strings.Join(where, " AND "), args
}

// TelemetryPasses lists the passes of a run that have telemetry samples.
func (rd *Reader) TelemetryPasses(ctx context.Context, runID string) (map[extractbench.PassKey]bool, error) {
	rows, err := rd.rdb.QueryContext(ctx, `SELECT DISTINCT variant, mode, level, repetition FROM telemetry WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("read telemetry passes of run %s: %w", runID, err)
	}
	defer rows.Close()
	out := map[extractbench.PassKey]bool{}
	for rows.Next() {
		k := extractbench.PassKey{RunID: runID}
		if err := rows.Scan(&k.Variant, &k.Mode, &k.Level, &k.Repetition); err != nil {
			return nil, fmt.Errorf("read telemetry passes of run %s: %w", runID, err)
		}
		out[k] = true
	}
	return out, rows.Err()
}

// fractionMetrics are the telemetry metrics that are a fraction of one
// engine's capacity (0-1): over replicas they fold by the fullest, where
// counts and bytes add up.
var fractionMetrics = []string{extractbench.MetricKVUsage, "vllm:gpu_cache_usage_perc"}

// Telemetry returns the samples of one pass for the given metrics (all
// when none are given), in time order. Samples of one scrape of several
// replicas share an instant and are folded into one, as the engine's own
// label sets are: counts and bytes summed over endpoints, a fraction
// (KV-cache usage) the fullest; Endpoint is then "".
func (rd *Reader) Telemetry(ctx context.Context, key extractbench.PassKey, metrics ...string) ([]TelemetrySample, error) {
	q := `SELECT t_ns, metric, CASE WHEN metric IN ('` + strings.Join(fractionMetrics, "', '") + `') THEN MAX(value) ELSE SUM(value) END,
		CASE WHEN COUNT(*) = 1 THEN MAX(endpoint) ELSE '' END
		FROM telemetry WHERE run_id = ? AND variant = ? AND mode = ? AND level = ? AND repetition = ?`
	args := []any{key.RunID, key.Variant, key.Mode, key.Level, key.Repetition}
	if len(metrics) > 0 {
		q += ` AND metric IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(metrics)), ", ") + `)`
		for _, m := range metrics {
			args = append(args, m)
		}
	}
	rows, err := rd.rdb.QueryContext(ctx, q+` GROUP BY t_ns, metric ORDER BY t_ns, metric`, args...)
	if err != nil {
		return nil, fmt.Errorf("read telemetry of pass %s: %w", key, err)
	}
	defer rows.Close()
	var out []TelemetrySample
	for rows.Next() {
		var s TelemetrySample
		var endpoint sql.NullString
		if err := rows.Scan(&s.TNS, &s.Metric, &s.Value, &endpoint); err != nil {
			return nil, fmt.Errorf("read telemetry of pass %s: %w", key, err)
		}
		s.Endpoint = endpoint.String
		out = append(out, s)
	}
	return out, rows.Err()
}

// RunData is one run of a results directory as every reader sees it: its
// runs row, decoded manifest, passes, events and decisions.
type RunData struct {
	Dir       string                `json:"dir"`
	Run       Run                   `json:"-"`
	Runs      int                   `json:"-"` // runs in the database
	Manifest  extractbench.Manifest `json:"-"`
	Raw       json.RawMessage       `json:"manifest"`
	Passes    []extractbench.Pass   `json:"passes"`
	Events    []Event               `json:"events"`
	Decisions []Decision            `json:"decisions"`
	// Measured counts each variant's measured requests (complete passes or
	// not): a variant interrupted mid-pass measured something and is
	// INTERRUPTED, not NOT RUN. Nil when not read (a RunData built by hand).
	Measured map[string]int64 `json:"-"`
}

// ErrNoRun is returned (wrapped in a *RefusedError) when a results database
// holds no run yet.
var ErrNoRun = errors.New("the results database holds no run yet")

// RefusedError is a reader's answer that the results cannot give what was
// asked: no results.db, no run, no complete pass, no such variant or level,
// two sides of different corpora. The caller pointed at the wrong thing;
// the disk is fine. Commands exit 2 on it, and 3 on any other reader error
// (I/O: a database that cannot be opened or read).
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Refused makes a *RefusedError from a message, as fmt.Errorf does.
func Refused(format string, a ...any) error { return &RefusedError{fmt.Errorf(format, a...)} }

// Load reads the latest run (by start time) with its passes, events and
// decisions.
func (rd *Reader) Load(ctx context.Context) (*RunData, error) {
	runs, err := rd.Runs(ctx)
	if err != nil {
		return nil, fmt.Errorf("read runs in %s: %w", rd.dir, err)
	}
	if len(runs) == 0 {
		return nil, Refused("read runs in %s: %w", rd.dir, ErrNoRun)
	}
	latest := runs[0]
	for _, r := range runs[1:] {
		if r.StartedAt >= latest.StartedAt {
			latest = r
		}
	}
	d, err := rd.loadRun(ctx, rd.dir, latest)
	if d != nil {
		d.Runs = len(runs)
	}
	return d, err
}

// LoadRun reads run runID as it stands, after flushing what was added
// before: the runner summarises a run through the same code as every reader.
func (s *Store) LoadRun(ctx context.Context, dir, runID string) (*RunData, error) {
	if err := s.Flush(ctx); err != nil {
		return nil, err
	}
	runs, err := s.Runs(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		if r.RunID == runID {
			d, err := s.loadRun(ctx, dir, r)
			if d != nil {
				d.Runs = len(runs)
			}
			return d, err
		}
	}
	return nil, fmt.Errorf("read run %s in %s: no such run", runID, dir)
}

func (r *reader) loadRun(ctx context.Context, dir string, run Run) (*RunData, error) {
	d := &RunData{Dir: dir, Run: run, Raw: run.Manifest}
	if err := json.Unmarshal(run.Manifest, &d.Manifest); err != nil {
		return nil, fmt.Errorf("decode manifest of run %s in %s: %w", run.RunID, dir, err)
	}
	var err error
	if d.Passes, err = r.Passes(ctx, run.RunID); err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	if d.Events, err = r.Events(ctx, run.RunID); err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	if d.Decisions, err = r.Decisions(ctx, run.RunID); err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	if d.Measured, err = r.measuredPerVariant(ctx, run.RunID); err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	return d, nil
}

// measuredPerVariant counts the run's measured requests per variant.
func (r *reader) measuredPerVariant(ctx context.Context, runID string) (map[string]int64, error) {
	rows, err := r.rdb.QueryContext(ctx, `SELECT variant, count(*) FROM requests WHERE run_id = ? AND `+measured+` GROUP BY variant`, runID)
	if err != nil {
		return nil, fmt.Errorf("count measured requests of run %s: %w", runID, err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var v string
		var n int64
		if err := rows.Scan(&v, &n); err != nil {
			return nil, fmt.Errorf("count measured requests of run %s: %w", runID, err)
		}
		out[v] = n
	}
	return out, rows.Err()
}

// LoadRun opens dir read-only and reads its latest run.
func LoadRun(ctx context.Context, dir string) (*RunData, error) {
	rd, err := OpenReadOnly(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return rd.Load(ctx)
}

// Simulated reports whether the run measured the built-in simulator.
func (d *RunData) Simulated() bool { return d.Run.Simulated || d.Manifest.Simulated }

// Series aggregates the run's passes by eval's one rule and judges them with
// the run's own acceptance criteria against its planned sweep.
func (d *RunData) Series() []eval.Series {
	return eval.AggregateLevels(d.Passes, d.Manifest.Acceptance, eval.PlannedOf(&d.Manifest))
}

// VariantNames lists the run's variants: those the protocol planned, in its
// order, then any other that has passes.
func (d *RunData) VariantNames() []string {
	names := d.Manifest.VariantNames()
	for _, p := range d.Passes {
		if !contains(names, p.Variant) {
			names = append(names, p.Variant)
		}
	}
	return names
}

// VariantFailure is the recorded reason a variant could not be measured in
// the run's last attempt (a variant_failed event since the last resume), or
// "". A failure before a resume is history, not the variant's state: the
// resumed attempt measured it again (or, cut short, says so), and the event
// stays in the table. A merged run's events are its shards' (their detail
// prefixed "shard I/N: "): a shard's resume ends that shard's failures only.
func (d *RunData) VariantFailure(variant string) string {
	type failure struct{ attempt, detail string }
	var open []failure
	for _, e := range d.Events {
		switch {
		case e.Kind == EventResumed:
			src := d.eventSource(e)
			open = slices.DeleteFunc(open, func(f failure) bool { return f.attempt == src })
		case e.Kind == EventVariantFail && e.Variant == variant:
			open = append(open, failure{d.eventSource(e), e.Detail})
		}
	}
	if len(open) == 0 {
		return ""
	}
	return open[len(open)-1].detail
}

// eventSource is the run an event was recorded by: "" for the run's own,
// a merged run's shard prefix ("shard 2/4: ") for a shard's.
func (d *RunData) eventSource(e Event) string {
	if d.Manifest.Merge == nil || !strings.HasPrefix(e.Detail, "shard ") {
		return ""
	}
	prefix, _, _ := strings.Cut(e.Detail, ": ")
	return prefix
}

// LastEventNS is the value of the latest event of a kind for a variant (or
// run-wide), 0 when there is none.
func (d *RunData) LastEventNS(kind, variant string) int64 {
	var v int64
	for _, e := range d.Events {
		if e.Kind == kind && (e.Variant == variant || e.Variant == "") && e.ValueNS != 0 {
			v = e.ValueNS
		}
	}
	return v
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
