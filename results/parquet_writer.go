package results

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// The export writes its Parquet files with parquet/file's column writers
// rather than through pqarrow: pqarrow imports Arrow Flight, and with it
// gRPC, HTTP/2 and their protobuf descriptors, about a hundred packages a
// cold build compiled for nothing (issue 28). The files are the ones
// pqarrow.FileWriter with WithStoreSchema wrote, byte for byte
// (TestWriteParquet_SameBytesAsPQArrow): the same Parquet schema, the Arrow
// schema stored under ARROW:schema, one row group per batch.

// writeParquet streams the rows of query, whose columns are schema's fields in
// order, into a zstd Parquet file, one row group of exportBatchRows at a time.
func writeParquet(ctx context.Context, tx *sql.Tx, w io.Writer, schema *arrow.Schema, query string, args ...any) (err error) {
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithMaxRowGroupLength(exportBatchRows),
	)
	root, err := parquetSchema(schema, props)
	if err != nil {
		return fmt.Errorf("create parquet writer: %w", err)
	}
	meta, err := arrowSchemaMetadata(schema, props.Allocator())
	if err != nil {
		return fmt.Errorf("create parquet writer: %w", err)
	}
	fw, err := file.NewParquetWriterWithError(w, root, file.WithWriterProps(props), file.WithWriteMetadata(meta))
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

	dest, appendRow, cols := rowScanner(schema)
	n := 0
	flush := func() error {
		if err := writeRowGroup(fw, cols); err != nil {
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

// parquetSchema is the Parquet schema pqarrow.ToParquet makes of schema's
// four column types: INT64 (signed 64-bit), DOUBLE, BOOLEAN and BYTE_ARRAY
// (String), OPTIONAL where the field is nullable, REQUIRED otherwise.
func parquetSchema(sc *arrow.Schema, props *parquet.WriterProperties) (*schema.GroupNode, error) {
	nodes := make(schema.FieldList, 0, sc.NumFields())
	for _, f := range sc.Fields() {
		rep := parquet.Repetitions.Required
		if f.Nullable {
			rep = parquet.Repetitions.Optional
		}
		var (
			typ     parquet.Type
			logical schema.LogicalType
		)
		switch f.Type.ID() {
		case arrow.INT64:
			typ, logical = parquet.Types.Int64, schema.NewIntLogicalType(64, true)
		case arrow.FLOAT64:
			typ, logical = parquet.Types.Double, schema.NoLogicalType{}
		case arrow.BOOL:
			typ, logical = parquet.Types.Boolean, schema.NoLogicalType{}
		case arrow.STRING:
			typ, logical = parquet.Types.ByteArray, schema.StringLogicalType{}
		default:
			return nil, fmt.Errorf("export column %s: unsupported Arrow type %s", f.Name, f.Type)
		}
		n, err := schema.NewPrimitiveNodeLogical(f.Name, rep, logical, typ, -1, -1)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Name, err)
		}
		nodes = append(nodes, n)
	}
	return schema.NewGroupNode(props.RootName(), props.RootRepetition(), nodes, -1)
}

// arrowSchemaMetadata is the file's key-value metadata: the Arrow schema
// as an IPC stream of no batches, base64, under ARROW:schema, as pqarrow
// stores it, so that Arrow readers get the exact types back.
func arrowSchemaMetadata(sc *arrow.Schema, mem memory.Allocator) (metadata.KeyValueMetadata, error) {
	meta := make(metadata.KeyValueMetadata, 0)
	for i, k := range sc.Metadata().Keys() {
		meta.Append(k, sc.Metadata().Values()[i])
	}
	var buf bytes.Buffer
	iw := ipc.NewWriter(&buf, ipc.WithSchema(sc), ipc.WithAllocator(mem))
	if err := iw.Close(); err != nil {
		return nil, fmt.Errorf("serialize arrow schema: %w", err)
	}
	meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(buf.Bytes()))
	return meta, nil
}

