package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../.."

// writeFlag matches a flag that names a directory a command writes into,
// with its argument: -out DIR, -out=DIR, -dataset ROOT.
var writeFlag = regexp.MustCompile(`(?:^|\s)-(out|dataset)(?:=|\s+)("[^"]*"|'[^']*'|\S+)`)

// TestREADME_OutputsLeaveTheSource: every directory the examples of
// README.md and docs/*.md write into (-out, -dataset, in their code
// blocks) is outside the repository's source folders, so that running an
// example from the clone never puts results.db, Parquet, CSV or a lock
// file into a Go package (`-out results` once wrote into the package
// results/). A top-level folder is source unless .gitignore's root entries
// ignore it; absolute paths (a container's /results) are not the clone's.
func TestREADME_OutputsLeaveTheSource(t *testing.T) {
	source := sourceFolders(t)
	if !source["results"] || !source["cmd"] {
		t.Fatalf("source folders %v: want results and cmd among them", source)
	}
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, page := range append([]string{filepath.Join(repoRoot, "README.md")}, pages...) {
		checked += checkOutputs(t, page, source)
	}
	if checked < 5 {
		t.Errorf("found %d -out or -dataset arguments in the docs' code blocks: the parser lost them", checked)
	}
}

// checkOutputs checks the -out and -dataset arguments of page's code
// blocks and returns how many it found.
func checkOutputs(t *testing.T, page string, source map[string]bool) int {
	t.Helper()
	name, _ := filepath.Rel(repoRoot, page)
	f, err := os.Open(page)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	inCode, n, checked := false, 0, 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inCode = !inCode
			continue
		}
		if !inCode {
			continue
		}
		for _, m := range writeFlag.FindAllStringSubmatch(line, -1) {
			dir := strings.Trim(m[2], `"'`)
			checked++
			if filepath.IsAbs(dir) {
				continue
			}
			first := strings.Split(filepath.ToSlash(filepath.Clean(dir)), "/")[0]
			if first == "." || first == ".." || source[first] {
				t.Errorf("%s:%d: -%s %s writes into the repository's source folder %s/: name a directory outside it (runs/..., extractbench-results)", name, n, m[1], dir, first)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return checked
}

// sourceFolders lists the repository's top-level folders that .gitignore
// does not ignore by a root entry ("/extractbench-results/", "/results-*/").
func sourceFolders(t *testing.T) map[string]bool {
	t.Helper()
	ignore, err := os.ReadFile(filepath.Join(repoRoot, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	var rooted []string
	for _, l := range strings.Split(string(ignore), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "/") {
			rooted = append(rooted, strings.Trim(l, "/"))
		}
	}
	entries, err := os.ReadDir(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
next:
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		for _, pat := range rooted {
			if ok, _ := filepath.Match(pat, e.Name()); ok {
				continue next
			}
		}
		out[e.Name()] = true
	}
	return out
}
