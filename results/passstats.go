package results

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// A passes row is computed from its requests rows without holding them: the
// counts stream through EachPassRecord one row at a time, and the figures
// that need every row at once (percentiles, peak in flight, distinct ids,
// batch invariance) are read from SQLite, which sorts and joins on disk
// (its sorter spills to temporary files past a few MB). Memory is then the
// same for a pass of 300 documents and of a million, and the figures are
// exact: the order statistics are eval.SortedDistribution over the sorted values,
// which is eval.Describe bit for bit.

// PassOrderStats are the figures of a pass that need its rows at once.
type PassOrderStats struct {
	// Latency summaries, as eval.DescribeNS would make them from the pass's
	// records (which requests count is in passLatencies).
	TTFT      eval.Distribution // first token − send
	TTFTSched eval.Distribution // first token − scheduled
	E2E       eval.Distribution // done − send
	E2ESched  eval.Distribution // done − scheduled
	Queue     eval.Distribution // send − scheduled (client queue, lateness)
	TPOT      eval.Distribution // (last token − first token) / extractbench.Record.TPOTSteps

	// MaxInFlight is the most requests the client had in flight at once: a
	// request is in flight from t_send to t_done, and one done at t frees its
	// slot before one sent at t.
	MaxInFlight int64
	// UniqueDocs are the pass's distinct document ids; Recovered those with
	// an accepted row (eval.PassTally's). requests holds one row per
	// (pass, document), so neither exceeds the row count.
	UniqueDocs, Recovered int
}

// passLatencies lists each latency of a pass: the rows it is defined for
// (the instants it needs were recorded; NULL reads as 0, never recorded)
// and its value in nanoseconds. They are the definitions of
// MEASUREMENT.md section 3 as the passes row's columns use them.
var passLatencies = []passLatency{
	spanLatency("ttft", extractbench.ColSend, extractbench.ColFirstToken, func(p *PassOrderStats) *eval.Distribution { return &p.TTFT }),
	spanLatency("ttft_sched", extractbench.ColSched, extractbench.ColFirstToken, func(p *PassOrderStats) *eval.Distribution { return &p.TTFTSched }),
	spanLatency("e2e", extractbench.ColSend, extractbench.ColDone, func(p *PassOrderStats) *eval.Distribution { return &p.E2E }),
	spanLatency("e2e_sched", extractbench.ColSched, extractbench.ColDone, func(p *PassOrderStats) *eval.Distribution { return &p.E2ESched }),
	spanLatency("queue", extractbench.ColSched, extractbench.ColSend, func(p *PassOrderStats) *eval.Distribution { return &p.Queue }),
	{"tpot", tpotSteps + ` > 0 AND first_token_ns > 0 AND last_token_ns > first_token_ns`,
		`(last_token_ns - first_token_ns) / ` + tpotSteps, func(p *PassOrderStats) *eval.Distribution { return &p.TPOT }},
}

// spanLatency is a passLatencies entry for extractbench.Span from instant
// column a to b (extractbench.SpanSQL).
func spanLatency(name, a, b string, of func(*PassOrderStats) *eval.Distribution) passLatency {
	where, value := extractbench.SpanSQL(a, b)
	return passLatency{name, where, value, of}
}

// passLatency is one latency of a pass: the rows it is defined for and its
// value, in SQL.
type passLatency struct {
	Name      string
	Where     string // SQL condition on a requests row
	Value     string // SQL expression, integer nanoseconds
	summaryOf func(*PassOrderStats) *eval.Distribution
}

// tpotSteps is extractbench.Record.TPOTSteps in SQL: completion_tokens − 1, or the
// content chunks − 1 when the engine counted an end-of-generation token it
// never streamed (a stop with one content chunk fewer than its usage says).
// A row written before client_completion_chunks (NULL) keeps the former.
const tpotSteps = `(CASE WHEN usage_reported = 1 AND finish_reason = 'stop' AND client_completion_chunks = completion_tokens - 1
	THEN client_completion_chunks - 1 ELSE completion_tokens - 1 END)`

// passWhere selects one pass's measured rows of requests (alias r).
const passWhere = `r.run_id = ? AND r.variant = ? AND r.mode = ? AND r.level = ? AND r.repetition = ? AND r.` + measured

func passArgs(key extractbench.PassKey) []any {
	return []any{key.RunID, key.Variant, key.Mode, key.Level, key.Repetition}
}

// EachPassRecord calls fn with each measured row of the pass, in the order
// they were stored, after flushing what was added before. The record is
// fn's only for the call: nothing of the pass is kept.
func (s *Store) EachPassRecord(ctx context.Context, key extractbench.PassKey, fn func(*extractbench.Record)) error {
	if err := s.Flush(ctx); err != nil {
		return fmt.Errorf("records of pass %s: %w", key, err)
	}
	where, args, _, err := passRange(ctx, s.rdb, "", key)
	if err == nil {
		err = s.eachRecord(ctx, fn, where, args...)
	}
	if err != nil {
		return fmt.Errorf("records of pass %s: %w", key, err)
	}
	return nil
}

