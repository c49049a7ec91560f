package resultstest

import (
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
)

// asReaderEnv marks the copy of a test that AsReader runs as an
// unprivileged user.
const asReaderEnv = "EXTRACTBENCH_TEST_AS_READER"

// nobody is the user a test run as root reads as: root ignores the
// permissions a read-only results directory is made of.
const nobody = 65534

// AsReader takes write permission away from dir and everything in it, as
// a read-only mount or a bucket does, and calls read, which must read it
// without writing. Run as root, which writes regardless, the whole test
// runs again in a child process of the test binary as user nobody, who
// builds its own dir and reaches this call as an unprivileged user.
func AsReader(t *testing.T, dir string, read func() error) {
	t.Helper()
	if os.Geteuid() == 0 && os.Getenv(asReaderEnv) == "" {
		rerunAsNobody(t)
		return
	}
	var paths []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			paths = append(paths, p)
		}
		return nil
	})
	for i := len(paths) - 1; i >= 0; i-- { // the files before their directory
		fi, err := os.Stat(paths[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(paths[i], fi.Mode().Perm()&^0o222); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, p := range paths {
			if fi, err := os.Stat(p); err == nil {
				_ = os.Chmod(p, fi.Mode().Perm()|0o200)
			}
		}
	})
	if err := read(); err != nil {
		t.Fatalf("read %s without write permission: %v", dir, err)
	}
}

// rerunAsNobody runs t's test again in a copy of the test binary that user
// nobody can execute, as nobody, and fails t with its output if it fails.
func rerunAsNobody(t *testing.T) {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "extractbench-as-reader-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	copyBin := filepath.Join(tmp, filepath.Base(bin))
	if err := copyFile(bin, copyBin); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{tmp, copyBin} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(copyBin, "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), asReaderEnv+"=1", "TMPDIR="+os.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, NoSetGroups: true}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the test as user nobody (uid %d): %v\n%s", nobody, err, out)
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
