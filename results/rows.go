package results

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"

	"github.com/extractbench/extractbench"
)

// AllRequests returns every requests row of run runID in stored order, the
// unmeasured ones (transport_kind interrupted or client) included, which
// Requests leaves out: what the run wrote, as a test or an audit checks it.
func (rd *Reader) AllRequests(ctx context.Context, runID string) ([]extractbench.Record, error) {
	var recs []extractbench.Record
	if err := rd.eachRow(ctx, func(rec *extractbench.Record) { recs = append(recs, *rec) }, `run_id = ?`, runID); err != nil {
		return nil, fmt.Errorf("read requests of run %s in %s: %w", runID, rd.dir, err)
	}
	return recs, nil
}

// TelemetryRow is one row of telemetry as stored: one sample of one
// endpoint (Endpoint "" for nvidia-smi), with the pass it belongs to.
type TelemetryRow struct {
	extractbench.PassKey
	TelemetrySample
}

// TelemetryRows returns every telemetry row of run runID in stored order,
// one per endpoint and instant: Telemetry folds the replicas of one scrape
// into one sample, this does not.
func (rd *Reader) TelemetryRows(ctx context.Context, runID string) ([]TelemetryRow, error) {
	rows, err := rd.rdb.QueryContext(ctx, `SELECT variant, mode, level, repetition, t_ns, metric, value, endpoint
		FROM telemetry WHERE run_id = ? ORDER BY rowid`, runID)
	if err != nil {
		return nil, fmt.Errorf("read telemetry of run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []TelemetryRow
	for rows.Next() {
		s := TelemetryRow{PassKey: extractbench.PassKey{RunID: runID}}
		var endpoint sql.NullString
		if err := rows.Scan(&s.Variant, &s.Mode, &s.Level, &s.Repetition, &s.TNS, &s.Metric, &s.Value, &endpoint); err != nil {
			return nil, fmt.Errorf("read telemetry of run %s: %w", runID, err)
		}
		s.Endpoint = endpoint.String
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read telemetry of run %s: %w", runID, err)
	}
	return out, nil
}

// PassColumn returns the value of the passes column named column in p, as
// stored: nil for a NULL (a nil pointer field), else the field's value
// (a pointer field dereferenced). ok is false for a name passes lacks.
func PassColumn(p *extractbench.Pass, column string) (v any, ok bool) {
	for _, c := range passColumns {
		if c.name != column {
			continue
		}
		f := reflect.ValueOf(c.ptr(p)).Elem()
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				return nil, true
			}
			f = f.Elem()
		}
		return f.Interface(), true
	}
	return nil, false
}