// column holds one column's values of the current row group: the non-null
// values in order and, for a nullable column, one definition level per row
// (1 a value, 0 NULL).
type parquetColumn interface {
	write(file.ColumnChunkWriter) error
	reset()
}

// typedColumn is a column of Go values of type T, written by the column
// chunk writer of T's Parquet type.
type typedColumn[T any, W interface {
	WriteBatch([]T, []int16, []int16) (int64, error)
}] struct {
	nullable bool
	values   []T
	def      []int16
}

func (c *typedColumn[T, W]) add(v T, valid bool) {
	if valid {
		c.values = append(c.values, v)
	}
	if c.nullable {
		c.def = append(c.def, boolLevel(valid))
	}
}

func (c *typedColumn[T, W]) write(cw file.ColumnChunkWriter) error {
	w, ok := cw.(W)
	if !ok {
		return fmt.Errorf("column %s: writer %T", cw.Descr().Name(), cw)
	}
	_, err := w.WriteBatch(c.values, c.def, nil)
	return err
}

func (c *typedColumn[T, W]) reset() { c.values, c.def = c.values[:0], c.def[:0] }

func boolLevel(valid bool) int16 {
	if valid {
		return 1
	}
	return 0
}

// writeRowGroup writes cols as one row group and empties them.
func writeRowGroup(fw *file.Writer, cols []parquetColumn) error {
	rgw, err := fw.AppendRowGroupChecked()
	if err != nil {
		return err
	}
	for _, c := range cols {
		cw, err := rgw.NextColumn()
		if err != nil {
			return err
		}
		if err := c.write(cw); err != nil {
			return err
		}
		c.reset()
	}
	return rgw.Close()
}

// rowScanner returns scan destinations for one row of schema's columns, a
// function that appends the scanned row to the columns, and the columns. A
// NULL in a field the schema says is not nullable is an error: the table
// and the schema disagree.
func rowScanner(schema *arrow.Schema) ([]any, func() error, []parquetColumn) {
	fields := schema.Fields()
	dest := make([]any, len(fields))
	appenders := make([]func() error, len(fields))
	cols := make([]parquetColumn, len(fields))
	for i, f := range fields {
		notNull := func(valid bool) error {
			if !valid && !f.Nullable {
				return fmt.Errorf("column %s: NULL in a non-nullable column", f.Name)
			}
			return nil
		}
		switch f.Type.ID() {
		case arrow.INT64:
			v, c := new(sql.NullInt64), &typedColumn[int64, *file.Int64ColumnChunkWriter]{nullable: f.Nullable}
			dest[i], cols[i] = v, c
			appenders[i] = func() error { c.add(v.Int64, v.Valid); return notNull(v.Valid) }
		case arrow.FLOAT64:
			v, c := new(sql.NullFloat64), &typedColumn[float64, *file.Float64ColumnChunkWriter]{nullable: f.Nullable}
			dest[i], cols[i] = v, c
			appenders[i] = func() error { c.add(v.Float64, v.Valid); return notNull(v.Valid) }
		case arrow.BOOL:
			v, c := new(sql.NullBool), &typedColumn[bool, *file.BooleanColumnChunkWriter]{nullable: f.Nullable}
			dest[i], cols[i] = v, c
			appenders[i] = func() error { c.add(v.Bool, v.Valid); return notNull(v.Valid) }
		case arrow.STRING:
			v, c := new(sql.NullString), &typedColumn[parquet.ByteArray, *file.ByteArrayColumnChunkWriter]{nullable: f.Nullable}
			dest[i], cols[i] = v, c
			appenders[i] = func() error { c.add(parquet.ByteArray(v.String), v.Valid); return notNull(v.Valid) }
		default:
			panic(fmt.Sprintf("export column %s: unsupported Arrow type %s", f.Name, f.Type))
		}
	}
	return dest, func() error {
		var err error
		for _, a := range appenders {
			err = errors.Join(err, a())
		}
		return err
	}, cols
}
