//go:build unix

package results

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestLockDir_SymlinkedDB is the hardening issue's item 14: the lock is the
// database's, not the directory's. A directory whose results.db is a link
// to another directory's (existing, or not created yet) cannot be written
// while the other is, and the refusal names the shared database; two
// directories with their own databases do not conflict.
func TestLockDir_SymlinkedDB(t *testing.T) {
	root := t.TempDir()
	mkdir := func(name string) string {
		d := filepath.Join(root, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	a, alink := mkdir("A"), mkdir("Alink")
	if err := os.WriteFile(filepath.Join(a, DBName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "A", DBName), filepath.Join(alink, DBName)); err != nil {
		t.Fatal(err)
	}
	b, blink := mkdir("B"), mkdir("Blink") // B has no results.db yet: the link dangles
	if err := os.Symlink(filepath.Join(b, DBName), filepath.Join(blink, DBName)); err != nil {
		t.Fatal(err)
	}
	other := mkdir("other")

	for _, tc := range []struct{ name, first, second, db string }{
		{"linked database", a, alink, filepath.Join(a, DBName)},
		{"linked database, the link first", alink, a, ""},
		{"dangling link to a database not created yet", blink, b, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := LockDir(tc.first, "run -resume")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Unlock()
			_, err = LockDir(tc.second, "run -resume")
			var le *LockedError
			if !errors.As(err, &le) || le.Holder.PID != os.Getpid() {
				t.Fatalf("LockDir(%s) while %s is held: err = %v, want a LockedError: one database, one writer", tc.second, tc.first, err)
			}
			if tc.db != "" {
				want, _ := filepath.EvalSymlinks(tc.db)
				if le.DB != want {
					t.Errorf("LockedError.DB = %q, want the shared database %q", le.DB, want)
				}
			}
		})
	}

	t.Run("separate databases", func(t *testing.T) {
		l, err := LockDir(a, "run")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Unlock()
		l2, err := LockDir(other, "run")
		if err != nil {
			t.Fatalf("LockDir of a directory with its own database: %v", err)
		}
		l2.Unlock()
	})
}
