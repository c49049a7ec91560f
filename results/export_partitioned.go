package results

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// RequestsDataset is the directory, under a dataset root, of the
// partitioned requests dataset: RequestsDataset/variant=V/level=L/part-RUN.parquet.
const RequestsDataset = "requests"

// hiveDefaultPartition is Hive's name for an empty partition value.
const hiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__"

// PartitionColumns are the requests columns a partitioned dataset holds in
// its directory names (Hive style) instead of in its files, in path order.
var PartitionColumns = []string{"variant", "level"}

// ExportPartitioned writes the requests of every run in dir/results.db as a
// Hive-partitioned Parquet dataset under root:
// root/requests/variant=V/level=L/part-RUN_ID.parquet, one file per run and
// partition, with the columns of requests.parquet less variant and level
// (which the directory names carry; values escaped as Hive escapes them,
// EscapePartitionValue). DuckDB's read_parquet(..., hive_partitioning=true)
// and Spark read the shards and nights written under one root as one
// table. The files of the runs in dir are replaced, others' left alone;
// when root is dir itself, the whole requests tree is rewritten (it
// derives from this results.db alone). It returns the files written.
func ExportPartitioned(ctx context.Context, dir, root string) ([]string, error) {
	tx, done, err := exportSnapshot(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer done()

	type part struct {
		run, variant string
		level        int64
	}
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT run_id, variant, level FROM requests ORDER BY run_id, variant, level`)
	if err != nil {
		return nil, fmt.Errorf("export %s: list partitions: %w", dir, err)
	}
	var parts []part
	runs := map[string]bool{}
	for rows.Next() {
		var p part
		if err := rows.Scan(&p.run, &p.variant, &p.level); err != nil {
			rows.Close()
			return nil, fmt.Errorf("export %s: list partitions: %w", dir, err)
		}
		parts, runs[p.run] = append(parts, p), true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("export %s: list partitions: %w", dir, err)
	}
	base := filepath.Join(root, RequestsDataset)
	if err := clearParts(base, runs, sameDir(root, dir)); err != nil {
		return nil, fmt.Errorf("export %s: %w", base, err)
	}
	pt := partitionedRequests()
	var written []string
	for _, p := range parts {
		pdir := filepath.Join(base, "variant="+EscapePartitionValue(p.variant), fmt.Sprintf("level=%d", p.level))
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			return written, fmt.Errorf("export %s: %w", pdir, err)
		}
		file := filepath.Join(pdir, partFile(p.run))
		err := writeAtomic(file, func(w io.Writer) error { return writeParquet(ctx, tx, w, pt, p.run, p.variant, p.level) })
		if err != nil {
			return written, fmt.Errorf("export %s: %w", file, err)
		}
		written = append(written, file)
	}
	return written, nil
}

// partFile is the file of one run in a partition.
func partFile(runID string) string { return "part-" + EscapePartitionValue(runID) + ".parquet" }

// partitionedRequests is one partition's file: requests.parquet's columns
// (with the run context) less PartitionColumns.
func partitionedRequests() exportTable {
	t := newExportTable(RequestsParquet, "requests", requestsSchema, requestColumns.dictionary(), "t.rowid")
	var fields []arrow.Field
	var cols []string
	for _, f := range t.schema.Fields() {
		switch {
		case f.Name == "variant" || f.Name == "level":
			continue
		case requestsSchema.HasField(f.Name):
			cols = append(cols, "t."+f.Name)
		default:
			cols = append(cols, "ctx."+f.Name)
		}
		fields = append(fields, f)
	}
	t.schema = arrow.NewSchema(fields, nil)
	t.query = runContextCTE + `SELECT ` + strings.Join(cols, ", ") + ` FROM requests t
	LEFT JOIN ctx ON ctx.run_id = t.run_id AND ctx.variant = t.variant
	WHERE t.run_id = ? AND t.variant = ? AND t.level = ? ORDER BY t.rowid`
	return t
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
