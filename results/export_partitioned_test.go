package results

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// TestExportPartitioned: one file per run and (variant, level), under
// requests/variant=V/level=L/, read back with arrow-go: the rows each
// partition holds, the columns of requests.parquet less the partition
// columns, and their types. Exporting again replaces the files; a shared
// dataset root keeps other directories' runs.
func TestExportPartitioned(t *testing.T) {
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
	want := map[string]int{ // fillStore: run-1 ref levels 1 and 2 with 20 rows each, run-2 q4 level 4 with 5
		filepath.Join(dir, "requests", "variant=ref", "level=1", "part-run-1.parquet"): 20,
		filepath.Join(dir, "requests", "variant=ref", "level=2", "part-run-1.parquet"): 20,
		filepath.Join(dir, "requests", "variant=q4", "level=4", "part-run-2.parquet"):  5,
	}
	for _, f := range files[:min(len(files), len(want))] {
		if _, ok := want[f]; !ok {
			t.Errorf("wrote %s before the requests' files", f)
		}
	}
	full, _ := readParquet(t, exportOne(t, dir))
	for _, f := range files {
		if !strings.HasPrefix(f, filepath.Join(dir, RequestsDataset)+string(filepath.Separator)) {
			continue // TestExportPartitioned_Fields
		}
		schema, rows := readParquet(t, f)
		if n, ok := want[f]; !ok || len(rows) != n {
			t.Errorf("%s: %d rows, want %d (expected: %v)", f, len(rows), n, ok)
		}
		if schema.HasField("variant") || schema.HasField("level") {
			t.Errorf("%s: holds a partition column: %s", f, schema)
		}
		if schema.NumFields() != full.NumFields()-2 {
			t.Errorf("%s: %d columns, want requests.parquet's %d less variant and level", f, schema.NumFields(), full.NumFields())
		}
		for name, typ := range map[string]arrow.DataType{"run_id": arrow.BinaryTypes.String, "doc_id": arrow.BinaryTypes.String,
			"send_ns": arrow.PrimitiveTypes.Int64, "accepted": arrow.FixedWidthTypes.Boolean, "model": arrow.BinaryTypes.String} {
			if fs := schema.FieldIndices(name); len(fs) != 1 || !arrow.TypeEqual(schema.Field(fs[0]).Type, typ) {
				t.Errorf("%s: column %s is not %s: %s", f, name, typ, schema)
			}
		}
	}

	// A shared root: another directory's files stay; this one's are replaced.
	root := t.TempDir()
	other := filepath.Join(root, "requests", "variant=ref", "level=1", "part-other-night.parquet")
	stale := filepath.Join(root, "requests", "variant=ref", "level=9", "part-run-1.parquet")
	for _, p := range []string{other, stale} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ExportPartitioned(ctx, dir, root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another run's file was removed: %v", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("this run's stale file %s was kept", stale)
	}
	var got []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(got)
	wantFiles := []string{"pass_fields/variant=q4/level=4/part-run-2.parquet", "pass_fields/variant=ref/level=1/part-run-1.parquet",
		"pass_fields/variant=ref/level=2/part-run-1.parquet",
		"request_fields/variant=q4/level=4/part-run-2.parquet", "request_fields/variant=ref/level=1/part-run-1.parquet",
		"request_fields/variant=ref/level=2/part-run-1.parquet",
		"requests/variant=q4/level=4/part-run-2.parquet", "requests/variant=ref/level=1/part-other-night.parquet",
		"requests/variant=ref/level=1/part-run-1.parquet", "requests/variant=ref/level=2/part-run-1.parquet"}
	if !slices.Equal(got, wantFiles) {
		t.Errorf("dataset holds %v, want %v", got, wantFiles)
	}
}

// exportOne writes the flat export and returns requests.parquet's path.
func exportOne(t *testing.T, dir string) string {
	t.Helper()
	if _, err := Export(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, RequestsParquet)
}

func TestEscapePartitionValue(t *testing.T) {
	for in, want := range map[string]string{
		"bf16": "bf16", "awq-int4": "awq-int4", "": "__HIVE_DEFAULT_PARTITION__", "a/b": "a%2Fb", "k=v": "k%3Dv",
		"50%": "50%25", "tab\there": "tab%09here", "ünï": "ünï", `x:"y"`: "x%3A%22y%22",
	} {
		if got := EscapePartitionValue(in); got != want {
			t.Errorf("EscapePartitionValue(%q) = %q, want %q", in, got, want)
		}
	}
}
