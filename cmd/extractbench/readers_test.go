package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ulikunitz/xz"

	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/plan/plantest"
)

// TestSelect_SameConfigurationTwoDirs: two results directories of one
// protocol (two nights) hold the same configurations; select names each
// one's directory beside it, so that the sheet does not list one
// configuration twice. A configuration in one directory only keeps its
// bare name, and -json keeps the variant as recorded, beside its dir.
func TestSelect_SameConfigurationTwoDirs(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "night-1"), filepath.Join(root, "night-2")
	plantest.Write(t, a, sizingFixture())
	other := sizingFixture()
	other.RunID = "golden-2"
	plantest.Write(t, b, other)
	code, stdout, stderr := runCLI(t, "select", a, b)
	if code != exitOK {
		t.Fatalf("select: exit %d: %s", code, stderr)
	}
	for _, dir := range []string{a, b} {
		for _, v := range []string{"bf16", "int4", "awq"} {
			if want := "| " + v + " (" + dir + "): "; !strings.Contains(stdout, want) {
				t.Errorf("the sheet lacks %q:\n%s", want, stdout)
			}
		}
	}

	code, stdout, stderr = runCLI(t, "select", a)
	if code != exitOK {
		t.Fatalf("select one dir: exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, a) || !strings.Contains(stdout, "| bf16: ") {
		t.Errorf("one directory: configurations should carry no directory:\n%s", stdout)
	}

	code, stdout, _ = runCLI(t, "select", "-json", a, b)
	if code != exitOK || strings.Contains(stdout, `"variant": "bf16 (`) || !strings.Contains(stdout, `"variant": "bf16"`) {
		t.Errorf("select -json (exit %d) should keep the recorded variant names:\n%.600s", code, stdout)
	}
}

// xzOnly writes the sizing fixture into a directory and leaves it as a
// committed reference run is: results.db.xz and no results.db.
func xzOnly(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	plantest.Write(t, dir, sizingFixture())
	in, err := os.Open(filepath.Join(dir, results.DBName))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(filepath.Join(dir, results.DBNameXZ))
	if err != nil {
		t.Fatal(err)
	}
	zw, err := xz.NewWriter(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(zw, in); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{results.DBName, results.DBName + "-wal", results.DBName + "-shm"} {
		os.Remove(filepath.Join(dir, name))
	}
	return dir
}

// TestReadCommands_XZ: report, select and compare read a directory holding
// only results.db.xz, as they read results.db (the same sheet and the same
// comparison), and leave no results.db behind; export, which migrates
// results.db in place, asks for it decompressed and says how.
func TestReadCommands_XZ(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	packed := xzOnly(t)
	plain := t.TempDir()
	plantest.Write(t, plain, sizingFixture())

	code, stdout, stderr := runCLI(t, "report", packed)
	if code != exitOK || !strings.Contains(stdout, filepath.Join(packed, "report.html")) {
		t.Fatalf("report on results.db.xz: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, args := range [][]string{{"select", "$DIR"}, {"compare", "$DIR:bf16", "$DIR:int4"}} {
		run := func(dir string) (int, string) {
			var a []string
			for _, s := range args {
				a = append(a, strings.ReplaceAll(s, "$DIR", dir))
			}
			code, stdout, stderr := runCLI(t, a...)
			if code == exitUsage || code == exitInfra {
				t.Errorf("%s on %s: exit %d: %s", args[0], dir, code, stderr)
			}
			return code, strings.ReplaceAll(stdout, dir, "$DIR")
		}
		gotCode, got := run(packed)
		wantCode, want := run(plain)
		if gotCode != wantCode || got != want {
			t.Errorf("%s: on results.db.xz exit %d:\n%s\nwant as on results.db, exit %d:\n%s", args[0], gotCode, got, wantCode, want)
		}
	}
	if _, err := os.Stat(filepath.Join(packed, results.DBName)); err == nil {
		t.Error("reading results.db.xz left a results.db in the directory")
	}

	code, _, stderr = runCLI(t, "export", packed)
	if want := "xz -dk " + filepath.Join(packed, results.DBNameXZ); code != exitUsage || !strings.Contains(stderr, want) {
		t.Errorf("export on results.db.xz alone: exit %d, stderr %q; want exit %d and %q", code, stderr, exitUsage, want)
	}
}
