package results

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// The export's Parquet files are the ones pqarrow wrote before the export
// stopped importing it (and with it Arrow Flight and gRPC): the same rows
// through both writers, every export table and a table of every column type
// with NULLs over several row groups, give the same Parquet schema, the same
// key-value metadata (ARROW:schema) and the same rows read back; the export
// tables give the same bytes. (The kinds table may differ in the padding
// bits of a required BOOLEAN column's last byte, which pqarrow copies from
// Arrow's bitmap buffer and this writer zeroes; readers ignore them.)
func TestWriteParquet_SameFilesAsPQArrow(t *testing.T) {
	ctx := context.Background()
	s, dir := MustOpen(t)
	fillStore(t, s, exportRowGroupRows+2*exportBatchRows+200) // two row groups of requests, the second of three batches
	tx, done, err := exportSnapshot(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer done()

	kinds := arrow.NewSchema([]arrow.Field{
		i64("i", false), i64("in", true), f64("f", false), f64("fn", true),
		boolean("b", false), boolean("bn", true), utf8("s", false), utf8("sn", true),
	}, nil)
	// A recursive CTE makes 2.5 row groups of rows with every third value NULL.
	kindsQuery := fmt.Sprintf(`WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x+1 FROM n WHERE x < %d)
		SELECT x, CASE WHEN x %% 3 = 0 THEN NULL ELSE x*x - 7 END, x / 7.0, CASE WHEN x %% 3 = 1 THEN NULL ELSE -x * 0.25 END,
		x %% 2 = 0, CASE WHEN x %% 3 = 2 THEN NULL ELSE x %% 5 = 0 END, 'doc-' || x, CASE WHEN x %% 3 = 0 THEN NULL ELSE 'ü' || (x %% 11) END FROM n`,
		exportRowGroupRows*5/2)
	tables := exportTables()
	sameBytes := len(tables)
	tables = append(tables, exportTable{file: "kinds.parquet", schema: kinds, dict: map[string]bool{"in": true, "s": true}, query: kindsQuery},
		exportTable{file: "empty.parquet", schema: kinds, query: kindsQuery + " LIMIT 0"})
	out := t.TempDir()
	for i, tb := range tables {
		var got, want bytes.Buffer
		if err := writeParquet(ctx, tx, &got, tb); err != nil {
			t.Fatalf("%s: writeParquet: %v", tb.file, err)
		}
		if err := writeParquetPQArrow(ctx, tx, &want, tb); err != nil {
			t.Fatalf("%s: pqarrow: %v", tb.file, err)
		}
		if i < sameBytes && !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: %d bytes, pqarrow wrote %d; first difference at byte %d", tb.file, got.Len(), want.Len(), firstDiff(got.Bytes(), want.Bytes()))
		}
		gotMeta, wantMeta := parquetMeta(t, got.Bytes()), parquetMeta(t, want.Bytes())
		if gotMeta != wantMeta {
			t.Errorf("%s: file metadata\n%s\npqarrow wrote\n%s", tb.file, gotMeta, wantMeta)
		}
		gotPath, wantPath := filepath.Join(out, "got-"+tb.file), filepath.Join(out, "want-"+tb.file)
		for p, b := range map[string][]byte{gotPath: got.Bytes(), wantPath: want.Bytes()} {
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		gotSchema, gotRows := readParquet(t, gotPath)
		wantSchema, wantRows := readParquet(t, wantPath)
		if !gotSchema.Equal(wantSchema) {
			t.Errorf("%s: Arrow schema read back %s, pqarrow's %s", tb.file, gotSchema, wantSchema)
		}
		for j, f := range tb.schema.Fields() {
			if g := gotSchema.Field(j); g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) || g.Nullable != f.Nullable {
				t.Errorf("%s: field %d read back as %s, want %s", tb.file, j, g, f)
			}
		}
		if !reflect.DeepEqual(gotRows, wantRows) {
			t.Errorf("%s: rows read back differ from pqarrow's (%d and %d rows)", tb.file, len(gotRows), len(wantRows))
		}
		if tb.file == "kinds.parquet" && len(gotRows) != exportRowGroupRows*5/2+1 {
			t.Errorf("kinds.parquet: %d rows", len(gotRows))
		}
	}
}

