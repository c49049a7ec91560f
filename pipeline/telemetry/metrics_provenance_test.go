package telemetry

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMetricsFixtureProvenance: the hand-written /metrics fixtures say so
// (issue 24: the llama.cpp one turned out stale against the live server).
// Every file of testdata/metrics has a row in its README naming the
// documentation or source it follows.
func TestMetricsFixtureProvenance(t *testing.T) {
	dir := filepath.Join("testdata", "metrics")
	b, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatalf("%v: the hand-written fixtures need a README saying where each comes from", err)
	}
	readme := string(b)
	if !strings.Contains(readme, "written by hand") {
		t.Errorf("%s/README.md does not say its fixtures were written by hand", dir)
	}
	source := regexp.MustCompile(`https://|[\w./-]+\.(py|rs|md|go)\b`)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "README.md" {
			continue
		}
		row := ""
		for _, line := range strings.Split(readme, "\n") {
			if strings.HasPrefix(line, "| `"+e.Name()+"`") {
				row = line
			}
		}
		if row == "" || !source.MatchString(row) {
			t.Errorf("%s: %s has no row naming its source (a URL or a source file): %q", dir, e.Name(), row)
		}
	}
}
