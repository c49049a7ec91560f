package extractbench_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/extractbench/extractbench"

// layer is the rank of a package in the house (README, "Layout"): imports
// run from a higher rank to a lower one only, cmd → pipeline → results →
// eval → the root → corpus, so that no arrow runs back up.
func layer(pkg string) (int, bool) {
	switch {
	case pkg == "schemas" || pkg == "numfmt" || pkg == "redact" || pkg == "jsonscan":
		return 0, true
	case pkg == "corpus" || strings.HasPrefix(pkg, "corpus/"):
		return 1, true
	case pkg == "":
		return 2, true // the root: the contract
	case pkg == "eval" || pkg == "sizing":
		return 3, true // judgement and arithmetic side by side: neither imports the other
	case pkg == "results" || pkg == "results/resultstest":
		return 5, true // the store, and its typed rows for the tests of every package
	case pkg == "results/compare":
		return 6, true // paired verdicts between runs, which the pages and the selection show
	case pkg == "results/plan" || strings.HasPrefix(pkg, "results/plan/"):
		return 7, true // a run's phases and plan, read through results, priced by sizing, marked by compare's verdicts
	case strings.HasPrefix(pkg, "results/"):
		return 8, true // the pages that read through results
	case pkg == "pipeline/family":
		return 9, true // the engine families: what the client, telemetry and the run know of each engine
	case pkg == "pipeline/client" || pkg == "pipeline/tokenizer":
		return 10, true // the engine client and the tokenizer it counts with
	case pkg == "pipeline/protocol":
		return 11, true // the protocol and its named defaults, which the parts read
	case pkg == "pipeline/dispatch" || pkg == "pipeline/telemetry":
		return 12, true // the run's parts by job
	case pkg == "pipeline/passrow":
		return 13, true // the one tally that makes a pass row, for the run and the merge
	case strings.HasPrefix(pkg, "pipeline/"):
		return 14, true // the merge, and test helpers
	case pkg == "pipeline":
		return 15, true // the run itself
	case strings.HasPrefix(pkg, "cmd/") || strings.HasPrefix(pkg, "scripts/"):
		return 16, true
	}
	return 0, false
}

// knownBackArrows are imports that break the rule today, each with the
// stage of issue 27 that removes it. The test fails when one is no longer
// there, so that the list only shrinks.
var knownBackArrows = map[string]string{}

// speaksSQL reports whether package pkg may import database/sql or
// go-sqlite3: results, the store, and results/resultstest, which changes a
// results.db behind its run's back for the tests of other packages (every
// other reader, tests included, asks results for typed rows).
func speaksSQL(pkg string) bool { return pkg == "results" || pkg == "results/resultstest" }

// isSQL reports whether imp is the SQL driver or database/sql.
func isSQL(imp string) bool { return imp == "github.com/mattn/go-sqlite3" || imp == "database/sql" }

// TestImportDirection asserts the one-way graph of the house with go list:
// every import goes down the layers, an engine imports only the root,
// corpus and its own engine packages and only cmd imports an engine
// (engines/builtin/starter, engines/process implement the root's Starter
// and ProcessStarter), and only results imports
// go-sqlite3 (or database/sql), tests included.
func TestImportDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	short := func(p string) (string, bool) {
		if p == module {
			return "", true
		}
		s, ok := strings.CutPrefix(p, module+"/")
		return s, ok
	}
	seenBack := map[string]bool{}
	var bad []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.SplitN(line, "|", 3)
		pkg, _ := short(parts[0])
		tests := strings.Fields(parts[2])
		for _, imp := range tests {
			if isSQL(imp) && !speaksSQL(pkg) {
				bad = append(bad, pkg+" (test) imports "+imp+": only results speaks SQL (use its typed readers)")
			}
		}
		for _, imp := range strings.Fields(parts[1]) {
			if isSQL(imp) && !speaksSQL(pkg) {
				bad = append(bad, pkg+" imports "+imp+": only results speaks SQL")
			}
			dep, ok := short(imp)
			if !ok || dep == pkg || strings.HasPrefix(dep, pkg+"/") && pkg != "" {
				continue // outside the module, or the package's own sub-package
			}
			if pkg == "engines/hostile" {
				continue // the tests' hostile server, not an engine a run starts: it may use pipeline's tokenizer
			}
			if strings.HasPrefix(dep, "engines/") && !strings.HasPrefix(pkg, "engines/") && !strings.HasPrefix(pkg, "cmd/") && !strings.HasPrefix(pkg, "scripts/") {
				bad = append(bad, pkg+" imports "+dep+": an engine is wired in by cmd behind the root's Starter or ProcessStarter, never imported")
			}
			if strings.HasPrefix(pkg, "engines/") {
				if r, _ := layer(dep); !(r == 1 || r == 2) && !strings.HasPrefix(dep, "engines/") {
					bad = append(bad, pkg+" imports "+dep+": an engine imports only the root and corpus")
				}
				continue
			}
			from, ok1 := layer(pkg)
			to, ok2 := layer(dep)
			if !ok1 || !ok2 {
				continue // a deploy or test-only folder
			}
			arrow := pkg + " -> " + dep
			if pkg == "" {
				arrow = "(root) -> " + dep
			}
			if to >= from && !strings.HasPrefix(pkg, dep+"/") {
				if _, known := knownBackArrows[arrow]; known {
					seenBack[arrow] = true
					continue
				}
				bad = append(bad, arrow+": imports run cmd → pipeline → results → eval → root → corpus")
			}
		}
	}
	for arrow, why := range knownBackArrows {
		if !seenBack[arrow] {
			bad = append(bad, arrow+" is gone: remove it from knownBackArrows ("+why+")")
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// TestOneResultsBuilder: tests outside results build a results directory
// through resultstest.Write only, so that a fixture follows the store as the
// run writes it, and one change to the store reaches every fixture. A test
// file (or a test-helper package, a folder ending in "test") that creates
// runs itself is a second builder.
func TestOneResultsBuilder(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if d.IsDir() || !strings.HasSuffix(path, ".go") || dir == "results" || dir == "results/resultstest" {
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") && !strings.HasSuffix(dir, "test") {
			return nil // the run and merge create runs: they are the writers, not fixtures
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), ".Create"+"Run(") { // split, so that this file is not a match
			t.Errorf("%s creates runs itself: build the directory with resultstest.Write", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOneCopyOfTestHelpers: a helper the tests of pipeline and of
// pipeline/client both need lives once, in pipeline/pipelinetest, not as a
// function of the same name in each package's tests.
func TestOneCopyOfTestHelpers(t *testing.T) {
	defined := map[string][]string{} // helper name -> the folders whose tests define it
	for _, dir := range []string{"pipeline", "pipeline/client"} {
		files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, path := range files {
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || seen[fn.Name.Name] {
					continue
				}
				name := fn.Name.Name
				if name == "init" || name == "TestMain" || strings.HasPrefix(name, "Test") || strings.HasPrefix(name, "Benchmark") || strings.HasPrefix(name, "Fuzz") || strings.HasPrefix(name, "Example") {
					continue
				}
				seen[name] = true
				defined[name] = append(defined[name], dir)
			}
		}
	}
	for name, dirs := range defined {
		if len(dirs) > 1 {
			t.Errorf("test helper %s is defined in the tests of %v: keep one copy in pipeline/pipelinetest", name, dirs)
		}
	}
}
