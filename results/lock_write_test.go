//go:build unix

package results

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLockDir_HolderWriteFails: a lock whose holder record cannot be
// written is refused, not handed out blank. The lock file is one that opens
// and flocks but cannot be truncated or written (a FIFO, /dev/full), so the
// write fails for real; a shadowed err once dropped that failure.
func TestLockDir_HolderWriteFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(path string) error
	}{
		{"fifo", func(path string) error { return syscall.Mkfifo(path, 0o644) }},
		{"link to /dev/full", func(path string) error {
			if _, err := os.Stat("/dev/full"); err != nil {
				t.Skipf("no /dev/full: %v", err)
			}
			return os.Symlink("/dev/full", path)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tc.make(filepath.Join(dir, LockName)); err != nil {
				t.Fatal(err)
			}
			l, err := LockDir(dir, "run")
			if err == nil {
				l.Unlock()
				t.Fatal("LockDir succeeded with a holder record it could not write")
			}
			if !strings.Contains(err.Error(), "write lock") {
				t.Errorf("LockDir: %v, want the failed write of the holder record", err)
			}
		})
	}
}
