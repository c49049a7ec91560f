//go:build unix

package corpus

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestResolve_ReadErrorSaysWhy is issue 40 item 10's first error: a
// document that cannot be read back because the process has no file
// descriptor left says so and how to raise the limit; it did not change,
// and "restore the file" (what the run said) would not help. A file that
// did change still says so.
func TestResolve_ReadErrorSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name       string
		spoil      func(t *testing.T, path string) (restore func())
		want       string
		remedy     string
		outOfFiles bool
	}{
		{name: "file changed", spoil: func(t *testing.T, path string) func() {
			if err := os.WriteFile(path, []byte(`{"id":"other"}`+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return func() {}
		}, want: "the file changed", remedy: "restore the file"},
		{name: "out of file descriptors", spoil: exhaustFiles, want: "ran out of file descriptors (the file did not change)", remedy: "ulimit -n", outOfFiles: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := EncodeDocuments(sampleDocs())
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "docs.jsonl")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			restore := tc.spoil(t, path)
			_, err = c.Resolve(c.Doc(0))
			restore()
			var re *ReadError
			if !errors.As(err, &re) {
				t.Fatalf("Resolve: %v, want a *ReadError", err)
			}
			if !strings.Contains(re.Error(), tc.want) || re.OutOfFiles() != tc.outOfFiles || !strings.Contains(re.Remedy(), tc.remedy) {
				t.Errorf("error %q (out of files %v), remedy %q; want %q, %v, %q", re, re.OutOfFiles(), re.Remedy(), tc.want, tc.outOfFiles, tc.remedy)
			}
		})
	}
}

// exhaustFiles lowers this process's open-file limit and opens files until
// none is left; restore closes them and puts the limit back.
func exhaustFiles(t *testing.T, _ string) func() {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = 256
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skipf("lower the open-file limit: %v", err)
	}
	var hogs []*os.File
	restore := func() {
		for _, f := range hogs {
			f.Close()
		}
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	}
	for range low.Cur {
		f, err := os.Open(os.DevNull)
		if err != nil {
			if !errors.Is(err, syscall.EMFILE) {
				restore()
				t.Fatalf("open until none is left: %v", err)
			}
			return restore
		}
		hogs = append(hogs, f)
	}
	restore()
	t.Fatalf("%d files opened under a limit of %d", len(hogs), low.Cur)
	return nil
}
