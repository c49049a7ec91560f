package results

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"io"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/sourcegraph/conc/pool"
)

// The export writes its Parquet files with parquet/file's column writers
// rather than through pqarrow: pqarrow imports Arrow Flight, and with it
// gRPC, HTTP/2 and their protobuf descriptors, about a hundred packages a
// cold build compiled for nothing (issue 28). The files are the ones
// pqarrow.FileWriter.WriteBuffered with WithStoreSchema writes from record
// batches of exportBatchRows (TestWriteParquet_SameFilesAsPQArrow): the same
// Parquet schema, the Arrow schema stored under ARROW:schema, row groups of
// exportRowGroupRows.

// exportRowGroupRows is the exported files' row group size: each group pays
// per-column statistics and dictionaries (a third of the CPU at 4,096 rows),
// while a million rows still make 31 groups to read in parallel. A multiple
// of exportBatchRows, so that a batch never straddles two groups.
const exportRowGroupRows = 8 * exportBatchRows

// exportProps are the writer properties of one exported file: zstd,
// exportRowGroupRows, and dictionary encoding for the columns in dict only
// (repeated labels; the others, unique per row, are plain-encoded instead
// of hashed into a dictionary that overflows and falls back).
func exportProps(dict map[string]bool) *parquet.WriterProperties {
	opts := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithMaxRowGroupLength(exportRowGroupRows),
		parquet.WithDictionaryDefault(false),
	}
	for c := range dict {
		opts = append(opts, parquet.WithDictionaryFor(c, true))
	}
	return parquet.NewWriterProperties(opts...)
}

// writeParquet streams the rows of t.query, whose columns are t.schema's
// fields in order, into a zstd Parquet file. Two goroutines share the work,
// as two stages: one scans SQLite into a batch of exportBatchRows rows of Go
// values, the other encodes and compresses the batch before into the
// current row group; two batches alternate between them, so memory stays
// two batches and one row group whatever the row count. An error or a
// panic in either stops both and is returned (conc).
func writeParquet(ctx context.Context, tx *sql.Tx, w io.Writer, t exportTable, args ...any) (err error) {
	props := exportProps(t.dict)
	root, err := parquetSchema(t.schema, props)
	if err != nil {
		return fmt.Errorf("create parquet writer: %w", err)
	}
	meta, err := arrowSchemaMetadata(t.schema, props.Allocator())
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

	full := make(chan *rowBatch, 2)
	free := make(chan *rowBatch, 2)
	for range 2 {
		free <- newRowBatch(t.schema)
	}
	p := pool.New().WithContext(ctx).WithCancelOnError()
	p.Go(func(ctx context.Context) error {
		defer close(full)
		return scanBatches(ctx, tx, t, args, free, full)
	})
	p.Go(func(ctx context.Context) error { return encodeBatches(ctx, fw, full, free) })
	return p.Wait()
}

// rowBatch is up to exportBatchRows rows of a file's columns, as Go values.
type rowBatch struct {
	cols []parquetColumn
	rows int
}

