package results

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/ulikunitz/xz"
)

// compressDB replaces dir/results.db by dir/results.db.xz, as the committed
// reference runs keep it.
func compressDB(tb testing.TB, dir string) {
	tb.Helper()
	in, err := os.Open(filepath.Join(dir, DBName))
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(filepath.Join(dir, DBNameXZ))
	if err != nil {
		tb.Fatal(err)
	}
	zw, err := xz.NewWriter(out)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(zw, in); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
	for _, name := range []string{DBName, DBName + "-wal", DBName + "-shm"} {
		os.Remove(filepath.Join(dir, name))
	}
}

// emptyDir fails the test when dir holds anything.
func emptyDir(tb testing.TB, dir, what string) {
	tb.Helper()
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		tb.Errorf("%s: %s holds %v, want nothing left", what, dir, left)
	}
}

// TestOpenReadOnly_XZ: a directory holding only results.db.xz (as the
// reference runs are committed) reads as if it held results.db, through a
// temporary copy that Close removes; the directory is never written. A
// truncated file is an error that names it and says how to decompress it
// by hand, and leaves no copy behind.
func TestOpenReadOnly_XZ(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the copies go
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	run := Run{RunID: "xz-run", Fingerprint: "fp", ProtocolName: "p", Manifest: json.RawMessage(`{}`), StartedAt: 1, Status: RunComplete}
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		s.Add(testRecord(extractbench.PassKey{RunID: run.RunID, Variant: "ref", Mode: "concurrency", Level: 1, Repetition: 1}, i))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	compressDB(t, dir)
	if !HasDB(dir) {
		t.Fatal("HasDB: false for a directory with results.db.xz")
	}

	rd, err := OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatalf("OpenReadOnly on results.db.xz alone: %v", err)
	}
	d, err := rd.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := rd.Requests(ctx, run.RunID, RequestFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Run.RunID != run.RunID || len(recs) != 6 {
		t.Errorf("read run %q with %d requests, want %q with 6", d.Run.RunID, len(recs), run.RunID)
	}
	if err := rd.Close(); err != nil {
		t.Fatal(err)
	}
	emptyDir(t, tmp, "after Close")
	if _, err := os.Stat(filepath.Join(dir, DBName)); err == nil {
		t.Error("reading results.db.xz wrote results.db into the directory")
	}

	b, err := os.ReadFile(filepath.Join(dir, DBNameXZ))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, DBNameXZ), b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = OpenReadOnly(ctx, dir)
	if err == nil || !strings.Contains(err.Error(), "xz -dk "+filepath.Join(dir, DBNameXZ)) {
		t.Errorf("truncated results.db.xz: err = %v, want one that names the file and says xz -dk", err)
	}
	emptyDir(t, tmp, "after a truncated file")
}

// TestLoadRun_ReferenceXZ reads a committed reference run as it is in the
// repository: only results.db.xz, no results.db.
func TestLoadRun_ReferenceXZ(t *testing.T) {
	dir := filepath.Join("..", "reference", "cpu", "extract-llama-15m-h384")
	if _, err := os.Stat(filepath.Join(dir, DBName)); err == nil {
		t.Skipf("%s has a decompressed results.db: this test is for the committed .xz alone", dir)
	}
	d, err := LoadRun(context.Background(), dir)
	if err != nil {
		t.Fatalf("LoadRun %s: %v", dir, err)
	}
	if len(d.Passes) == 0 || d.Run.RunID == "" {
		t.Errorf("read run %q with %d passes, want a run with passes", d.Run.RunID, len(d.Passes))
	}
}