// PassOrderStats computes the pass's order statistics in SQLite, in one
// read transaction (one snapshot), after flushing what was added before:
// one scan counts the rows each latency is defined for and the documents,
// then each latency's values are read once, sorted by SQLite.
func (s *Store) PassOrderStats(ctx context.Context, key extractbench.PassKey) (PassOrderStats, error) {
	var st PassOrderStats
	if err := s.Flush(ctx); err != nil {
		return st, fmt.Errorf("order statistics of pass %s: %w", key, err)
	}
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return st, fmt.Errorf("order statistics of pass %s: %w", key, err)
	}
	defer func() { _ = tx.Rollback() }() // read only: nothing to keep
	where, args, _, err := passRange(ctx, tx, "", key)
	if err != nil {
		return st, fmt.Errorf("order statistics of pass %s: %w", key, err)
	}
	from := `FROM requests r WHERE ` + where + ` AND r.` + measured
	ns, err := latencyCounts(ctx, tx, from, args, &st)
	if err != nil {
		return st, fmt.Errorf("order statistics of pass %s: count the rows: %w", key, err)
	}
	for i, l := range passLatencies {
		sum, err := sortedSummary(ctx, tx, ns[i], `SELECT `+l.Value+` AS v `+from+` AND `+l.Where, args)
		if err != nil {
			return st, fmt.Errorf("order statistics of pass %s: %s: %w", key, l.Name, err)
		}
		*l.summaryOf(&st) = sum
	}
	if st.MaxInFlight, err = maxInFlight(ctx, tx, from, args); err != nil {
		return st, fmt.Errorf("order statistics of pass %s: requests in flight: %w", key, err)
	}
	return st, nil
}

// latencyCounts reads, in one scan of the pass's rows (from), its documents
// and accepted documents into st (requests holds one row per (pass,
// document): its distinct documents are its rows) and, for each of
// passLatencies, how many rows it is defined for.
func latencyCounts(ctx context.Context, q querier, from string, args []any, st *PassOrderStats) ([]int, error) {
	ns := make([]int, len(passLatencies))
	cols := `COUNT(*), COALESCE(SUM(accepted = 1), 0)`
	dst := []any{&st.UniqueDocs, &st.Recovered}
	for i, l := range passLatencies {
		cols += `, COALESCE(SUM(CASE WHEN ` + l.Where + ` THEN 1 ELSE 0 END), 0)`
		dst = append(dst, &ns[i])
	}
	return ns, q.QueryRowContext(ctx, `SELECT `+cols+` `+from, args...).Scan(dst...)
}

// sortedSummary is eval.Describe of the n integers query selects (one
// column, v), read in ascending order from SQLite and streamed through
// eval.SortedDistribution.
func sortedSummary(ctx context.Context, q querier, n int, query string, args []any) (eval.Distribution, error) {
	if n == 0 {
		return eval.Distribution{}, nil
	}
	rows, err := q.QueryContext(ctx, query+` ORDER BY v`, args...)
	if err != nil {
		return eval.Distribution{}, err
	}
	defer rows.Close()
	s := eval.NewSortedDistribution(n)
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return eval.Distribution{}, err
		}
		s.Add(float64(v))
	}
	if err := rows.Err(); err != nil {
		return eval.Distribution{}, err
	}
	return s.Distribution()
}

// maxInFlight walks the pass's send (+1) and done (−1) instants (its rows,
// from) in time order, a done before a send at the same instant, and keeps
// the peak.
func maxInFlight(ctx context.Context, q querier, from string, args []any) (int64, error) {
	sent := from + ` AND r.send_ns > 0 AND r.done_ns >= r.send_ns`
	args = append(slices.Clone(args), args...)
	rows, err := q.QueryContext(ctx, `SELECT send_ns AS t, 1 AS d `+sent+` UNION ALL SELECT done_ns, -1 `+sent+` ORDER BY t, d`, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var cur, peak int64
	for rows.Next() {
		var t, d int64
		if err := rows.Scan(&t, &d); err != nil {
			return 0, err
		}
		cur += d
		peak = max(peak, cur)
	}
	return peak, rows.Err()
}

// PassInvariance compares the pass's raw outputs with those of the pass at
// baseLevel of the same run, variant, mode and repetition, document by
// document (eval.Invariance, in SQL: a join on the requests' unique key, so
// no output is held): the documents whose output differs, and of those the
// ones whose verdict (accepted or not) differs too. A document missing from
// either pass is not compared.
func (s *Store) PassInvariance(ctx context.Context, key extractbench.PassKey, baseLevel int) (changed, verdicts int, err error) {
	if err := s.Flush(ctx); err != nil {
		return 0, 0, fmt.Errorf("batch invariance of pass %s: %w", key, err)
	}
	args := append([]any{baseLevel}, passArgs(key)...)
	err = s.rdb.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(b.accepted IS NOT r.accepted), 0)
		FROM requests r JOIN requests b ON b.run_id = r.run_id AND b.variant = r.variant AND b.mode = r.mode
			AND b.level = ? AND b.repetition = r.repetition AND b.doc_id = r.doc_id
		WHERE `+passWhere+` AND b.`+measured+`
			AND b.output IS NOT r.output`, args...).Scan(&changed, &verdicts)
	if err != nil {
		return 0, 0, fmt.Errorf("batch invariance of pass %s against level %d: %w", key, baseLevel, err)
	}
	return changed, verdicts, nil
}

// querier is what sortedSummary and maxInFlight read through: a DB or a Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}
