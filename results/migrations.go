package results

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/extractbench/extractbench"
)

// migrations are applied in order; migration i brings the database from
// user_version i to i+1. Never edit an entry that has shipped: append a new
// one (ALTER TABLE ... ADD COLUMN) and document its columns in SCHEMA.md.
//
// A request column is its Record field (record.go), the decoder that
// fills it (pipeline/client/sse_chunk.go for what an engine sends), its
// line in requestColumns, a migration here and its row in SCHEMA.md; a
// failure class needs no migration (addFailureColumns).
//
// Flags are INTEGER 0/1 with a CHECK, not BOOLEAN: go-sqlite3 returns a
// BOOLEAN column as a Go bool, which readers scanning into integers do not
// expect. Columns named *_ns are nanoseconds on the run's monotonic clock
// (instants) or durations; at_ms, started_at and ended_at are Unix
// milliseconds.
var migrations = []string{
	`
CREATE TABLE runs (
	run_id               TEXT NOT NULL PRIMARY KEY,
	fingerprint          TEXT NOT NULL,
	protocol_name        TEXT NOT NULL,
	manifest             TEXT NOT NULL,
	started_at           INTEGER,
	ended_at             INTEGER,
	status               TEXT NOT NULL CHECK (status IN ('running', 'interrupted', 'complete', 'failed')),
	simulated            INTEGER NOT NULL CHECK (simulated IN (0, 1)),
	clock_origin_unix_ns INTEGER
);

CREATE TABLE passes (
	run_id                     TEXT NOT NULL,
	variant                    TEXT NOT NULL,
	mode                       TEXT NOT NULL,
	level                      INTEGER NOT NULL,
	repetition                 INTEGER NOT NULL,
	phase                      TEXT NOT NULL,
	attempt                    INTEGER NOT NULL,
	retry_of                   INTEGER,
	requested_batch            INTEGER,
	sent_concurrency           INTEGER NOT NULL,
	batch_transport            TEXT,
	status                     TEXT NOT NULL CHECK (status IN ('complete', 'interrupted')),
	started_ns                 INTEGER,
	ended_ns                   INTEGER,
	duration_ns                INTEGER NOT NULL,
	docs                       INTEGER NOT NULL,
	accepted                   INTEGER NOT NULL,
	failures_memory            INTEGER NOT NULL,
	failures_truncation        INTEGER NOT NULL,
	failures_format            INTEGER NOT NULL,
	failures_quality           INTEGER NOT NULL,
	failures_error             INTEGER NOT NULL,
	unique_ids                 INTEGER NOT NULL,
	ttft_n                     INTEGER NOT NULL,
	ttft_p50_ns                INTEGER,
	ttft_p90_ns                INTEGER,
	ttft_p95_ns                INTEGER,
	ttft_p99_ns                INTEGER,
	ttft_min_ns                INTEGER,
	ttft_max_ns                INTEGER,
	e2e_n                      INTEGER NOT NULL,
	e2e_p50_ns                 INTEGER,
	e2e_p90_ns                 INTEGER,
	e2e_p95_ns                 INTEGER,
	e2e_p99_ns                 INTEGER,
	e2e_min_ns                 INTEGER,
	e2e_max_ns                 INTEGER,
	e2e_sched_p95_ns           INTEGER,
	client_queue_p95_ns        INTEGER,
	tpot_p50_ns                INTEGER,
	engine_queue_mean_ns       INTEGER,
	observed_max_running       INTEGER,
	observed_max_waiting       INTEGER,
	preemptions                INTEGER,
	output_tokens              INTEGER NOT NULL,
	usage_reported_share       REAL,
	output_tokens_per_s        REAL,
	accepted_per_s             REAL,
	docs_per_hour              REAL,
	date_f1                    REAL,
	amount_f1                  REAL,
	category_f1                REAL,
	peak_gpu_mem_bytes         INTEGER,
	peak_torch_allocated_bytes INTEGER,
	peak_torch_reserved_bytes  INTEGER,
	peak_kv_usage              REAL,
	verdict                    TEXT,
	verdict_reason             TEXT,
	PRIMARY KEY (run_id, variant, mode, level, repetition)
);

CREATE TABLE requests (
	run_id            TEXT NOT NULL,
	variant           TEXT NOT NULL,
	mode              TEXT NOT NULL,
	level             INTEGER NOT NULL,
	repetition        INTEGER NOT NULL,
	doc_id            TEXT NOT NULL,
	length_class      TEXT NOT NULL,
	sched_ns          INTEGER,
	send_ns           INTEGER,
	first_byte_ns     INTEGER,
	first_token_ns    INTEGER,
	last_token_ns     INTEGER,
	done_ns           INTEGER,
	ttft_ns           INTEGER,
	e2e_ns            INTEGER,
	e2e_sched_ns      INTEGER,
	client_queue_ns   INTEGER,
	tpot_ns           INTEGER,
	prompt_tokens     INTEGER,
	completion_tokens INTEGER NOT NULL,
	usage_reported    INTEGER NOT NULL CHECK (usage_reported IN (0, 1)),
	finish_reason     TEXT,
	http_status       INTEGER,
	transport_kind    TEXT,
	transport_detail  TEXT,
	engine_died       INTEGER NOT NULL CHECK (engine_died IN (0, 1)),
	error_body        TEXT,
	failure           TEXT CHECK (failure IN ('memory', 'truncation', 'format', 'quality', 'error')),
	failure_detail    TEXT,
	strict_parse_ok   INTEGER NOT NULL CHECK (strict_parse_ok IN (0, 1)),
	lenient_parse_ok  INTEGER NOT NULL CHECK (lenient_parse_ok IN (0, 1)),
	schema_ok         INTEGER NOT NULL CHECK (schema_ok IN (0, 1)),
	date_result       TEXT CHECK (date_result IN ('tp', 'fp', 'fn', 'fp_fn', 'tn')),
	amount_result     TEXT CHECK (amount_result IN ('tp', 'fp', 'fn', 'fp_fn', 'tn')),
	category_result   TEXT CHECK (category_result IN ('tp', 'fp', 'fn', 'fp_fn', 'tn')),
	date_ok           INTEGER CHECK (date_ok IN (0, 1)),
	amount_ok         INTEGER CHECK (amount_ok IN (0, 1)),
	category_ok       INTEGER CHECK (category_ok IN (0, 1)),
	pred_date         TEXT,
	pred_amount       TEXT,
	pred_category     TEXT,
	accepted          INTEGER NOT NULL CHECK (accepted IN (0, 1)),
	output            TEXT NOT NULL,
	UNIQUE (run_id, variant, mode, level, repetition, doc_id)
);

CREATE INDEX requests_doc ON requests (run_id, doc_id);
CREATE INDEX requests_failure ON requests (run_id, failure);

CREATE TABLE telemetry (
	run_id     TEXT NOT NULL,
	variant    TEXT NOT NULL,
	mode       TEXT NOT NULL,
	level      INTEGER NOT NULL,
	repetition INTEGER NOT NULL,
	t_ns       INTEGER NOT NULL,
	metric     TEXT NOT NULL,
	value      REAL NOT NULL
);

CREATE INDEX telemetry_pass ON telemetry (run_id, variant, mode, level, repetition, metric, t_ns);

CREATE TABLE decisions (
	run_id     TEXT NOT NULL,
	variant    TEXT NOT NULL,
	mode       TEXT,
	at_ms      INTEGER NOT NULL,
	kind       TEXT NOT NULL,
	from_level INTEGER,
	to_level   INTEGER,
	reason     TEXT NOT NULL
);

CREATE INDEX decisions_run ON decisions (run_id, variant, at_ms);

CREATE TABLE events (
	run_id   TEXT NOT NULL,
	variant  TEXT,
	at_ms    INTEGER NOT NULL,
	kind     TEXT NOT NULL,
	value_ns INTEGER,
	detail   TEXT
);

CREATE INDEX events_run ON events (run_id, at_ms);
`,
	// 2: the reviewed expectations beside each answer, so that the requests
	// table (and requests.parquet) judge themselves without the corpus, and a
	// resumed pass's aggregates (recall, confusion matrix) read them back.
	`
ALTER TABLE requests ADD COLUMN expected_date TEXT;
ALTER TABLE requests ADD COLUMN expected_amount TEXT;
ALTER TABLE requests ADD COLUMN expected_category TEXT;
`,
	// 3: the category confusion matrix of each pass, as JSON, so a pass row
	// says which categories the engine confuses without re-reading requests.
	`
ALTER TABLE passes ADD COLUMN category_confusion TEXT;
`,
	// 4: what a performance engineer reads first (prompt and total tokens
	// per second), steady state (captures or compilations in the engine
	// during the pass), batch invariance (outputs and verdicts that differ
	// from level 1), and the client's own count of content chunks beside the
	// engine's usage with, per pass, the requests the two disagree on.
	`
ALTER TABLE passes ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE passes ADD COLUMN prompt_tokens_per_s REAL;
ALTER TABLE passes ADD COLUMN total_tokens_per_s REAL;
ALTER TABLE passes ADD COLUMN engine_captures INTEGER;
ALTER TABLE passes ADD COLUMN outputs_changed INTEGER;
ALTER TABLE passes ADD COLUMN verdicts_changed INTEGER;
ALTER TABLE passes ADD COLUMN token_count_mismatches INTEGER;
ALTER TABLE requests ADD COLUMN client_completion_chunks INTEGER;
`,
	// 5: load as users' traffic arrives (rate sweeps): offered and achieved
	// rates, send lateness, the client's self-check (its delay, CPU and the
	// client_bound flag), TPOT tails, TTFT from the scheduled instant, and
	// latency objectives with quality (on-time requests, goodput).
	`
ALTER TABLE passes ADD COLUMN offered_rate REAL;
ALTER TABLE passes ADD COLUMN achieved_rate REAL;
ALTER TABLE passes ADD COLUMN lateness_p50_ns INTEGER;
ALTER TABLE passes ADD COLUMN lateness_p99_ns INTEGER;
ALTER TABLE passes ADD COLUMN client_delay_p99_ns INTEGER;
ALTER TABLE passes ADD COLUMN client_cpu_ns INTEGER;
ALTER TABLE passes ADD COLUMN client_cpu_share REAL;
ALTER TABLE passes ADD COLUMN client_bound INTEGER CHECK (client_bound IN (0, 1));
ALTER TABLE passes ADD COLUMN tpot_p90_ns INTEGER;
ALTER TABLE passes ADD COLUMN tpot_p99_ns INTEGER;
ALTER TABLE passes ADD COLUMN ttft_sched_p99_ns INTEGER;
ALTER TABLE passes ADD COLUMN on_time INTEGER;
ALTER TABLE passes ADD COLUMN on_time_accepted INTEGER;
ALTER TABLE passes ADD COLUMN goodput REAL;
ALTER TABLE requests ADD COLUMN on_time INTEGER CHECK (on_time IN (0, 1));
`,
	// 6: replicas (engine.urls): the endpoint each request went to and each
	// telemetry sample was read from, and per pass how many endpoints the
	// variant spread its requests over and the fewest and most one got.
	`
ALTER TABLE requests ADD COLUMN endpoint TEXT;
ALTER TABLE telemetry ADD COLUMN endpoint TEXT;
ALTER TABLE passes ADD COLUMN endpoints INTEGER;
ALTER TABLE passes ADD COLUMN endpoint_requests_min INTEGER;
ALTER TABLE passes ADD COLUMN endpoint_requests_max INTEGER;
`,
	// 7: a digest of each pass's measured request rows, written by a shard's
	// run as it ends, so that merge tells a shard's rows deleted, added or
	// edited since from the rows its run left.
	`
CREATE TABLE digests (
	run_id     TEXT NOT NULL,
	variant    TEXT NOT NULL,
	mode       TEXT NOT NULL,
	level      INTEGER NOT NULL,
	repetition INTEGER NOT NULL,
	row_count  INTEGER NOT NULL,
	sha256     TEXT NOT NULL,
	columns    TEXT NOT NULL,
	PRIMARY KEY (run_id, variant, mode, level, repetition)
);
`,
	// 8: how many engine scrapes fell while a pass's requests ran: what its
	// running, waiting and KV peaks rest on (fewer than 2 flags the pass).
	`
ALTER TABLE passes ADD COLUMN telemetry_samples INTEGER;
`,
	// 9: the prompt cache: the prompt tokens an engine took from its cache
	// per request (usage.prompt_tokens_details.cached_tokens, llama.cpp's
	// timings.cache_n), and per pass their sum and share of the prompt
	// tokens, so that a TTFT measured on a cached prompt says so.
	`
ALTER TABLE requests ADD COLUMN cached_prompt_tokens INTEGER;
ALTER TABLE passes ADD COLUMN cached_prompt_tokens INTEGER;
ALTER TABLE passes ADD COLUMN cached_prompt_share REAL;
`,
	// 10: tokenizer drift: the prompt tokens each request was expected to
	// have (the model's tokenizer and chat template, or the baseline variant
	// of the same model), and per pass how many documents the engine
	// tokenised otherwise and by how much.
	`
ALTER TABLE requests ADD COLUMN expected_prompt_tokens INTEGER;
ALTER TABLE passes ADD COLUMN prompt_drift_reference TEXT;
ALTER TABLE passes ADD COLUMN prompt_drift_compared INTEGER;
ALTER TABLE passes ADD COLUMN prompt_drift_docs INTEGER;
ALTER TABLE passes ADD COLUMN prompt_drift_median REAL;
ALTER TABLE passes ADD COLUMN prompt_drift_max REAL;
`,
	// 11: steady state without the engine's help: each pass's trend test
	// of its early against its late requests of the same length class
	// (eval/steady.go), and whether it found a trend.
	`
ALTER TABLE passes ADD COLUMN steady_trend_n INTEGER;
ALTER TABLE passes ADD COLUMN steady_trend_z REAL;
ALTER TABLE passes ADD COLUMN steady_trend_effect REAL;
ALTER TABLE passes ADD COLUMN steady INTEGER;
`,
	// 12: requests.failure without a CHECK listing the classes, so that a
	// class added to extractbench.Failures needs no migration: the store
	// refuses a class Failures does not list (requests.go), and passes gets
	// its failures_<class> column at open (addFailureColumns). SQLite cannot
	// drop a CHECK, so the table is rebuilt: the same columns in the same
	// order (migration 1's and those 2-10 added), the same UNIQUE key and
	// indexes, every row copied in one transaction.
	`
CREATE TABLE requests_v12 (
	run_id            TEXT NOT NULL,
	variant           TEXT NOT NULL,
	mode              TEXT NOT NULL,
	level             INTEGER NOT NULL,
	repetition        INTEGER NOT NULL,
	doc_id            TEXT NOT NULL,
	length_class      TEXT NOT NULL,
	sched_ns          INTEGER,
	send_ns           INTEGER,
	first_byte_ns     INTEGER,
	first_token_ns    INTEGER,
	last_token_ns     INTEGER,
	done_ns           INTEGER,
	ttft_ns           INTEGER,
	e2e_ns            INTEGER,
	e2e_sched_ns      INTEGER,
	client_queue_ns   INTEGER,
	tpot_ns           INTEGER,
	prompt_tokens     INTEGER,
	completion_tokens INTEGER NOT NULL,
	usage_reported    INTEGER NOT NULL CHECK (usage_reported IN (0, 1)),
	finish_reason     TEXT,
	http_status       INTEGER,
	transport_kind    TEXT,
	transport_detail  TEXT,
	engine_died       INTEGER NOT NULL CHECK (engine_died IN (0, 1)),
	error_body        TEXT,
	failure           TEXT,
	failure_detail    TEXT,
	strict_parse_ok   INTEGER NOT NULL CHECK (strict_parse_ok IN (0, 1)),
	lenient_parse_ok  INTEGER NOT NULL CHECK (lenient_parse_ok IN (0, 1)),
	schema_ok         INTEGER NOT NULL CHECK (schema_ok IN (0, 1)),
	date_result       TEXT CHECK (date_result IN ('tp', 'fp', 'fn', 'fp_fn', 'tn')),
	amount_result     TEXT CHECK (amount_result IN ('tp', 'fp', 'fn', 'fp_fn', 'tn')),
	category_result   TEXT CHECK (category_result IN ('tp', 'fp', 'fn', 'fp_fn', 'tn')),
	date_ok           INTEGER CHECK (date_ok IN (0, 1)),
	amount_ok         INTEGER CHECK (amount_ok IN (0, 1)),
	category_ok       INTEGER CHECK (category_ok IN (0, 1)),
	pred_date         TEXT,
	pred_amount       TEXT,
	pred_category     TEXT,
	accepted          INTEGER NOT NULL CHECK (accepted IN (0, 1)),
	output            TEXT NOT NULL,
	expected_date     TEXT,
	expected_amount   TEXT,
	expected_category TEXT,
	client_completion_chunks INTEGER,
	on_time           INTEGER CHECK (on_time IN (0, 1)),
	endpoint          TEXT,
	cached_prompt_tokens INTEGER,
	expected_prompt_tokens INTEGER,
	UNIQUE (run_id, variant, mode, level, repetition, doc_id)
);
INSERT INTO requests_v12 SELECT * FROM requests;
DROP TABLE requests;
ALTER TABLE requests_v12 RENAME TO requests;
CREATE INDEX requests_doc ON requests (run_id, doc_id);
CREATE INDEX requests_failure ON requests (run_id, failure);
`,
	// 13: what became of the engine's prompt cache before each pass
	// (protocol key cache: reset or keep): reset, kept, unsupported, or
	// failed and why.
	`
ALTER TABLE passes ADD COLUMN cache_reset TEXT;
`,
	// 14: the send order: the seed of the permutation a pass sent its
	// documents in (sweep.order: shuffle), NULL for corpus order.
	`
ALTER TABLE passes ADD COLUMN order_seed INTEGER;
`,
	// 15: the steady-state test by time blocks (eval/steady.go): the blocks
	// a pass was cut into and the highest other block's ratio over their
	// median. steady_trend_n, steady_trend_effect and steady keep their
	// sense (the requests compared, the early slowdown, the verdict) for
	// the new test; steady_trend_z, the per-request z of the old one, stays
	// with the rows that have it and is NULL from now on.
	`
ALTER TABLE passes ADD COLUMN steady_blocks INTEGER;
ALTER TABLE passes ADD COLUMN steady_spread REAL;
ALTER TABLE passes ADD COLUMN steady_head REAL;
`,
	// 16: fields declared by the protocol (issue 41): one row per request
	// and field, keyed as requests are plus the field, with the field's
	// expectation, answer, result and F1 counts; and per pass and field
	// the sums and ratios (eval's PassTally). The default fields' columns
	// of requests and passes stay as they are.
	`
CREATE TABLE request_fields (
	run_id     TEXT NOT NULL,
	variant    TEXT NOT NULL,
	mode       TEXT NOT NULL,
	level      INTEGER NOT NULL,
	repetition INTEGER NOT NULL,
	doc_id     TEXT NOT NULL,
	field      TEXT NOT NULL,
	position   INTEGER NOT NULL,
	expected   TEXT,
	got        TEXT,
	result     TEXT CHECK (result IN ('tp', 'fp', 'fn', 'fp_fn', 'tn')),
	correct    INTEGER NOT NULL CHECK (correct IN (0, 1)),
	reason     TEXT,
	tp         INTEGER NOT NULL,
	fp         INTEGER NOT NULL,
	fn         INTEGER NOT NULL,
	PRIMARY KEY (run_id, variant, mode, level, repetition, doc_id, field)
);

CREATE TABLE pass_fields (
	run_id     TEXT NOT NULL,
	variant    TEXT NOT NULL,
	mode       TEXT NOT NULL,
	level      INTEGER NOT NULL,
	repetition INTEGER NOT NULL,
	field      TEXT NOT NULL,
	position   INTEGER NOT NULL,
	tp         INTEGER NOT NULL,
	fp         INTEGER NOT NULL,
	fn         INTEGER NOT NULL,
	tn         INTEGER NOT NULL,
	unscored   INTEGER NOT NULL,
	precision  REAL NOT NULL,
	recall     REAL NOT NULL,
	f1         REAL NOT NULL,
	PRIMARY KEY (run_id, variant, mode, level, repetition, field)
);
`,
	// 17: each pass's digest covers its request_fields rows too, beside
	// its requests rows (the same form over that table), so that a merge
	// tells a field row deleted, added or edited since the run ended.
	// NULL in a digest written before: it covers the requests rows alone.
	`
ALTER TABLE digests ADD COLUMN field_row_count INTEGER;
ALTER TABLE digests ADD COLUMN field_sha256 TEXT;
ALTER TABLE digests ADD COLUMN field_columns TEXT;
`,
	// 18: the F1 result columns' CHECKs as comparisons, not IN lists. In
	// a CHECK, SQLite builds an IN list's lookup table again for every row
	// it tests (it cannot hoist it out of the row's constraints, as it does
	// in a WHERE clause): six tables a record, a sixth of the writer's CPU
	// per row. The rule is the same (NULL still passes, as it did), so no
	// row is touched: the tables' SQL text is rewritten in place, the
	// procedure SQLite's ALTER TABLE documentation gives for changing a
	// CHECK that every row already meets (migrateOne then moves
	// schema_version, so that every connection reads the schema again).
	`
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(replace(replace(sql,
	'date_result IN (''tp'', ''fp'', ''fn'', ''fp_fn'', ''tn'')', 'date_result = ''tp'' OR date_result = ''fp'' OR date_result = ''fn'' OR date_result = ''fp_fn'' OR date_result = ''tn'''),
	'amount_result IN (''tp'', ''fp'', ''fn'', ''fp_fn'', ''tn'')', 'amount_result = ''tp'' OR amount_result = ''fp'' OR amount_result = ''fn'' OR amount_result = ''fp_fn'' OR amount_result = ''tn'''),
	'category_result IN (''tp'', ''fp'', ''fn'', ''fp_fn'', ''tn'')', 'category_result = ''tp'' OR category_result = ''fp'' OR category_result = ''fn'' OR category_result = ''fp_fn'' OR category_result = ''tn''')
WHERE type = 'table' AND name = 'requests';
UPDATE sqlite_schema SET sql = replace(sql,
	'result IN (''tp'', ''fp'', ''fn'', ''fp_fn'', ''tn'')', 'result = ''tp'' OR result = ''fp'' OR result = ''fn'' OR result = ''fp_fn'' OR result = ''tn''')
WHERE type = 'table' AND name = 'request_fields';
PRAGMA writable_schema = OFF;
`,
}