// parquetMeta is what a file's footer says apart from offsets and sizes:
// the Parquet schema, the key-value metadata, and per row group and column
// the value count, encodings and statistics.
func parquetMeta(t *testing.T, b []byte) string {
	t.Helper()
	r, err := file.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	md := r.MetaData()
	var sb strings.Builder
	schema.PrintSchema(md.Schema.Root(), &sb, 2)
	kv := md.KeyValueMetadata()
	fmt.Fprintf(&sb, "created by %s\nkeys %v values %v\n", md.GetCreatedBy(), kv.Keys(), kv.Values())
	for g := range md.NumRowGroups() {
		rg := md.RowGroup(g)
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			st, err := cc.Statistics()
			if err != nil {
				t.Fatal(err)
			}
			var min, max []byte
			var nulls int64
			if st != nil {
				min, max, nulls = st.EncodeMin(), st.EncodeMax(), st.NullCount()
			}
			fmt.Fprintf(&sb, "rg %d col %d: %d values %v %v null %d min %x max %x\n", g, c, cc.NumValues(), cc.Encodings(), cc.EncodingStats(), nulls, min, max)
		}
	}
	return sb.String()
}

// A NULL where the schema says NOT NULL is refused, naming the column.
func TestWriteParquet_NullInRequiredColumn(t *testing.T) {
	ctx := context.Background()
	_, dir := MustOpen(t)
	tx, done, err := exportSnapshot(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	sc := arrow.NewSchema([]arrow.Field{i64("id", false), utf8("name", false)}, nil)
	err = writeParquet(ctx, tx, io.Discard, exportTable{schema: sc, query: `SELECT 1, NULL`})
	if err == nil || !strings.Contains(err.Error(), "column name: NULL in a non-nullable column") {
		t.Fatalf("err = %v, want the column named", err)
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// writeParquetPQArrow is the export's writer through pqarrow, with the same
// properties and record batches: the reference the test compares with.
func writeParquetPQArrow(ctx context.Context, tx *sql.Tx, w io.Writer, t exportTable, args ...any) (err error) {
	schema, query := t.schema, t.query
	props := exportProps(t.dict)
	fw, err := pqarrow.NewFileWriter(schema, w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return fmt.Errorf("create parquet writer: %w", err)
	}
	defer func() {
		if cerr := fw.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close parquet writer: %w", cerr)
		}
	}()
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	defer rows.Close()

	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer rb.Release()
	dest, appendRow := arrowRowScanner(schema, rb)
	n := 0
	flush := func() error {
		rec := rb.NewRecordBatch()
		defer rec.Release()
		if err := fw.WriteBuffered(rec); err != nil {
			return fmt.Errorf("write row group: %w", err)
		}
		n = 0
		return nil
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("scan row: %w", err)
		}
		if err := appendRow(); err != nil {
			return err
		}
		if n++; n == exportBatchRows {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read rows: %w", err)
	}
	if n > 0 {
		return flush()
	}
	return nil
}

// appendOr appends v, or a null when it is not valid: Append grows the
// builder's buffers geometrically, where a one-value AppendValues of a
// string reserves exactly and copies the whole buffer each row.
func appendOr[T any](b interface {
	Append(T)
	AppendNull()
}, v T, valid bool) {
	if valid {
		b.Append(v)
	} else {
		b.AppendNull()
	}
}

func arrowRowScanner(schema *arrow.Schema, rb *array.RecordBuilder) ([]any, func() error) {
	fields := schema.Fields()
	dest := make([]any, len(fields))
	appenders := make([]func() error, len(fields))
	for i, f := range fields {
		switch f.Type.ID() {
		case arrow.INT64:
			v, b := new(sql.NullInt64), rb.Field(i).(*array.Int64Builder)
			dest[i] = v
			appenders[i] = func() error { appendOr(b, v.Int64, v.Valid); return nil }
		case arrow.TIMESTAMP:
			v, b := new(sql.NullInt64), rb.Field(i).(*array.TimestampBuilder)
			dest[i] = v
			appenders[i] = func() error { appendOr(b, arrow.Timestamp(v.Int64), v.Valid); return nil }
		case arrow.FLOAT64:
			v, b := new(sql.NullFloat64), rb.Field(i).(*array.Float64Builder)
			dest[i] = v
			appenders[i] = func() error { appendOr(b, v.Float64, v.Valid); return nil }
		case arrow.BOOL:
			v, b := new(sql.NullBool), rb.Field(i).(*array.BooleanBuilder)
			dest[i] = v
			appenders[i] = func() error { appendOr(b, v.Bool, v.Valid); return nil }
		case arrow.STRING:
			v, b := new(sql.NullString), rb.Field(i).(*array.StringBuilder)
			dest[i] = v
			appenders[i] = func() error { appendOr(b, v.String, v.Valid); return nil }
		default:
			return nil, func() error { return errors.New("unsupported") }
		}
	}
	return dest, func() error {
		for _, a := range appenders {
			_ = a()
		}
		return nil
	}
}