// scanBatches reads t's rows into batches taken from free and sends each
// full one (and the last, partial one) to full.
func scanBatches(ctx context.Context, tx *sql.Tx, t exportTable, args []any, free <-chan *rowBatch, full chan<- *rowBatch) error {
	rows, err := tx.QueryContext(ctx, t.query, args...)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	defer rows.Close()
	fields := t.schema.Fields()
	cells := make([]cell, len(fields))
	dest := make([]any, len(fields))
	for i := range cells {
		dest[i] = &cells[i]
	}
	var b *rowBatch
	send := func() error {
		select {
		case full <- b:
			b = nil
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for rows.Next() {
		if b == nil {
			select {
			case b = <-free:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("scan row: %w", err)
		}
		if t.visit != nil {
			if err := t.visit(cells); err != nil {
				return err
			}
		}
		for i, c := range b.cols {
			if !cells[i].valid && !fields[i].Nullable {
				return fmt.Errorf("column %s: NULL in a non-nullable column", fields[i].Name)
			}
			c.add(&cells[i])
		}
		if b.rows++; b.rows == exportBatchRows {
			if err := send(); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read rows: %w", err)
	}
	if b != nil {
		return send()
	}
	return nil
}

// encodeBatches writes the batches from full into row groups of
// exportRowGroupRows and gives each batch back to free, emptied.
func encodeBatches(ctx context.Context, fw *file.Writer, full <-chan *rowBatch, free chan<- *rowBatch) error {
	var (
		rgw     file.BufferedRowGroupWriter
		inGroup int
	)
	for b := range full {
		if rgw == nil || inGroup+b.rows > exportRowGroupRows {
			if rgw != nil {
				if err := rgw.Close(); err != nil {
					return fmt.Errorf("close row group: %w", err)
				}
			}
			var err error
			if rgw, err = fw.AppendBufferedRowGroupChecked(); err != nil {
				return fmt.Errorf("append row group: %w", err)
			}
			inGroup = 0
		}
		for i, c := range b.cols {
			cw, err := rgw.Column(i)
			if err != nil {
				return fmt.Errorf("write row group: %w", err)
			}
			if err := c.write(cw); err != nil {
				return fmt.Errorf("write row group: %w", err)
			}
			c.reset()
		}
		inGroup += b.rows
		b.rows = 0
		select {
		case free <- b:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if rgw != nil {
		if err := rgw.Close(); err != nil {
			return fmt.Errorf("close row group: %w", err)
		}
	}
	return nil
}

// parquetSchema is the Parquet schema pqarrow.ToParquet makes of schema's
// column types: INT64 (signed 64-bit, or a TIMESTAMP in microseconds
// adjusted to UTC), DOUBLE, BOOLEAN and BYTE_ARRAY (String), OPTIONAL where the field is nullable, REQUIRED otherwise.
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
		case arrow.TIMESTAMP: // microseconds, UTC: the only unit the export writes
			typ, logical = parquet.Types.Int64, schema.NewTimestampLogicalType(true, schema.TimeUnitMicros)
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

// parquetColumn holds one column's values of the current batch: the
// non-null values in order and, for a nullable column, one definition level
// per row (1 a value, 0 NULL).
type parquetColumn interface {
	add(c *cell)
	write(file.ColumnChunkWriter) error
	reset()
}

// typedColumn is a column of Go values of type T, written by the column
// chunk writer of T's Parquet type; value takes T from a scanned cell.
type typedColumn[T any, W interface {
	WriteBatch([]T, []int16, []int16) (int64, error)
}] struct {
	nullable bool
	value    func(*cell) T
	values   []T
	def      []int16
}

func (c *typedColumn[T, W]) add(v *cell) {
	if v.valid {
		c.values = append(c.values, c.value(v))
	}
	if c.nullable {
		c.def = append(c.def, boolLevel(v.valid))
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

func (c *typedColumn[T, W]) reset() {
	clear(c.values) // drop the strings for the GC
	c.values, c.def = c.values[:0], c.def[:0]
}

func boolLevel(valid bool) int16 {
	if valid {
		return 1
	}
	return 0
}

// stringBytes is the cell's string as bytes without a copy: the column
// writers only read a value (the dictionary and the pages copy what they
// keep), and the string is never written to. "" is an empty slice, not
// nil, which the statistics would skip.
func stringBytes(c *cell) parquet.ByteArray {
	if c.s == "" {
		return parquet.ByteArray{}
	}
	return unsafe.Slice(unsafe.StringData(c.s), len(c.s))
}

// newRowBatch returns an empty batch of schema's columns.
func newRowBatch(schema *arrow.Schema) *rowBatch {
	fields := schema.Fields()
	b := &rowBatch{cols: make([]parquetColumn, len(fields))}
	for i, f := range fields {
		switch f.Type.ID() {
		case arrow.INT64, arrow.TIMESTAMP:
			b.cols[i] = &typedColumn[int64, *file.Int64ColumnChunkWriter]{nullable: f.Nullable, value: func(c *cell) int64 { return c.i }}
		case arrow.FLOAT64:
			b.cols[i] = &typedColumn[float64, *file.Float64ColumnChunkWriter]{nullable: f.Nullable, value: func(c *cell) float64 { return c.f }}
		case arrow.BOOL:
			b.cols[i] = &typedColumn[bool, *file.BooleanColumnChunkWriter]{nullable: f.Nullable, value: func(c *cell) bool { return c.i != 0 }}
		case arrow.STRING:
			b.cols[i] = &typedColumn[parquet.ByteArray, *file.ByteArrayColumnChunkWriter]{nullable: f.Nullable, value: stringBytes}
		default:
			panic(fmt.Sprintf("export column %s: unsupported Arrow type %s", f.Name, f.Type))
		}
	}
	return b
}
