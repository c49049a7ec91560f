package results

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

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

// figureColumns are the requests columns EachPassFigures reads: what a
// pass's row is tallied from (passrow.Account.ReadPass): the row's place,
// instants, tokens, timeliness and replica, its verdict and scores. Not the
// long texts, nor what no figure of a pass counts: the first byte, the
// HTTP status, the transport's kind, the engine's death, the schema check,
// the date's and amount's predictions.
var figureColumns = []string{"run_id", "variant", "mode", "level", "repetition", "doc_id", "length_class",
	extractbench.ColSched, extractbench.ColSend, extractbench.ColFirstToken, "last_token_ns", extractbench.ColDone,
	"prompt_tokens", "completion_tokens", "usage_reported", "finish_reason", "client_completion_chunks",
	"cached_prompt_tokens", "expected_prompt_tokens", "on_time", "endpoint", "failure", "strict_parse_ok",
	"lenient_parse_ok", "date_result", "amount_result", "category_result", "pred_category", "accepted",
	"expected_date", "expected_amount", "expected_category"}

// EachPassFigures is EachPassRecord reading only figureColumns: the
// records lack the long texts (Output, ErrorBody, Detail, FailureDetail)
// and the other fields no figure of a pass reads (zero), so that SQLite
// hands over figures, not answers: a quarter fewer columns a row.
func (s *Store) EachPassFigures(ctx context.Context, key extractbench.PassKey, fn func(*extractbench.Record)) error {
	if err := s.Flush(ctx); err != nil {
		return fmt.Errorf("figures of pass %s: %w", key, err)
	}
	where, args, _, err := passRange(ctx, s.rdb, "", key)
	if err == nil {
		cols := slices.DeleteFunc(requestColumns.loaded(), func(c column[extractbench.Record]) bool {
			return !slices.Contains(figureColumns, c.name)
		})
		err = s.eachRowOf(ctx, cols, fn, measured+` AND (`+where+`)`, args...)
	}
	if err != nil {
		return fmt.Errorf("figures of pass %s: %w", key, err)
	}
	return nil
}
