package results

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/extractbench/extractbench"
)

// A pass's rows are read in the order they were stored. A run writes a
// pass's rows one after another, and a merge copies them pass after pass,
// so they usually lie in one stretch of rowids: read there, the table is
// scanned in its own order (a sequential read of just the pass, no sort),
// where the pass's index would look every row up and sort them by rowid
// after. A pass spread over more than denseSpread times its row count of
// rowids (rows resumed far apart) is read through the index instead: the
// stretch would hold mostly other passes' rows.
const denseSpread = 2

// passRange is the condition (on requests, unqualified or under schema)
// that selects pass key's rows, every row, measured or not, its arguments
// and how many rows that is: its rowid stretch where the pass is dense there (the unary +
// on run_id keeps SQLite from the index, so that it scans the stretch in
// rowid order), its key otherwise. q must be the transaction the condition
// is used in, so that the stretch is that of the same snapshot.
func passRange(ctx context.Context, q querier, schema string, key extractbench.PassKey) (where string, args []any, rows int64, err error) {
	const keyWhere = `variant = ? AND mode = ? AND level = ? AND repetition = ?`
	args = passArgs(key)
	var lo, hi sql.NullInt64
	if err := q.QueryRowContext(ctx, `SELECT MIN(rowid), MAX(rowid), COUNT(*) FROM `+schema+`requests WHERE run_id = ? AND `+keyWhere, args...).Scan(&lo, &hi, &rows); err != nil {
		return "", nil, 0, fmt.Errorf("find the rows of pass %s: %w", key, err)
	}
	if !lo.Valid || hi.Int64-lo.Int64 >= denseSpread*rows {
		return `run_id = ? AND ` + keyWhere, args, rows, nil
	}
	return `rowid BETWEEN ? AND ? AND +run_id = ? AND ` + keyWhere, append([]any{lo.Int64, hi.Int64}, args...), rows, nil
}

// EachPassFigures is EachPassRecord without the long texts: the records
// lack Output, ErrorBody, Detail and FailureDetail (""), which a pass's
// tally never reads (passrow.Account.ReadPass), so that SQLite hands over
// figures, not answers.
func (s *Store) EachPassFigures(ctx context.Context, key extractbench.PassKey, fn func(*extractbench.Record)) error {
	if err := s.Flush(ctx); err != nil {
		return fmt.Errorf("figures of pass %s: %w", key, err)
	}
	where, args, _, err := passRange(ctx, s.rdb, "", key)
	if err == nil {
		err = s.eachRowOf(ctx, shortColumns(), fn, measured+` AND (`+where+`)`, args...)
	}
	if err != nil {
		return fmt.Errorf("figures of pass %s: %w", key, err)
	}
	return nil
}
