package results

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// driftWhere selects a pass's rows (alias r) whose prompt tokens can be
// compared with their expected count (eval.Drift's conditions).
const driftWhere = passWhere + ` AND r.usage_reported = 1 AND r.expected_prompt_tokens > 0
	AND r.expected_prompt_tokens <= 1099511627776 AND r.prompt_tokens >= 0 AND r.prompt_tokens <= 1099511627776`

// driftRel is a row's relative difference, (prompt − expected) / expected.
const driftRel = `(CAST(r.prompt_tokens - r.expected_prompt_tokens AS REAL) / r.expected_prompt_tokens)`

// PassPromptDrift is eval.DriftOf of the pass's stored rows, computed in
// SQLite (nothing of the pass is held): how many were compared, how many
// drifted beyond extractbench.PromptDriftSlack, and the median and the largest
// relative difference of those. reference is the pass's
// prompt_drift_reference; it is kept only when a row was compared.
func (s *Store) PassPromptDrift(ctx context.Context, key extractbench.PassKey, reference string) (extractbench.PromptDrift, error) {
	var d extractbench.PromptDrift
	if err := s.Flush(ctx); err != nil {
		return d, fmt.Errorf("prompt drift of pass %s: %w", key, err)
	}
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return d, fmt.Errorf("prompt drift of pass %s: %w", key, err)
	}
	defer func() { _ = tx.Rollback() }() // read only
	drifted := driftWhere + fmt.Sprintf(` AND ABS(r.prompt_tokens - r.expected_prompt_tokens) > %d`, extractbench.PromptDriftSlack)
	var compared, docs int64
	err = tx.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(CASE WHEN ABS(r.prompt_tokens - r.expected_prompt_tokens) > ? THEN 1 END)
		FROM requests r WHERE `+driftWhere, append([]any{extractbench.PromptDriftSlack}, passArgs(key)...)...).Scan(&compared, &docs)
	if err != nil {
		return d, fmt.Errorf("prompt drift of pass %s: %w", key, err)
	}
	if compared == 0 {
		return d, nil
	}
	d.Reference, d.Compared, d.Docs = reference, &compared, &docs
	if docs == 0 {
		return d, nil
	}
	// The median: the middle row, or the mean of the two middle rows.
	rows, err := tx.QueryContext(ctx, `SELECT `+driftRel+` AS v FROM requests r WHERE `+drifted+`
		ORDER BY v LIMIT ? OFFSET ?`, append(passArgs(key), 2-docs%2, (docs-1)/2)...)
	if err != nil {
		return d, fmt.Errorf("prompt drift of pass %s: median: %w", key, err)
	}
	var mid []float64
	for rows.Next() {
		var v float64
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return d, fmt.Errorf("prompt drift of pass %s: median: %w", key, err)
		}
		mid = append(mid, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return d, fmt.Errorf("prompt drift of pass %s: median: %w", key, err)
	}
	med := eval.MedianSorted(mid)
	var mx float64
	err = tx.QueryRowContext(ctx, `SELECT `+driftRel+` AS v FROM requests r WHERE `+drifted+`
		ORDER BY ABS(v) DESC, v DESC LIMIT 1`, passArgs(key)...).Scan(&mx)
	if err != nil {
		return d, fmt.Errorf("prompt drift of pass %s: max: %w", key, err)
	}
	d.Median, d.Max = &med, &mx
	return d, nil
}

// FillExpectedPromptTokens sets the expected_prompt_tokens of the pass's
// rows that have none to the prompt_tokens the run's variant ref reported
// for the same document (its first row of that document with usage; none
// of a warm-up, which is never stored): the expected count when the
// variant names no tokenizer and ref is the baseline variant of its model.
// A document ref has no usage for stays NULL.
func (s *Store) FillExpectedPromptTokens(ctx context.Context, key extractbench.PassKey, ref string) error {
	return s.write(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE requests AS r SET expected_prompt_tokens = (
				SELECT b.prompt_tokens FROM requests b
				WHERE b.run_id = r.run_id AND b.variant = ? AND b.doc_id = r.doc_id AND b.usage_reported = 1 AND b.prompt_tokens > 0
				ORDER BY b.rowid LIMIT 1)
			WHERE r.expected_prompt_tokens IS NULL AND `+passWhere, append([]any{ref}, passArgs(key)...)...)
		if err != nil {
			return fmt.Errorf("expected prompt tokens of pass %s from variant %s: %w", key, ref, err)
		}
		return nil
	})
}
