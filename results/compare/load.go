package compare

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"

	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/sizing"
)

// Side names what one side of a comparison is: a results directory and a
// variant in its latest run ("" = the run's only variant).
type Side struct {
	Dir     string `json:"dir"`
	Variant string `json:"variant"`
}

// String writes the side as ParseSide reads it.
func (s Side) String() string {
	if s.Variant == "" {
		return s.Dir
	}
	return s.Dir + ":" + s.Variant
}

// ParseSide reads DIR or DIR:variant. The variant is what follows the last
// colon, unless the whole argument is an existing directory (a path may
// contain a colon).
func ParseSide(arg string) (Side, error) {
	if arg == "" {
		return Side{}, fmt.Errorf("empty side: want DIR or DIR:variant")
	}
	if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
		return Side{Dir: arg}, nil
	}
	i := strings.LastIndex(arg, ":")
	if i <= 0 || i == len(arg)-1 {
		return Side{Dir: arg}, nil
	}
	return Side{Dir: arg[:i], Variant: arg[i+1:]}, nil
}

// loaded is one side read from its directory.
type loaded struct {
	side    Side
	run     *sizing.RunData
	db      *sql.DB
	variant string
	// expected[docID][field] says whether a field is expected non-null,
	// inferred from every scored row of the run (see inferExpected).
	expected map[string]map[string]bool
}

func (l *loaded) close() {
	if l.db != nil {
		l.db.Close()
	}
}

// load opens a side's directory read-only and resolves its variant.
func load(ctx context.Context, s Side) (*loaded, error) {
	db, err := sizing.OpenDB(s.Dir)
	if err != nil {
		return nil, err
	}
	run, err := sizing.ReadRun(ctx, db, s.Dir, "")
	if err != nil {
		db.Close()
		return nil, err
	}
	l := &loaded{side: s, run: run, db: db, variant: s.Variant}
	variants := run.Variants()
	switch {
	case len(variants) == 0:
		db.Close()
		return nil, fmt.Errorf("run %s in %s has no passes yet", run.RunID, s.Dir)
	case l.variant == "" && len(variants) == 1:
		l.variant = variants[0]
	case l.variant == "":
		db.Close()
		return nil, fmt.Errorf("%s holds variants %s: name one as %s:VARIANT", s.Dir, strings.Join(variants, ", "), s.Dir)
	default:
		found := false
		for _, v := range variants {
			found = found || v == l.variant
		}
		if !found {
			db.Close()
			return nil, fmt.Errorf("%s has no passes of variant %q (it has %s)", s.Dir, l.variant, strings.Join(variants, ", "))
		}
	}
	if l.expected, err = inferExpected(ctx, db, run.RunID); err != nil {
		db.Close()
		return nil, fmt.Errorf("read scored fields in %s: %w", s.Dir, err)
	}
	return l, nil
}

// inferExpected returns, per document and field, whether the reviewed
// expectation is a value (true) or null. Databases of schema version 2 store
// the expectations (requests.expected_*); for rows written before, a field
// scored tp, fn or fp_fn anywhere in the run had a value, tn or fp had null.
// A field never scored (every answer failed format) is taken as null, which
// leaves it out of F1 on both sides alike.
func inferExpected(ctx context.Context, db *sql.DB, runID string) (map[string]map[string]bool, error) {
	stored, err := hasColumn(ctx, db, "requests", "expected_date")
	if err != nil {
		return nil, err
	}
	expected := "NULL, NULL, NULL"
	if stored {
		expected = "expected_date, expected_amount, expected_category"
	}
	rows, err := db.QueryContext(ctx, `SELECT doc_id, date_result, amount_result, category_result, `+expected+`
		FROM requests WHERE run_id = ?`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]map[string]bool{}
	for rows.Next() {
		var id string
		var res, exp [3]sql.NullString
		if err := rows.Scan(&id, &res[0], &res[1], &res[2], &exp[0], &exp[1], &exp[2]); err != nil {
			return nil, err
		}
		for i, f := range fields {
			switch r := eval.FieldResult(res[i].String); {
			case exp[i].Valid, r == eval.TP, r == eval.FN, r == eval.FPFN:
				if out[id] == nil {
					out[id] = map[string]bool{}
				}
				out[id][f] = true
			}
		}
	}
	return out, rows.Err()
}

// hasColumn reports whether table has column (older databases lack newer columns).
func hasColumn(ctx context.Context, db *sql.DB, table, column string) (bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return false, err
		}
		if name == column {
			return true, nil
		}
	}
	return false, rows.Err()
}

// fields are the extracted fields, in report order.
var fields = []string{"date", "amount", "category"}

// placeholder stands for an expected value whose text is unknown: F1
// counting only asks whether one exists.
var placeholder = "?"

// records reads one pass of the side's variant as eval.Records, with the
// fields comparison needs (acceptance, failure, field results, prediction,
// output) and the inferred expectations.
func (l *loaded) records(ctx context.Context, mode string, level, rep int) ([]eval.Record, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT doc_id, length_class, accepted, failure, failure_detail, output,
		strict_parse_ok, lenient_parse_ok, schema_ok, date_result, amount_result, category_result,
		pred_date, pred_amount, pred_category
		FROM requests WHERE run_id = ? AND variant = ? AND mode = ? AND level = ? AND repetition = ?
		ORDER BY doc_id`, l.run.RunID, l.variant, mode, level, rep)
	if err != nil {
		return nil, fmt.Errorf("read requests of %s at %s %d repetition %d: %w", l.side, mode, level, rep, err)
	}
	defer rows.Close()
	var out []eval.Record
	for rows.Next() {
		r := eval.Record{RunID: l.run.RunID, Variant: l.variant, Mode: mode, Level: level, Repetition: rep}
		var failure, detail, dr, ar, cr, pd, pa, pc sql.NullString
		if err := rows.Scan(&r.DocID, &r.LengthClass, &r.Accepted, &failure, &detail, &r.Output,
			&r.StrictParseOK, &r.LenientParseOK, &r.SchemaOK, &dr, &ar, &cr, &pd, &pa, &pc); err != nil {
			return nil, fmt.Errorf("read requests of %s: %w", l.side, err)
		}
		r.Failure, r.FailureDetail = eval.Failure(failure.String), detail.String
		r.Date, r.Amount, r.Category = eval.FieldResult(dr.String), eval.FieldResult(ar.String), eval.FieldResult(cr.String)
		r.Prediction = eval.Prediction{Date: strPtr(pd), Amount: strPtr(pa), Category: strPtr(pc)}
		exp := l.expected[r.DocID]
		if exp["date"] {
			r.Expected.Date = &placeholder
		}
		if exp["amount"] {
			r.Expected.Amount = &placeholder
		}
		if exp["category"] {
			r.Expected.Category = &placeholder
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read requests of %s: %w", l.side, err)
	}
	return out, nil
}

func strPtr(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}
