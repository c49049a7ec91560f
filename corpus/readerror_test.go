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
// document that could not be read back says why. A file that changed says
// so. A process with no file descriptor left reads its documents all the
// same: the corpus holds its file open (it reopened it for every document,
// and failed the run there, issue 43).
func TestResolve_ReadErrorSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, path string) (restore func())
		want  string // "" for no error
	}{
		{name: "file changed", spoil: func(t *testing.T, path string) func() {
			if err := os.WriteFile(path, []byte(`{"id":"other"}`+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return func() {}
		}, want: "the file changed"},
		{name: "out of file descriptors", spoil: exhaustFiles},
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
			c, err := openByReference(path)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			restore := tc.spoil(t, path)
			full, err := c.Resolve(c.Doc(0))
			restore()
			if tc.want == "" {
				if err != nil || full.Text != sampleDocs()[0].Text {
					t.Fatalf("Resolve: %v (text %q), want the document", err, full.Text)
				}
				return
			}
			var re *ReadError
			if !errors.As(err, &re) {
				t.Fatalf("Resolve: %v, want a *ReadError", err)
			}
			if !strings.Contains(re.Error(), tc.want) || re.OutOfFiles() || !strings.Contains(re.Remedy(), "restore the file") {
				t.Errorf("error %q (out of files %v), remedy %q; want %q, restore the file", re, re.OutOfFiles(), re.Remedy(), tc.want)
			}
		})
	}
}

// TestReadError_OutOfFiles: an error for want of a file descriptor says
// so and how to raise the limit; "restore the file" would not help.
func TestReadError_OutOfFiles(t *testing.T) {
	re := &ReadError{ID: "doc-1", Path: "c.jsonl", Line: 1, Err: &os.PathError{Op: "open", Path: "c.jsonl", Err: syscall.EMFILE}}
	if !re.OutOfFiles() || !strings.Contains(re.Error(), "ran out of file descriptors (the file did not change)") || !strings.Contains(re.Remedy(), "ulimit -n") {
		t.Errorf("error %q (out of files %v), remedy %q", re, re.OutOfFiles(), re.Remedy())
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
