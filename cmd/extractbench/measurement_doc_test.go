package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// privateRules are the names of the team's private folder that a user's
// clone does not have. They are built from parts so that this file does
// not name them itself.
var privateRules = []string{".." + "/shared/", "shared" + "/MEASUREMENT.md"}

// measurementCite matches a citation of the rules by section, in prose or
// in a comment whose line wrapped: "MEASUREMENT.md section 8",
// "`MEASUREMENT.md` section 8", "MEASUREMENT.md §3–§8".
var measurementCite = regexp.MustCompile("MEASUREMENT\\.md`?\\s+(?:section\\s+|§)(\\d+)(?:–§(\\d+))?")

// commentWrap joins a Go comment that wraps onto its next line.
var commentWrap = regexp.MustCompile(`\n\s*//\s*`)

// TestMeasurementRulesShipWithTheRepository: the measurement rules that
// README, results/SCHEMA.md, the reports and the code cite are the
// repository's own MEASUREMENT.md, not the team's private copy a clone
// lacks. No tracked file outside engines/ and reference/ names
// the private folder, and every "MEASUREMENT.md section N" (or §N) cited
// anywhere tracked is a numbered section of MEASUREMENT.md.
func TestMeasurementRulesShipWithTheRepository(t *testing.T) {
	rules, err := os.ReadFile(filepath.Join(repoRoot, "MEASUREMENT.md"))
	if err != nil {
		t.Fatalf("the measurement rules must ship at the repository root: %v", err)
	}
	sections := map[int]bool{}
	for _, m := range regexp.MustCompile(`(?m)^## (\d+)\. `).FindAllSubmatch(rules, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		sections[n] = true
	}
	if len(sections) == 0 {
		t.Fatal("MEASUREMENT.md has no numbered section (\"## 1. ...\")")
	}

	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	files, cites := 0, 0
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" || strings.HasPrefix(name, "engines/") || strings.HasPrefix(name, "reference/") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(repoRoot, name))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet committed
			}
			t.Fatal(err)
		}
		if bytes.IndexByte(data, 0) >= 0 {
			continue // binary
		}
		files++
		for _, p := range privateRules {
			if i := bytes.Index(data, []byte(p)); i >= 0 {
				line := bytes.Count(data[:i], []byte("\n")) + 1
				t.Errorf("%s:%d names %q, which a user's clone does not have: cite MEASUREMENT.md (repository root)", name, line, p)
			}
		}
		text := commentWrap.ReplaceAllString(string(data), " ")
		for _, m := range measurementCite.FindAllStringSubmatch(text, -1) {
			for _, s := range m[1:] {
				if s == "" {
					continue
				}
				cites++
				if n, _ := strconv.Atoi(s); !sections[n] {
					t.Errorf("%s cites %q: MEASUREMENT.md has no section %d", name, m[0], n)
				}
			}
		}
	}
	if files < 50 || cites < 20 {
		t.Fatalf("read %d tracked files and %d citations: want the whole repository", files, cites)
	}
}
