package results

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestExportPartitioned_Fields: the partitioned export writes
// request_fields and pass_fields as datasets of their own, partitioned as
// requests are (TABLE/variant=V/level=L/part-RUN.parquet), read back with
// arrow-go: each partition holds exactly the flat file's rows of its run,
// variant and level, in its order, less the partition columns, typed as
// the flat file is. Before, -partitioned wrote neither table.
func TestExportPartitioned_Fields(t *testing.T) {
	s, dir := MustOpen(t)
	fillStore(t, s, 40)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	files, err := ExportPartitioned(ctx, dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Export(ctx, dir); err != nil {
		t.Fatal(err)
	}
	written := map[string]bool{}
	for _, f := range files {
		written[f] = true
	}
	parts := []struct {
		run, variant string
		level        int64
		fields       int // request_fields rows: 3 per request (fillStore)
	}{{"run-1", "ref", 1, 60}, {"run-1", "ref", 2, 60}, {"run-2", "q4", 4, 15}}
	for _, tc := range []struct {
		dataset, flat string
		rows          func(fields int) int
		types         map[string]arrow.DataType
	}{
		{RequestFieldsDataset, RequestFieldsParquet, func(n int) int { return n }, map[string]arrow.DataType{
			"run_id": arrow.BinaryTypes.String, "doc_id": arrow.BinaryTypes.String, "field": arrow.BinaryTypes.String,
			"position": arrow.PrimitiveTypes.Int64, "expected": arrow.BinaryTypes.String, "correct": arrow.FixedWidthTypes.Boolean,
			"tp": arrow.PrimitiveTypes.Int64, "fn": arrow.PrimitiveTypes.Int64, "model": arrow.BinaryTypes.String}},
		{PassFieldsDataset, PassFieldsParquet, func(int) int { return 3 }, map[string]arrow.DataType{
			"run_id": arrow.BinaryTypes.String, "mode": arrow.BinaryTypes.String, "field": arrow.BinaryTypes.String,
			"tn": arrow.PrimitiveTypes.Int64, "unscored": arrow.PrimitiveTypes.Int64, "f1": arrow.PrimitiveTypes.Float64}},
	} {
		full, all := readParquet(t, filepath.Join(dir, tc.flat))
		col := func(name string) int { return full.FieldIndices(name)[0] }
		runCol, variantCol, levelCol := col("run_id"), col("variant"), col("level")
		for _, p := range parts {
			f := filepath.Join(dir, tc.dataset, "variant="+p.variant, fmt.Sprintf("level=%d", p.level), "part-"+p.run+".parquet")
			if !written[f] {
				t.Errorf("%s was not written (wrote %v)", f, files)
				continue
			}
			schema, rows := readParquet(t, f)
			var want [][]any
			for _, r := range all {
				if r[runCol] == p.run && r[variantCol] == p.variant && r[levelCol] == p.level {
					var kept []any
					for i, v := range r {
						if i != variantCol && i != levelCol {
							kept = append(kept, v)
						}
					}
					want = append(want, kept)
				}
			}
			if len(rows) != tc.rows(p.fields) || !reflect.DeepEqual(rows, want) {
				t.Errorf("%s: %d rows, want %d, the flat file's of its partition (equal: %v)", f, len(rows), tc.rows(p.fields), reflect.DeepEqual(rows, want))
			}
			var wantFields []arrow.Field
			for _, fl := range full.Fields() {
				if fl.Name != "variant" && fl.Name != "level" {
					wantFields = append(wantFields, fl)
				}
			}
			if !arrow.NewSchema(wantFields, nil).Equal(schema) {
				t.Errorf("%s: schema\n%s\nwant %s's less variant and level\n%s", f, schema, tc.flat, full)
			}
			for name, typ := range tc.types {
				if fs := schema.FieldIndices(name); len(fs) != 1 || !arrow.TypeEqual(schema.Field(fs[0]).Type, typ) {
					t.Errorf("%s: column %s is not %s: %s", f, name, typ, schema)
				}
			}
		}
	}
}

// TestExportPartitioned_DuckDBFields: DuckDB reads the partitioned field
// datasets with hive_partitioning typed (level BIGINT from the directory
// names, BOOLEAN correct, BIGINT counts, DOUBLE f1), every row once: the
// per-field F1 of request_fields' sums and pass_fields' rows are those of
// the flat files. Before, the datasets did not exist.
func TestExportPartitioned_DuckDBFields(t *testing.T) {
	s, dir := MustOpen(t)
	fillStore(t, s, 40)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ExportPartitioned(ctx, dir, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Export(ctx, dir); err != nil {
		t.Fatal(err)
	}
	const requestFields = `read_parquet('request_fields/**/*.parquet', hive_partitioning = true)`
	const passFields = `read_parquet('pass_fields/**/*.parquet', hive_partitioning = true)`
	f1 := func(from string) string {
		return `SELECT run_id, variant, mode, level, repetition, field, count(*) AS n,
		        coalesce(2 * sum(tp) / nullif(2 * sum(tp) + sum(fp) + sum(fn), 0), 1) AS f1
		      FROM ` + from + ` GROUP BY ALL ORDER BY ALL`
	}
	passes := func(from string) string {
		return `SELECT run_id, variant, mode, level, repetition, field, position, tp, fp, fn, tn, unscored, precision, recall, f1 FROM ` + from + ` ORDER BY ALL`
	}
	res := duckDBQuery(t, dir,
		`SELECT variant, level, field, correct, tp, expected FROM `+requestFields+` LIMIT 1`,
		`SELECT variant, level, field, tn, f1 FROM `+passFields+` LIMIT 1`,
		f1(requestFields), f1(`'request_fields.parquet'`),
		passes(passFields), passes(`'pass_fields.parquet'`))
	for i, want := range []map[string]string{
		{"variant": "VARCHAR", "level": "BIGINT", "field": "VARCHAR", "correct": "BOOLEAN", "tp": "BIGINT", "expected": "VARCHAR"},
		{"variant": "VARCHAR", "level": "BIGINT", "field": "VARCHAR", "tn": "BIGINT", "f1": "DOUBLE"},
	} {
		for col, typ := range want {
			if got := res[i].typeOf(col); got != typ {
				t.Errorf("query %d: %s is %s, want %s", i, col, got, typ)
			}
		}
	}
	if len(res[2].Rows) != 9 || !reflect.DeepEqual(res[2], res[3]) {
		t.Errorf("per-field F1 of the partitioned request_fields\n%v\nwant that of request_fields.parquet (3 passes, 3 fields)\n%v", res[2], res[3])
	}
	if len(res[4].Rows) != 9 || !reflect.DeepEqual(res[4], res[5]) {
		t.Errorf("the partitioned pass_fields\n%v\nwant pass_fields.parquet's (3 passes, 3 fields)\n%v", res[4], res[5])
	}
}