// migrate brings db up to SchemaVersion, one transaction per migration (a
// new database: fresh_schema.sql's, then those after it), and refuses a database written by a newer binary: its tables may hold columns
// whose meaning this binary does not know.
func migrate(ctx context.Context, db *sql.DB) error {
	if err := migrateTo(ctx, db, len(migrations)); err != nil {
		return err
	}
	return addFailureColumns(ctx, db)
}

// migrateTo applies the migrations up to schema version (a test stops
// short of the latest to check one migration alone).
func migrateTo(ctx context.Context, db *sql.DB, version int) error {
	for {
		done, err := migrateOne(ctx, db, version)
		if err != nil || done {
			return err
		}
	}
}

// addFailureColumns adds a passes column for a failure class that
// extractbench.Failures lists and the table lacks, so that a new class
// needs no migration (requests.failure has no CHECK since migration 12: the
// store checks the class against Failures). SQLite appends it, so its place
// in the table is not its place in passColumns; both are read by name.
func addFailureColumns(ctx context.Context, db *sql.DB) error {
	missing, err := missingFailureColumns(ctx, db)
	if err != nil {
		return err
	}
	for _, c := range missing {
		if _, err := db.ExecContext(ctx, `ALTER TABLE passes ADD COLUMN `+c+` INTEGER NOT NULL DEFAULT 0`); err != nil {
			return fmt.Errorf("add passes column %s: %w", c, err)
		}
	}
	return nil
}

