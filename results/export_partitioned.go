package results

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// The directories, under a dataset root, of the partitioned datasets,
// each named after its table: DIR/variant=V/level=L/part-RUN.parquet.
const (
	RequestsDataset      = "requests"
	RequestFieldsDataset = "request_fields"
	PassFieldsDataset    = "pass_fields"
)

// Datasets are the partitioned datasets ExportPartitioned writes, in order.
var Datasets = []string{RequestsDataset, RequestFieldsDataset, PassFieldsDataset}

// hiveDefaultPartition is Hive's name for an empty partition value.
const hiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__"

// PartitionColumns are the columns a partitioned dataset holds in its
// directory names (Hive style) instead of in its files, in path order:
// columns of every table partitioned.
var PartitionColumns = []string{"variant", "level"}

// ExportPartitioned writes the requests of every run in dir/results.db, and
// their field rows and per-pass field figures, as Hive-partitioned Parquet
// datasets under root, one per table of Datasets:
// root/TABLE/variant=V/level=L/part-RUN_ID.parquet, one file per run and
// partition, with the columns of TABLE.parquet less variant and level
// (which the directory names carry; values escaped as Hive escapes them,
// EscapePartitionValue). DuckDB's read_parquet(..., hive_partitioning=true)
// and Spark read the shards and nights written under one root as one
// table. The files of the runs in dir are replaced, others' left alone;
// when root is dir itself, each dataset's whole tree is rewritten (it
// derives from this results.db alone). It returns the files written.
func ExportPartitioned(ctx context.Context, dir, root string) ([]string, error) {
	tx, done, err := exportSnapshot(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer done()
	var written []string
	for _, pt := range partitionedTables() {
		files, err := exportDataset(ctx, tx, dir, filepath.Join(root, pt.file), sameDir(root, dir), pt)
		written = append(written, files...)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// exportDataset writes the partitioned dataset of one table under base,
// from the snapshot tx of dir's results.db; all: base is dir's own.
func exportDataset(ctx context.Context, tx *sql.Tx, dir, base string, all bool, pt partitionedTable) ([]string, error) {
	type part struct {
		run, variant string
		level        int64
	}
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT run_id, variant, level FROM `+pt.table+` ORDER BY run_id, variant, level`)
	if err != nil {
		return nil, fmt.Errorf("export %s: list partitions of %s: %w", dir, pt.table, err)
	}
	var parts []part
	runs := map[string]bool{}
	for rows.Next() {
		var p part
		if err := rows.Scan(&p.run, &p.variant, &p.level); err != nil {
			rows.Close()
			return nil, fmt.Errorf("export %s: list partitions of %s: %w", dir, pt.table, err)
		}
		parts, runs[p.run] = append(parts, p), true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("export %s: list partitions of %s: %w", dir, pt.table, err)
	}
	if err := clearParts(base, runs, all); err != nil {
		return nil, fmt.Errorf("export %s: %w", base, err)
	}
	var written []string
	for _, p := range parts {
		pdir := filepath.Join(base, "variant="+EscapePartitionValue(p.variant), fmt.Sprintf("level=%d", p.level))
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return written, fmt.Errorf("export %s: %w", pdir, err)
		}
		file := filepath.Join(pdir, partFile(p.run))
		err := writeAtomic(file, func(w io.Writer) error { return writeParquet(ctx, tx, w, pt.exportTable, p.run, p.variant, p.level) })
		if err != nil {
			return written, fmt.Errorf("export %s: %w", file, err)
		}
		written = append(written, file)
	}
	return written, nil
}

// partFile is the file of one run in a partition.
func partFile(runID string) string { return "part-" + EscapePartitionValue(runID) + ".parquet" }

// partitionedTable is one dataset: its table and the file of one
// partition (exportTable.file is the dataset's directory).
type partitionedTable struct {
	exportTable
	table string
}

// partitionedTables are the datasets ExportPartitioned writes, in the
// order of Datasets.
func partitionedTables() []partitionedTable {
	return []partitionedTable{
		partitioned(RequestsDataset, "requests", requestsSchema, requestColumns.dictionary(), "t.rowid"),
		partitioned(RequestFieldsDataset, "request_fields", requestFieldsSchema, requestFieldColumns.dictionary(), "t.rowid"),
		partitioned(PassFieldsDataset, "pass_fields", passFieldsSchema, nil, "t.mode, t.repetition, t.position"),
	}
}

// partitioned is one partition's file of table: TABLE.parquet's columns
// (with the run context) less PartitionColumns, of one run, variant and
// level, in order.
func partitioned(dataset, table string, tableSchema *arrow.Schema, dict map[string]bool, order string) partitionedTable {
	t := newExportTable(dataset, table, tableSchema, dict, order)
	var fields []arrow.Field
	var cols []string
	for _, f := range t.schema.Fields() {
		switch {
		case slices.Contains(PartitionColumns, f.Name):
			continue
		case tableSchema.HasField(f.Name):
			cols = append(cols, "t."+f.Name)
		default:
			cols = append(cols, "ctx."+f.Name)
		}
		fields = append(fields, f)
	}
	t.schema = arrow.NewSchema(fields, nil)
	t.query = runContextCTE + `SELECT ` + strings.Join(cols, ", ") + ` FROM ` + table + ` t
	LEFT JOIN ctx ON ctx.run_id = t.run_id AND ctx.variant = t.variant
	WHERE t.run_id = ? AND t.variant = ? AND t.level = ? ORDER BY ` + order
	return partitionedTable{exportTable: t, table: table}
}

// clearParts removes the dataset's files of the given runs (every file
// when all is set: the tree is this directory's own) and the temporary
// files an interrupted export left, so that an export replaces, never
// appends.
func clearParts(base string, runs map[string]bool, all bool) error {
	if all {
		return os.RemoveAll(base)
	}
	names := map[string]bool{}
	for r := range runs {
		names[partFile(r)] = true
	}
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir():
			return nil
		case names[d.Name()], strings.HasPrefix(d.Name(), ".part-") && strings.Contains(d.Name(), ".tmp-"):
			return os.Remove(p)
		}
		return nil
	})
	if os.IsNotExist(err) {
		return nil
	}
	return err
}

func sameDir(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// EscapePartitionValue escapes a value for a Hive partition directory name
// as Hive's FileUtils.escapePathName does: control characters, DEL and
// "#%'*/:=?\{[]^ become %XX (upper-case hex); an empty value is Hive's
// default partition. Hive and Spark decode these escapes. A protocol's
// variant names are [A-Za-z0-9._-] and run ids [0-9A-Za-z-], so the values
// a run writes need none; the rule keeps any other value one path segment.
func EscapePartitionValue(v string) string {
	if v == "" {
		return hiveDefaultPartition
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
