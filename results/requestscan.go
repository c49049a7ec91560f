package results

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// The readers below let the report read a run of a million requests without
// holding it: the counts stream one row at a time (one scan per pass), and
// the figures that need every row of a group at once (percentiles, the
// documents whose answer changed) are read from SQLite sorted or joined on
// disk, as a passes row is computed (passstats.go). Memory is then bounded
// by what the report shows, not by the rows.

// Selection selects the measured requests rows of one variant and mode of a
// run: every pass, or only the passes listed.
type Selection struct {
	RunID   string
	Variant string
	Mode    extractbench.Mode
	// Passes are the (level, repetition) of the passes to read; nil reads
	// every row of the variant and mode, whether its pass is whole or not.
	Passes [][2]int
}

// where is the selection's condition on requests (alias r) and its
// arguments; nil Passes but a non-nil empty list selects nothing.
func (s Selection) where() (string, []any) {
	w := `r.run_id = ? AND r.variant = ? AND r.mode = ? AND r.` + measured
	args := []any{s.RunID, s.Variant, s.Mode}
	if s.Passes == nil {
		return w, args
	}
	if len(s.Passes) == 0 {
		return w + ` AND 0`, args
	}
	w += ` AND (r.level, r.repetition) IN (VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?), ", len(s.Passes)), ", ") + `)`
	for _, p := range s.Passes {
		args = append(args, p[0], p[1])
	}
	return w, args
}

// EachPassRequest calls fn with each measured row of the pass, in the order
// they were stored (Store.EachPassRecord for a reader). The record is fn's
// only for the call.
func (rd *Reader) EachPassRequest(ctx context.Context, key extractbench.PassKey, fn func(*extractbench.Record)) error {
	where, args, _, err := passRange(ctx, rd.rdb, "", key)
	if err == nil {
		err = rd.eachRecord(ctx, fn, where, args...)
	}
	if err != nil {
		return fmt.Errorf("read requests of pass %s in %s: %w", key, rd.dir, err)
	}
	return nil
}

// outcomeColumns are the requests columns EachPassOutcome reads: what
// places a request, its latencies, tokens, HTTP status and finish reason,
// its verdict and scores (the report's counts of a pass), and the texts
// it quotes of a failed request.
var outcomeColumns = []string{"run_id", "variant", "mode", "level", "repetition", "doc_id", "length_class",
	extractbench.ColSched, extractbench.ColSend, extractbench.ColFirstToken, extractbench.ColDone,
	"prompt_tokens", "completion_tokens", "finish_reason", "http_status", "failure", "failure_detail",
	"strict_parse_ok", "lenient_parse_ok", "date_result", "amount_result", "category_result", "pred_category",
	"accepted", "output", "error_body", "expected_date", "expected_amount", "expected_category"}

// EachPassOutcome is EachPassRequest for the report's counts of a pass:
// the records hold only outcomeColumns' fields (the others are zero), and
// their texts (Output, ErrorBody, FailureDetail) only where the row has a
// failure class ("" in the others), so that SQLite hands over a dozen
// fewer columns a row and no answer of a request that passed. Each
// record's request_fields are read as EachPassRequest reads them.
func (rd *Reader) EachPassOutcome(ctx context.Context, key extractbench.PassKey, fn func(*extractbench.Record)) error {
	where, args, _, err := passRange(ctx, rd.rdb, "", key)
	if err == nil {
		sc := newScanner(slices.DeleteFunc(requestColumns.loaded(), func(c column[extractbench.Record]) bool {
			return !slices.Contains(outcomeColumns, c.name)
		}))
		sc.exprs = map[string]string{}
		for _, c := range []string{"output", "error_body", "failure_detail"} {
			sc.exprs[c] = `CASE WHEN failure <> '' THEN ` + c + ` END`
		}
		err = rd.eachScanned(ctx, sc, fn, measured+` AND (`+where+`)`, args...)
	}
	if err != nil {
		return fmt.Errorf("read requests of pass %s in %s: %w", key, rd.dir, err)
	}
	return nil
}

// EachRequest calls fn with each measured row of run runID that f selects,
// in the order they were stored: Requests one row at a time.
func (rd *Reader) EachRequest(ctx context.Context, runID string, f RequestFilter, fn func(*extractbench.Record)) error {
	where, args := f.where(runID)
	if err := rd.eachRecord(ctx, fn, where, args...); err != nil {
		return fmt.Errorf("read requests of run %s in %s: %w", runID, rd.dir, err)
	}
	return nil
}

// byDocColumns are the requests columns EachRequestByDoc reads: what
// places a request and its latencies, its token counts and its outcome.
var byDocColumns = []string{"doc_id", "length_class", extractbench.ColSched, extractbench.ColSend, extractbench.ColFirstToken,
	extractbench.ColDone, "prompt_tokens", "completion_tokens", "accepted", "failure"}

// EachRequestByDoc calls fn with each measured row of the selection at one
// level, ordered by document id (byte order) and, for one document, in the
// order they were stored. The records hold only byDocColumns' fields (the
// document and its length class, the sched, send, first token and done
// instants, the prompt and completion tokens, Accepted and Failure; the
// others are zero), so that SQLite sorts a few figures a row, not whole
// rows. The record is fn's only for the call.
func (rd *Reader) EachRequestByDoc(ctx context.Context, s Selection, level int, fn func(*extractbench.Record)) error {
	sc := newScanner(slices.DeleteFunc(requestColumns.loaded(), func(c column[extractbench.Record]) bool {
		return !slices.Contains(byDocColumns, c.name)
	}))
	where, args := s.where()
	rows, err := rd.rdb.QueryContext(ctx, `SELECT `+sc.selectList()+` FROM requests r WHERE `+where+` AND r.level = ?
		ORDER BY r.doc_id, r.rowid`, append(args, level)...)
	if err != nil {
		return fmt.Errorf("read requests of %s %s level %d by document in %s: %w", s.Variant, s.Mode, level, rd.dir, err)
	}
	defer rows.Close()
	for rows.Next() {
		rec, err := sc.scan(rows)
		if err != nil {
			return fmt.Errorf("read requests of %s %s level %d by document in %s: %w", s.Variant, s.Mode, level, rd.dir, err)
		}
		fn(&rec)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read requests of %s %s level %d by document in %s: %w", s.Variant, s.Mode, level, rd.dir, err)
	}
	return nil
}

// Latency names one of the latencies of MEASUREMENT.md section 3 that a
// passes row summarises (passLatencies): "ttft", "e2e", "queue", ...
type Latency string

// The latencies the report groups.
const (
	LatencyTTFT Latency = "ttft" // first token − send
	LatencyE2E  Latency = "e2e"  // done − send
)

// GroupBy names the columns LatencyGroups groups rows by.
type GroupBy int

// The columns a latency can be grouped by; they combine (GroupLevel|GroupLengthClass).
const (
	GroupLevel GroupBy = 1 << iota
	GroupLengthClass
	GroupEndpoint
)

// Group is the key of one group of LatencyGroups: the grouped columns set,
// the others zero.
type Group struct {
	Level       int
	LengthClass string
	Endpoint    string
}

// LatencyGroups returns, per group of the selection's rows, the
// Distribution of a latency over the rows it is defined for, as
// eval.DescribeNS makes it from the records (bit for bit: the values are
// read sorted by SQLite and streamed through eval.SortedDistribution). A
// group where the latency is never defined is absent. GroupEndpoint leaves
// out rows that name no endpoint.
func (rd *Reader) LatencyGroups(ctx context.Context, s Selection, name Latency, by GroupBy) (map[Group]eval.Distribution, error) {
	out, _, err := rd.LatencyGroupsPooled(ctx, s, name, by, by)
	return out, err
}

// LatencyGroupsPooled is LatencyGroups by by and by pooled (some of by's
// columns) at once, from one read of the values sorted by pooled's groups:
// a group of by lies within one of pooled, so each receives its values in
// ascending order too, and both are those of LatencyGroups bit for bit.
func (rd *Reader) LatencyGroupsPooled(ctx context.Context, s Selection, name Latency, by, pooled GroupBy) (fine, coarse map[Group]eval.Distribution, err error) {
	i := slices.IndexFunc(passLatencies, func(l passLatency) bool { return l.Name == string(name) })
	if i < 0 {
		return nil, nil, fmt.Errorf("latency %q: no such latency", name)
	}
	if pooled&^by != 0 {
		return nil, nil, fmt.Errorf("latency %q: pooled groups %d are not within %d", name, pooled, by)
	}
	l := passLatencies[i]
	where, args := s.where()
	from := `FROM requests r WHERE ` + where + ` AND ` + l.Where
	if by&GroupEndpoint != 0 {
		from += ` AND r.endpoint <> ''`
	}
	fail := func(err error) (map[Group]eval.Distribution, map[Group]eval.Distribution, error) {
		return nil, nil, fmt.Errorf("read %s of %s %s in %s: %w", name, s.Variant, s.Mode, rd.dir, err)
	}
	tx, err := rd.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fail(err)
	}
	defer func() { _ = tx.Rollback() }() // read only: nothing to keep
	group, order := groupColumns(by), groupColumns(pooled)
	counts, pooledCounts := map[Group]int{}, map[Group]int{}
	err = eachGroup(ctx, tx, by, `SELECT `+group+`, COUNT(*) `+from+` GROUP BY `+group, args, func(g Group, v int64) {
		counts[g] = int(v)
		pooledCounts[g.within(pooled)] += int(v)
	})
	if err != nil {
		return fail(err)
	}
	sums := map[Group]*eval.SortedDistribution{}
	pooledSums := map[Group]*eval.SortedDistribution{}
	add := func(sums map[Group]*eval.SortedDistribution, counts map[Group]int, g Group, v float64) {
		d := sums[g]
		if d == nil {
			d = eval.NewSortedDistribution(counts[g])
			sums[g] = d
		}
		d.Add(v)
	}
	err = eachGroup(ctx, tx, by, `SELECT `+group+`, `+l.Value+` AS v `+from+` ORDER BY `+order+`, v`, args, func(g Group, v int64) {
		add(sums, counts, g, float64(v))
		if pooled != by {
			add(pooledSums, pooledCounts, g.within(pooled), float64(v))
		}
	})
	if err != nil {
		return fail(err)
	}
	if fine, err = distributions(sums); err == nil && pooled != by {
		coarse, err = distributions(pooledSums)
	}
	if err != nil {
		return fail(err)
	}
	if pooled == by {
		coarse = fine
	}
	return fine, coarse, nil
}

// groupColumns are the columns of requests (alias r) that by groups by, in
// Group's order.
func groupColumns(by GroupBy) string {
	var cols []string
	if by&GroupLevel != 0 {
		cols = append(cols, "r.level")
	}
	if by&GroupLengthClass != 0 {
		cols = append(cols, "COALESCE(r.length_class, '')")
	}
	if by&GroupEndpoint != 0 {
		cols = append(cols, "r.endpoint")
	}
	if len(cols) == 0 {
		cols = []string{"0"}
	}
	return strings.Join(cols, ", ")
}

// within is the group of g's rows when grouped by fewer columns.
func (g Group) within(by GroupBy) Group {
	var out Group
	if by&GroupLevel != 0 {
		out.Level = g.Level
	}
	if by&GroupLengthClass != 0 {
		out.LengthClass = g.LengthClass
	}
	if by&GroupEndpoint != 0 {
		out.Endpoint = g.Endpoint
	}
	return out
}

// distributions are the summaries of each group's sorted values.
func distributions(sums map[Group]*eval.SortedDistribution) (map[Group]eval.Distribution, error) {
	out := make(map[Group]eval.Distribution, len(sums))
	for g, d := range sums {
		var err error
		if out[g], err = d.Distribution(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// eachGroup runs a query whose columns are the groups of by, in Group's
// order, then one integer, and calls fn with each row.
func eachGroup(ctx context.Context, q querier, by GroupBy, query string, args []any, fn func(Group, int64)) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var g Group
		var endpoint sql.NullString
		var v, none int64
		var dst []any
		if by&GroupLevel != 0 {
			dst = append(dst, &g.Level)
		}
		if by&GroupLengthClass != 0 {
			dst = append(dst, &g.LengthClass)
		}
		if by&GroupEndpoint != 0 {
			dst = append(dst, &endpoint)
		}
		if len(dst) == 0 {
			dst = append(dst, &none)
		}
		if err := rows.Scan(append(dst, &v)...); err != nil {
			return err
		}
		g.Endpoint = endpoint.String
		fn(g, v)
	}
	return rows.Err()
}

// EndpointCount is one endpoint's measured requests of a selection.
type EndpointCount struct {
	Endpoint           string
	Requests, Accepted int
}

// EndpointCounts counts the selection's rows per endpoint they name, in the
// order of each endpoint's first stored request; rows naming none are left
// out.
func (rd *Reader) EndpointCounts(ctx context.Context, s Selection) ([]EndpointCount, error) {
	where, args := s.where()
	rows, err := rd.rdb.QueryContext(ctx, `SELECT r.endpoint, COUNT(*), COALESCE(SUM(r.accepted = 1), 0)
		FROM requests r WHERE `+where+` AND r.endpoint <> '' GROUP BY r.endpoint ORDER BY MIN(r.rowid)`, args...)
	if err != nil {
		return nil, fmt.Errorf("count requests per endpoint of %s %s in %s: %w", s.Variant, s.Mode, rd.dir, err)
	}
	defer rows.Close()
	var out []EndpointCount
	for rows.Next() {
		var c EndpointCount
		if err := rows.Scan(&c.Endpoint, &c.Requests, &c.Accepted); err != nil {
			return nil, fmt.Errorf("count requests per endpoint of %s %s in %s: %w", s.Variant, s.Mode, rd.dir, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ChangedDoc is one document whose raw output in a pass differs from its
// output in the base level's pass of the same repetition.
type ChangedDoc struct {
	DocID string
	// VerdictChanged: one of the two was accepted and the other not.
	VerdictChanged bool
}

// ChangedDocs lists, by document id (byte order), the documents of the pass
// whose output differs from that of the pass at baseLevel of the same run,
// variant, mode and repetition (eval.Invariance's ids, in SQL: a join on the
// requests' unique key, so no output is held). A document missing from
// either pass is not compared.
func (rd *Reader) ChangedDocs(ctx context.Context, key extractbench.PassKey, baseLevel int) ([]ChangedDoc, error) {
	args := append([]any{baseLevel}, passArgs(key)...)
	rows, err := rd.rdb.QueryContext(ctx, `SELECT r.doc_id, b.accepted IS NOT r.accepted
		FROM requests r JOIN requests b ON b.run_id = r.run_id AND b.variant = r.variant AND b.mode = r.mode
			AND b.level = ? AND b.repetition = r.repetition AND b.doc_id = r.doc_id
		WHERE `+passWhere+` AND b.`+measured+`
			AND COALESCE(b.output, '') IS NOT COALESCE(r.output, '')
		ORDER BY r.doc_id`, args...)
	if err != nil {
		return nil, fmt.Errorf("compare the answers of pass %s with level %d in %s: %w", key, baseLevel, rd.dir, err)
	}
	defer rows.Close()
	var out []ChangedDoc
	for rows.Next() {
		var c ChangedDoc
		if err := rows.Scan(&c.DocID, &c.VerdictChanged); err != nil {
			return nil, fmt.Errorf("compare the answers of pass %s with level %d in %s: %w", key, baseLevel, rd.dir, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