func missingFailureColumns(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info('passes')`)
	if err != nil {
		return nil, fmt.Errorf("list passes columns: %w", err)
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, fmt.Errorf("list passes columns: %w", err)
		}
		have[n] = true
	}
	var missing []string
	for _, f := range extractbench.Failures {
		if c := FailureColumn(f); !have[c] {
			missing = append(missing, c)
		}
	}
	return missing, rows.Err()
}

// migrateOne applies the next migration below version, if any, and reports
// whether the database was already there. user_version is read again
// inside the write transaction so that two processes opening the same
// directory cannot both apply the same migration.
func migrateOne(ctx context.Context, db *sql.DB, version int) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("begin migration: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var v int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return false, fmt.Errorf("read user_version: %w", err)
	}
	switch {
	case v > len(migrations):
		return false, fmt.Errorf("database schema version %d is newer than this binary knows (%d): use a newer extractbench", v, len(migrations))
	case v >= version:
		return true, tx.Rollback()
	}
	if v == 0 && version == len(migrations) {
		created, err := createFresh(ctx, tx)
		if err != nil {
			return false, err
		}
		if created {
			if err := tx.Commit(); err != nil {
				return false, fmt.Errorf("commit the schema: %w", err)
			}
			return false, nil // the migrations after fresh_schema.sql's version, if any, follow
		}
	}
	if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
		return false, fmt.Errorf("apply migration %d: %w", v+1, err)
	}
	if strings.Contains(migrations[v], "writable_schema") {
		// It edited sqlite_schema's text, which moves no schema cookie by
		// itself: move it, or a connection (this one too) keeps the old
		// parse. PRAGMA takes no bound parameters; the version is an int.
		var cookie int64
		if err := tx.QueryRowContext(ctx, `PRAGMA schema_version`).Scan(&cookie); err != nil {
			return false, fmt.Errorf("read schema_version after migration %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA schema_version = %d`, cookie+1)); err != nil {
			return false, fmt.Errorf("move schema_version after migration %d: %w", v+1, err)
		}
	}
	// PRAGMA takes no bound parameters; v is an int we control.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, v+1)); err != nil {
		return false, fmt.Errorf("set user_version %d: %w", v+1, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("commit migration %d: %w", v+1, err)
	}
	return false, nil
}

// Migrations returns the SQL of every migration in order (element i brings
// a database from user_version i to i+1), for tools and tests that rewrite
// a database as an older version left it (resultstest.BeforeFieldDigests).
func Migrations() []string { return slices.Clone(migrations) }
