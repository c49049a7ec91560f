package results

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/extractbench/extractbench"

	"github.com/extractbench/extractbench/eval"
)

// steadyRows are the requests of a pass that enter its steady-state test
// (eval.SteadyBlocksOf), with their length class c, E2E e and place rn
// (from 1): measured requests with a send and a done instant, in send
// order (ties by rowid), the first and last ? sent left out (bound
// twice). SQLite's window functions sort on disk, so nothing of the pass
// is held here.
const steadyRows = `WITH m AS (
	SELECT r.length_class AS c, r.send_ns AS s, r.done_ns - r.send_ns AS e, r.rowid AS id
	FROM requests r WHERE ` + passWhere + ` AND r.send_ns > 0 AND r.done_ns >= r.send_ns),
o AS (SELECT c, e, ROW_NUMBER() OVER (ORDER BY s, id) AS rn, COUNT(*) OVER () AS n FROM m),
t AS (SELECT c, e, rn FROM o WHERE rn > ? AND rn <= n - ?)`

// steadyMedians are, after steadyRows, each class's median E2E (cm), each
// request's block b (NTILE of the bound block count) and E2E over its
// class's median r, and each block's median ratio: a median is the middle
// row, or the mean of the two middle ones.
const steadyMedians = `,
ranked AS (SELECT c, e, ROW_NUMBER() OVER (PARTITION BY c ORDER BY e) AS i, COUNT(*) OVER (PARTITION BY c) AS cn FROM t),
cm AS (SELECT c, AVG(e) AS med FROM ranked WHERE i IN ((cn + 1) / 2, (cn + 2) / 2) GROUP BY c),
b AS (SELECT c, e, NTILE(?) OVER (ORDER BY rn) AS blk FROM t),
x AS (SELECT b.blk, CAST(b.e AS REAL) / cm.med AS r FROM b JOIN cm ON cm.c = b.c WHERE cm.med > 0),
xr AS (SELECT blk, r, ROW_NUMBER() OVER (PARTITION BY blk ORDER BY r) AS i, COUNT(*) OVER (PARTITION BY blk) AS bn FROM x),
bm AS (SELECT blk, AVG(r) AS ratio FROM xr WHERE i IN ((bn + 1) / 2, (bn + 2) / 2) GROUP BY blk),
bn AS (SELECT blk, COUNT(*) AS n FROM b GROUP BY blk)`

// PassSteadyBlocks reads the blocks of the pass's steady-state test
// (eval.SteadyBlocksOf, eval.TrendOf): its requests in send order, the
// first and last trim left out (the first wave and the drain of a closed
// loop of trim requests in flight), cut into blocks of at least
// eval.SteadyBlockSize(trim) requests, each with its median E2E-to-class
// ratio; none when fewer than eval.SteadyMinBlocks fit. One read
// transaction.
func (s *Store) PassSteadyBlocks(ctx context.Context, key extractbench.PassKey, trim int64) (eval.SteadyBlocks, error) {
	var out eval.SteadyBlocks
	if err := s.Flush(ctx); err != nil {
		return out, fmt.Errorf("steady-state blocks of pass %s: %w", key, err)
	}
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return out, fmt.Errorf("steady-state blocks of pass %s: %w", key, err)
	}
	defer func() { _ = tx.Rollback() }() // read only: nothing to keep
	trim = max(trim, 0)
	args := append(passArgs(key), trim, trim)
	var n int64
	var med sql.NullFloat64
	err = tx.QueryRowContext(ctx, steadyRows+`,
		k AS (SELECT e, ROW_NUMBER() OVER (ORDER BY e) AS i, COUNT(*) OVER () AS n FROM t)
		SELECT (SELECT COUNT(*) FROM t), (SELECT AVG(e) FROM k WHERE i IN ((n + 1) / 2, (n + 2) / 2))`, args...).Scan(&n, &med)
	if err != nil {
		return out, fmt.Errorf("steady-state blocks of pass %s: %w", key, err)
	}
	if out.Head, err = passSteadyHead(ctx, tx, args, trim); err != nil {
		return out, fmt.Errorf("steady-state head of pass %s: %w", key, err)
	}
	k := n / eval.SteadyBlockSize(trim)
	if k < eval.SteadyMinBlocks {
		return out, nil
	}
	rows, err := tx.QueryContext(ctx, steadyRows+steadyMedians+`
		SELECT bn.blk, bn.n, COALESCE(bm.ratio, 0) FROM bn LEFT JOIN bm ON bm.blk = bn.blk ORDER BY bn.blk`, append(args, k)...)
	if err != nil {
		return out, fmt.Errorf("steady-state blocks of pass %s: %w", key, err)
	}
	defer rows.Close()
	for rows.Next() {
		var blk int
		var b eval.SteadyBlock
		if err := rows.Scan(&blk, &b.N, &b.Ratio); err != nil {
			return out, fmt.Errorf("steady-state blocks of pass %s: %w", key, err)
		}
		out.Blocks = append(out.Blocks, b)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("steady-state blocks of pass %s: %w", key, err)
	}
	out.MedianE2ENS = med.Float64
	return out, nil
}

// passSteadyHead reads the pass's head (eval.SteadyHead): the first
// eval.SteadyHeadSize(trim) requests in send order against each length
// class's median over the requests after them, the last trim (the drain)
// left out; 0 when fewer than the head's own number follow it. args are
// steadyRows' (the pass's, then trim twice). The head is a few dozen rows;
// the classes' medians are computed in SQL, as the blocks' are.
func passSteadyHead(ctx context.Context, tx *sql.Tx, args []any, trim int64) (float64, error) {
	h := eval.SteadyHeadSize(trim)
	rows, err := tx.QueryContext(ctx, steadyRows+`
		SELECT COALESCE(c, ''), e, n FROM o WHERE rn <= ? ORDER BY rn`, append(args, h)...)
	if err != nil {
		return 0, err
	}
	var head []eval.SteadyRequest
	var n int64
	for rows.Next() {
		var r eval.SteadyRequest
		if err := rows.Scan(&r.Class, &r.E2ENS, &n); err != nil {
			rows.Close()
			return 0, err
		}
		head = append(head, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if n-trim-h < h {
		return 0, nil
	}
	rows, err = tx.QueryContext(ctx, steadyRows+`,
		r AS (SELECT c, e FROM o WHERE rn > ? AND rn <= n - ?),
		ranked AS (SELECT c, e, ROW_NUMBER() OVER (PARTITION BY c ORDER BY e) AS i, COUNT(*) OVER (PARTITION BY c) AS cn FROM r)
		SELECT COALESCE(c, ''), AVG(e) FROM ranked WHERE i IN ((cn + 1) / 2, (cn + 2) / 2) GROUP BY c`, append(args, h, trim)...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	medians := map[string]float64{}
	for rows.Next() {
		var c string
		var m float64
		if err := rows.Scan(&c, &m); err != nil {
			return 0, err
		}
		medians[c] = m
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	return eval.SteadyHead(head, medians), nil
}

// The decision kinds of the steady-state and client checks.
const (
	// DecisionNotSteady: a level's passes were not in steady state
	// (eval/steady.go); the reason says what was found and whether the level
	// is left out of the recommendation (acceptance.steady_state: judge) or
	// only recorded (record). FromLevel is the level.
	DecisionNotSteady = "not_steady"
	// DecisionClientBoundLeftOut: repetitions of level FromLevel were
	// client-bound while most of its repetitions were not: they are left
	// out of the level's figures (the reason names them), so that one pass
	// on a loaded machine does not decide the level.
	DecisionClientBoundLeftOut = "client_bound_left_out"
)
