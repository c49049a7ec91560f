package client

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sourceRef is what a provenance row must name: a web page, or a file of
// the engine's source tree.
var sourceRef = regexp.MustCompile(`https://|[\w./-]+\.(py|rs|md|go)\b`)

// TestFixtureProvenance: the hand-written engine fixtures say so (issue 24:
// the project's support for five engine families rested on them, and the
// llama.cpp ones turned out stale against the live server). Every file of
// testdata/engines and testdata/streams has a row in testdata/README.md
// that names the documentation or source it follows.
func TestFixtureProvenance(t *testing.T) {
	checkProvenance(t, filepath.Join("testdata", "README.md"), filepath.Join("testdata", "engines"), filepath.Join("testdata", "streams"))
}

// checkProvenance fails unless readme says its files were written by hand
// and has, for every file of dirs, a table row naming it (`name`; the
// client's own golden outputs under `*.golden.json`) with a source.
func checkProvenance(t *testing.T, readme string, dirs ...string) {
	t.Helper()
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatalf("%v: the hand-written fixtures need a README saying where each comes from", err)
	}
	text := string(b)
	if !strings.Contains(text, "written by hand") {
		t.Errorf("%s does not say its fixtures were written by hand", readme)
	}
	var rows []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "| `") {
			rows = append(rows, line)
		}
	}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() || e.Name() == "README.md" {
				continue
			}
			row := ""
			for _, r := range rows {
				golden := strings.HasSuffix(e.Name(), ".golden.json") && strings.Contains(r, "`*.golden.json`")
				if strings.Contains(r, "`"+e.Name()+"`") || golden {
					row = r
					break
				}
			}
			switch {
			case row == "":
				t.Errorf("%s: %s has no row in %s", dir, e.Name(), readme)
			case !strings.HasSuffix(e.Name(), ".golden.json") && !sourceRef.MatchString(row):
				t.Errorf("%s: the row of %s names no source (a URL or a source file): %s", readme, e.Name(), row)
			}
		}
	}
}
