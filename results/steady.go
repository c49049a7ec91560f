package results

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/extractbench/extractbench"

	"github.com/extractbench/extractbench/eval"
)

// trendRows are the requests of a pass that enter its trend test
// (eval.TrendGroup), with their length class c, E2E e and third (1 early,
// 3 late): measured requests with a send and a done instant, in send order
// (ties by rowid), the first and last ? sent left out (bound twice), each
// class cut in thirds by send order. SQLite's window functions sort on disk,
// so nothing of the pass is held here.
const trendRows = `WITH m AS (
	SELECT r.length_class AS c, r.send_ns AS s, r.done_ns - r.send_ns AS e, r.rowid AS id
	FROM requests r WHERE ` + passWhere + ` AND r.send_ns > 0 AND r.done_ns >= r.send_ns),
o AS (SELECT c, s, e, id, ROW_NUMBER() OVER (ORDER BY s, id) AS rn, COUNT(*) OVER () AS n FROM m),
t AS (SELECT c, s, e, id FROM o WHERE rn > ? AND rn <= n - ?),
g AS (SELECT c, e, NTILE(3) OVER (PARTITION BY c ORDER BY s, id) AS third FROM t),
x AS (SELECT c, third, e FROM g WHERE third <> 2)`

// PassTrend reads the groups of the pass's trend test (eval.TrendOf): per
// length class, its early and late requests' counts, the early requests'
// rank sum by E2E (mean ranks for ties) and both medians, leaving out the
// first and last trim requests sent (the ramp up and the drain of a closed
// loop of trim requests in flight). One read transaction.
func (s *Store) PassTrend(ctx context.Context, key extractbench.PassKey, trim int64) ([]eval.TrendGroup, error) {
	if err := s.Flush(ctx); err != nil {
		return nil, fmt.Errorf("trend test of pass %s: %w", key, err)
	}
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("trend test of pass %s: %w", key, err)
	}
	defer func() { _ = tx.Rollback() }() // read only: nothing to keep
	args := append(passArgs(key), trim, trim)
	rows, err := tx.QueryContext(ctx, trendRows+`,
		k AS (SELECT c, third, RANK() OVER (PARTITION BY c ORDER BY e) + (COUNT(*) OVER (PARTITION BY c, e) - 1) / 2.0 AS rk FROM x)
		SELECT c, third, COUNT(*), SUM(rk) FROM k GROUP BY c, third ORDER BY c, third`, args...)
	if err != nil {
		return nil, fmt.Errorf("trend test of pass %s: %w", key, err)
	}
	var groups []eval.TrendGroup
	at := map[string]int{}
	for rows.Next() {
		var c string
		var third, n int
		var ranks float64
		if err := rows.Scan(&c, &third, &n, &ranks); err != nil {
			rows.Close()
			return nil, fmt.Errorf("trend test of pass %s: %w", key, err)
		}
		i, ok := at[c]
		if !ok {
			i = len(groups)
			at[c] = i
			groups = append(groups, eval.TrendGroup{Class: c})
		}
		if third == 1 {
			groups[i].NEarly, groups[i].RankSumEarly = n, ranks
		} else {
			groups[i].NLate = n
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("trend test of pass %s: %w", key, err)
	}
	// The medians: the sorted E2E of each (class, third), of which only the
	// middle one or two are kept.
	rows, err = tx.QueryContext(ctx, trendRows+` SELECT c, third, e FROM x ORDER BY c, third, e`, args...)
	if err != nil {
		return nil, fmt.Errorf("trend test of pass %s: medians: %w", key, err)
	}
	defer rows.Close()
	var cur string
	curThird, idx := 0, 0
	for rows.Next() {
		var c string
		var third int
		var e int64
		if err := rows.Scan(&c, &third, &e); err != nil {
			return nil, fmt.Errorf("trend test of pass %s: medians: %w", key, err)
		}
		if c != cur || third != curThird {
			cur, curThird, idx = c, third, 0
		}
		g := &groups[at[c]]
		n, med := g.NEarly, &g.MedianEarly
		if third != 1 {
			n, med = g.NLate, &g.MedianLate
		}
		switch {
		case n%2 == 1 && idx == n/2:
			*med = float64(e)
		case n%2 == 0 && (idx == n/2-1 || idx == n/2):
			*med += float64(e) / 2
		}
		idx++
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("trend test of pass %s: medians: %w", key, err)
	}
	return groups, nil
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
