package results

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/extractbench/extractbench"
)

// copyBenchShards are the shards the copy benchmarks read: 4 shards of 4
// passes, EXTRACTBENCH_COPY_ROWS request rows in all (default 200,000),
// each row testRecord's (every column used, NULLs among them).
func copyBenchShards(b *testing.B) (dirs []string, keys []extractbench.PassKey, rows int) {
	b.Helper()
	rows = 200_000
	if v, err := strconv.Atoi(os.Getenv("EXTRACTBENCH_COPY_ROWS")); err == nil && v > 0 {
		rows = v
	}
	const shards, passes = 4, 4
	ctx := context.Background()
	root := b.TempDir()
	for s := range shards {
		dir := filepath.Join(root, fmt.Sprintf("shard-%d", s))
		st, err := Open(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		runID := fmt.Sprintf("shard-%d", s)
		if err := st.CreateRun(ctx, Run{RunID: runID, Fingerprint: "fp", Status: RunComplete, Manifest: []byte(`{}`)}); err != nil {
			b.Fatal(err)
		}
		for p := range passes {
			key := extractbench.PassKey{RunID: runID, Variant: "v", Mode: "concurrency", Level: 1 << p, Repetition: 1}
			for i := range rows / shards / passes {
				st.Add(testRecord(key, i*shards+s)) // each shard its own documents
			}
			if s == 0 {
				keys = append(keys, extractbench.PassKey{RunID: "merged", Variant: key.Variant, Mode: key.Mode, Level: key.Level, Repetition: 1})
			}
		}
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	return dirs, keys, rows / shards / passes * shards * passes
}

// newCopyDestination makes an empty, migrated results.db to copy into.
func newCopyDestination(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	st, err := Open(context.Background(), dir)
	if err != nil {
		b.Fatal(err)
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkMerge_Copy is a merge's row copy (Copier, pass after pass, each
// shard's rows of it, instants shifted): cpu-ns/row and rows/s. Its
// physical reference is BenchmarkMerge_SQLiteReference on the same shards.
//
//	go test ./results -run '^$' -bench 'BenchmarkMerge_(Copy|SQLiteReference)$' -benchtime 1x
func BenchmarkMerge_Copy(b *testing.B) {
	ctx := context.Background()
	dirs, keys, rows := copyBenchShards(b)
	readers := make([]*Reader, len(dirs))
	for i, dir := range dirs {
		rd, err := OpenReadOnly(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		defer rd.Close()
		readers[i] = rd
	}
	m := meterCPU(b)
	for b.Loop() {
		m.stop()
		dst := newCopyDestination(b)
		m.resume()
		cp, err := OpenCopier(ctx, dst)
		if err != nil {
			b.Fatal(err)
		}
		var copied int64
		for _, key := range keys {
			for s, rd := range readers {
				if err := cp.Attach(ctx, rd); err != nil {
					b.Fatal(err)
				}
				src := key
				src.RunID = fmt.Sprintf("shard-%d", s)
				res, err := cp.CopyPass(ctx, src, key, 1000, 0)
				if err != nil {
					b.Fatal(err)
				}
				copied += res.Copied
			}
		}
		if err := cp.Close(); err != nil {
			b.Fatal(err)
		}
		if copied != int64(rows) {
			b.Fatalf("copied %d rows, want %d", copied, rows)
		}
	}
	m.report(rows * b.N)
}

// BenchmarkMerge_SQLiteReference is SQLite's own INSERT … SELECT of the same
// shards' requests tables into the same empty results.db, whole rows as
// they are, one statement per shard (a WHERE keeps SQLite's row path; with
// none it would move an empty table's pages without reading the rows), the
// Copier's pragmas: the row copy's physical reference, in cpu-ns/row and
// rows/s, and the whole merge's (scripts/bench.sh runs it at the merge's
// row count). Against it, the export alone is out of 3x's reach: arrow-go's
// own path for the same rows (BenchmarkExport_ArrowReference: database/sql
// read, pqarrow write) cost 3.1-3.5x this copy at 240,000 rows here.
func BenchmarkMerge_SQLiteReference(b *testing.B) {
	ctx := context.Background()
	dirs, _, rows := copyBenchShards(b)
	m := meterCPU(b)
	for b.Loop() {
		m.stop()
		dst := newCopyDestination(b)
		m.resume()
		db, err := sql.Open("sqlite3", "file:"+filepath.Join(dst, DBName))
		if err != nil {
			b.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		var copied int64
		for _, q := range []string{`PRAGMA synchronous = OFF`, fmt.Sprintf(`PRAGMA cache_size = -%d`, copierCacheKiB), `PRAGMA journal_mode = MEMORY`} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
		for _, dir := range dirs {
			abs, _ := filepath.Abs(filepath.Join(dir, DBName))
			if _, err := db.ExecContext(ctx, `ATTACH DATABASE ? AS shard`, "file:"+abs+"?mode=ro"); err != nil {
				b.Fatal(err)
			}
			r, err := db.ExecContext(ctx, `INSERT INTO main.requests SELECT * FROM shard.requests WHERE rowid > 0`)
			if err != nil {
				b.Fatal(err)
			}
			n, _ := r.RowsAffected()
			copied += n
			if _, err := db.ExecContext(ctx, `DETACH DATABASE shard`); err != nil {
				b.Fatal(err)
			}
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		if copied != int64(rows) {
			b.Fatalf("copied %d rows, want %d", copied, rows)
		}
	}
	m.report(rows * b.N)
}
