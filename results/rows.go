package results

import (
	"context"
	"fmt"

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

// TelemetryRows returns every telemetry row of run runID in stored order,
// one per endpoint and instant: Telemetry folds the replicas of one scrape
// into one sample, this does not.
func (rd *Reader) TelemetryRows(ctx context.Context, runID string) ([]TelemetryRow, error) {
	rows, err := selectRows(ctx, rd.rdb, telemetryColumns, `telemetry WHERE run_id = ? ORDER BY rowid`, runID)
	if err != nil {
		return nil, fmt.Errorf("read telemetry of run %s: %w", runID, err)
	}
	return rows, nil
}

// PassColumn returns the value of the passes column named column in p, as
// stored: nil for NULL (a nil pointer field, or "" in a text column that
// stores it as NULL), else an int64, float64, bool or string. ok is false
// for a name passes lacks.
func PassColumn(p *extractbench.Pass, column string) (v any, ok bool) {
	for _, c := range passColumns {
		if c.name == column {
			return c.value(p), true
		}
	}
	return nil, false
}
