package results

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// Check is what Verify finds in a results directory: the figures a crash
// test compares with an uninterrupted run's.
type Check struct {
	Integrity         string           `json:"integrity"` // SQLite's integrity_check: "ok"
	Runs              int              `json:"runs"`
	Statuses          map[string]int   `json:"statuses"` // runs per status
	Passes            int              `json:"passes"`
	IncompletePasses  int              `json:"incomplete_passes"`
	Requests          int              `json:"requests"`
	DuplicateRequests int              `json:"duplicate_requests"` // rows beyond the first per (pass, document)
	Interrupted       int              `json:"interrupted_requests"`
	PassDocsMismatch  int              `json:"pass_docs_mismatch"` // passes whose docs column differs from their stored rows
	Telemetry         int              `json:"telemetry"`
	Parquet           map[string]int64 `json:"parquet_rows"` // rows per exported file; -1 when it cannot be read
	// DigestMismatch counts the passes whose rows (requests, and
	// request_fields where the digest covers them) differ from the digest
	// their run left as it ended (a shard's run writes them: SealRun), and
	// the digests whose pass is gone.
	DigestMismatch int `json:"digest_mismatch"`
	// PassFieldsMismatch counts the passes whose pass_fields rows differ
	// from the tally of their measured requests' request_fields rows, by
	// the one tally that made them in the run and the merge (eval's
	// PassAccumulator): a field's figure edited, or a field row edited,
	// added or lost since its pass row was written.
	PassFieldsMismatch int `json:"pass_fields_mismatch"`
}

// Verify reads dir's results.db (through a read-only connection) and its
// Parquet files, and counts what a crash could have broken.
func Verify(ctx context.Context, dir string) (*Check, error) {
	rd, err := OpenReadOnly(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	c := &Check{Statuses: map[string]int{}, Parquet: map[string]int64{}}
	q := func(dst any, query string) {
		if err == nil {
			if e := rd.rdb.QueryRowContext(ctx, query).Scan(dst); e != nil {
				err = fmt.Errorf("verify %s: %s: %w", dir, query, e)
			}
		}
	}
	q(&c.Integrity, `PRAGMA integrity_check`)
	q(&c.Runs, `SELECT count(*) FROM runs`)
	q(&c.Passes, `SELECT count(*) FROM passes`)
	q(&c.IncompletePasses, `SELECT count(*) FROM passes WHERE status <> 'complete'`)
	q(&c.Requests, `SELECT count(*) FROM requests`)
	q(&c.DuplicateRequests, `SELECT count(*) - (SELECT count(*) FROM (SELECT DISTINCT run_id, variant, mode, level, repetition, doc_id FROM requests)) FROM requests`)
	q(&c.Interrupted, `SELECT count(*) FROM requests WHERE transport_kind = 'interrupted'`)
	q(&c.PassDocsMismatch, `SELECT count(*) FROM passes p WHERE docs <> (SELECT count(*) FROM requests r WHERE r.run_id = p.run_id
		AND r.variant = p.variant AND r.mode = p.mode AND r.level = p.level AND r.repetition = p.repetition AND r.`+measured+`)`)
	q(&c.Telemetry, `SELECT count(*) FROM telemetry`)
	if err != nil {
		return nil, err
	}
	runs, err := rd.Runs(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		c.Statuses[r.Status]++
		if c.DigestMismatch, err = rd.digestMismatches(ctx, r.RunID, c.DigestMismatch); err != nil {
			return nil, fmt.Errorf("verify %s: %w", dir, err)
		}
		if c.PassFieldsMismatch, err = rd.passFieldsMismatches(ctx, r.RunID, c.PassFieldsMismatch); err != nil {
			return nil, fmt.Errorf("verify %s: %w", dir, err)
		}
	}
	for _, name := range []string{RequestsParquet, PassesParquet, TelemetryParquet, RequestFieldsParquet, PassFieldsParquet} {
		c.Parquet[name] = parquetRows(filepath.Join(dir, name))
	}
	return c, nil
}

func parquetRows(path string) int64 {
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return -1
	}
	defer r.Close()
	return r.NumRows()
}

// digestMismatches adds to n the passes of run runID whose rows differ
// from their digest, and the digests without a pass.
func (rd *Reader) digestMismatches(ctx context.Context, runID string, n int) (int, error) {
	digests, err := rd.Digests(ctx, runID)
	if err != nil || len(digests) == 0 {
		return n, err
	}
	keys, err := passKeys(ctx, rd.rdb, runID)
	if err != nil {
		return n, err
	}
	for _, key := range keys {
		d, ok := digests[key]
		delete(digests, key)
		if !ok {
			n++
			continue
		}
		a, err := rd.AuditPass(ctx, key, d.Columns, nil, 0)
		if err != nil {
			return n, err
		}
		if a.Rows != d.Rows || a.SHA256 != d.SHA256 {
			n++
			continue
		}
		if d.CoversFields() {
			fa, err := rd.AuditFields(ctx, key, d.FieldColumns)
			if err != nil {
				return n, err
			}
			if !fa.Matches(d) {
				n++
			}
		}
	}
	return n + len(digests), nil
}

// passFieldsMismatches adds to n the passes of run runID whose stored
// per-field figures (pass_fields) are not those their stored records'
// field rows tally to: the figures recomputed from request_fields as
// pipeline/passrow computes them, with eval's PassAccumulator. A pass
// written before schema version 16 has neither, and matches.
func (rd *Reader) passFieldsMismatches(ctx context.Context, runID string, n int) (int, error) {
	passes, err := rd.Passes(ctx, runID)
	if err != nil {
		return n, err
	}
	for _, p := range passes {
		var acc eval.PassAccumulator
		key := extractbench.PassKey{RunID: p.RunID, Variant: p.Variant, Mode: p.Mode, Level: p.Level, Repetition: p.Repetition}
		if err := rd.EachPassRequest(ctx, key, acc.Add); err != nil {
			return n, err
		}
		if !slices.Equal(acc.Tally(0, 0, nil).PerField, p.Fields) {
			n++
		}
	}
	return n, nil
}
