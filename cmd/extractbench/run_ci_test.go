package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCIFlags_EmptyPath: -junit or -summary-md given an empty path (an
// unset "$GITHUB_STEP_SUMMARY") or a flag (the same variable unquoted) is
// a usage error before anything runs, not a run that writes no CI file.
func TestCIFlags_EmptyPath(t *testing.T) {
	dir := t.TempDir()
	fixture := filepath.Join(dir, "fixture")
	buildFixture(t, "sizing", fixture)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"run, empty summary", []string{"run", "-quiet", "-summary-md", "", "-out", filepath.Join(dir, "out")}, "run: -summary-md was given an empty path (an unset variable?"},
		{"run, empty junit", []string{"run", "-quiet", "-junit=", "-out", filepath.Join(dir, "out")}, "run: -junit was given an empty path"},
		{"run, unquoted", []string{"run", "-summary-md", "-out", filepath.Join(dir, "out")}, "run: -summary-md -out: that is a flag, not a FILE"},
		{"report, empty summary", []string{"report", "-summary-md", "", fixture}, "report: -summary-md was given an empty path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitUsage, tt.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
				t.Errorf("a refused run left its -out behind (%v)", err)
			}
		})
	}
}

// TestCIFlags_UsedDir: a night run into a results directory already used
// is refused (exit 2), and the error says how to get the CI files of the
// run there (report -junit … -summary-md … DIR) and how to run anew.
func TestCIFlags_UsedDir(t *testing.T) {
	out := filepath.Join(t.TempDir(), "night")
	buildFixture(t, "run", out)
	junit, summary := filepath.Join(t.TempDir(), "junit.xml"), filepath.Join(t.TempDir(), "summary.md")
	code, _, stderr := runCLI(t, "run", "-quiet", "-out", out, "-junit", junit, "-summary-md", summary)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d: %s", code, exitUsage, stderr)
	}
	for _, w := range []string{"already holds run", "extractbench report -junit " + junit + " -summary-md " + summary + " " + out, "a fresh -out per run"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	// What it says works: report writes both from the run already there.
	if code, _, stderr := runCLI(t, "report", "-junit", junit, "-summary-md", summary, out); code != exitOK && code != exitVerdict {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	for _, p := range []string{junit, summary} {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("report wrote no %s (%v)", p, err)
		}
	}
}
