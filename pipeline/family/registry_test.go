package family_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/pipeline/family"
)

// registered returns, for each file of this package, the names of the
// package-level variables it sets with register(...).
func registered(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, v := range vs.Values {
					if call, ok := v.(*ast.CallExpr); ok && isIdent(call.Fun, "register") {
						out[path] = append(out[path], vs.Names[i].Name)
					}
				}
			}
		}
	}
	return out
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// TestRegistry_OneFilePerFamily: each family is one file, named after its
// kind (generic.go for the family of unknown engines), that registers it
// and nothing else; every registered family is reachable by its kind.
func TestRegistry_OneFilePerFamily(t *testing.T) {
	byFile := registered(t)
	fams := append(family.All(), family.Generic)
	n := 0
	for file, names := range byFile {
		n += len(names)
		if len(names) != 1 {
			t.Errorf("%s registers %v: one family a file", file, names)
		}
	}
	if n != len(fams) {
		t.Errorf("%d register calls for %d families", n, len(fams))
	}
	for _, f := range fams {
		file := f.Kind + ".go"
		if f.Kind == "" {
			file = "generic.go"
		}
		if len(byFile[file]) != 1 {
			t.Errorf("family %q: no %s registers it (files: %v)", f.Kind, file, byFile)
		}
		if family.ByKind(f.Kind) != f {
			t.Errorf("ByKind(%q) is not the registered family", f.Kind)
		}
	}
	want := []string{"builtin", "llamacpp", "ollama", "sglang", "tgi", "transformers", "vllm"}
	var got []string
	for _, f := range family.All() {
		got = append(got, f.Kind)
	}
	if !slices.Equal(got, want) {
		t.Errorf("All() = %v, want %v", got, want)
	}
}

// TestRegistry_Complete: every named family can be identified (owned_by or
// a probe), says where its version is, has one telemetry source or says it
// has none, has a reset or says why not, and a start recipe it names
// exists in this repository.
func TestRegistry_Complete(t *testing.T) {
	for _, f := range append(family.All(), family.Generic) {
		t.Run(f.Label(), func(t *testing.T) {
			tel := f.Telemetry
			if f.Kind != "" && (len(f.OwnedBy) == 0 && len(f.Probes) == 0 || f.VersionPath == "" || f.Doc == "") {
				t.Errorf("named family: owned_by %v, probes %d, version path %q, doc %q: want a way to know it and its version", f.OwnedBy, len(f.Probes), f.VersionPath, f.Doc)
			}
			if tel.Path != "" && f.Kind != "" && (tel.Prometheus == nil) == (tel.JSON == nil) {
				t.Errorf("telemetry at %q: want exactly one of Prometheus and JSON", tel.Path)
			}
			if tel.Missing == "" {
				t.Error("telemetry does not say which figures the family lacks")
			}
			if !f.CanReset() && f.Reset.Note == "" {
				t.Error("no reset and no note saying why")
			}
			if len(f.MemoryEvidence) == 0 {
				t.Error("no memory evidence")
			}
			if f.Start != "" {
				if _, err := os.Stat(filepath.Join("..", "..", f.Start)); err != nil {
					t.Errorf("start recipe %s: %v", f.Start, err)
				}
			}
		})
	}
}

// TestRegistry_KindsNamedOnlyHere: no code outside this package spells a
// family's kind or telemetry dialect, so that detection, resets and
// telemetry can only come from the registry. Tests, test-helper packages
// (a folder ending in "test") and the engines themselves (engines/, the
// servers that answer as a family) are not the client's side.
func TestRegistry_KindsNamedOnlyHere(t *testing.T) {
	names := map[string]bool{}
	for _, f := range family.All() {
		names[f.Kind] = true
	}
	for _, p := range family.Dialects(nil) {
		names[p.Dialect] = true
		names["vllm-v0"] = true // vLLM's Generation
	}
	// Literals equal to a kind that mean something else.
	allowed := map[string]string{
		"engine.go:builtin": "engine.url's builtin, the in-process engine, not a kind",
	}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "pipeline/family" || rel == "engines" || strings.HasPrefix(d.Name(), ".") && rel != "." || strings.HasSuffix(rel, "test") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && names[s] {
				if _, ok := allowed[rel+":"+s]; !ok {
					t.Errorf("%s names the family %q: take it from pipeline/family", rel, s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
