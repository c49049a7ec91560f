package results

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRun writes one run with a pass's records into a fresh directory
// and closes the store, as a finished run leaves it.
func writeRun(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRun(ctx, Run{RunID: testKey.RunID, Fingerprint: "fp", ProtocolName: "p", Status: RunComplete, Manifest: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		s.Add(testRecord(testKey, i))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestStore_CloseLeavesReadableWithoutWrite is issue 40 item 5: a closed
// store leaves results.db in rollback-journal mode (header bytes 18 and 19
// are 1, not WAL's 2) with no -wal or -shm beside it, so that a reader
// needs to create nothing beside it (TestLoadRun_ReadOnlyDirectory reads
// it so). The old store left it in WAL mode.
func TestStore_CloseLeavesReadableWithoutWrite(t *testing.T) {
	dir := writeRun(t)
	head := make([]byte, 20)
	f, err := os.Open(filepath.Join(dir, DBName))
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.ReadAt(head, 0)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if head[18] != 1 || head[19] != 1 {
		t.Errorf("header write/read versions = %d/%d, want 1/1 (rollback journal; 2/2 is WAL)", head[18], head[19])
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(filepath.Join(dir, DBName+suffix)); err == nil {
			t.Errorf("%s%s is left beside the closed database", DBName, suffix)
		}
	}
}

// TestOpenReadOnly_RefusesWrites: a Reader's connection cannot write, so a
// reader never changes what it reads (nor needs write access to it).
func TestOpenReadOnly_RefusesWrites(t *testing.T) {
	dir := writeRun(t)
	rd, err := OpenReadOnly(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if _, err := rd.rdb.Exec(`CREATE TABLE written (x)`); err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Errorf("a write through the reader: err = %v, want a read-only database", err)
	}
}
