package extractbench_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// What counts as a Go identifier in the prose: a package name of this
// module (the root is "extractbench") followed by a name and at most one
// member, "eval.Judge", "results.Store.SealRun", "extractbench.Record.TPOT()".
// In the Markdown docs it is a whole backticked span, and the name may be
// unexported when it is camelCase ("eval.classifyTransport", not
// "results.db"); in Go comments it is any such word with an exported name,
// since comments rarely backtick. A backticked path ending in .go or .md
// must exist too: from the root or the doc's folder, or, bare ("pass.go"),
// anywhere in the module; one whose first folder is a placeholder in
// capitals (OUT/README.md) is left alone.
var (
	docSymbol  = regexp.MustCompile(`^([a-z][a-z0-9]*)\.([A-Z]\w*|[a-z]+[A-Z]\w*)(?:\.(\w+))?(?:\(\))?$`)
	commentSym = regexp.MustCompile(`(?:^|[^\w./-])([a-z][a-z0-9]*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)
	backticked = regexp.MustCompile("`([^`\n]+)`")
	docPath    = regexp.MustCompile(`^[\w./-]+\.(?:go|md)$`)
)

// moduleSymbols is, by package name, every top-level name and every
// Type.Member (method, struct field, interface method, with embedded
// types' members promoted) declared in the module's Go files.
type moduleSymbols struct {
	names map[string]map[string]bool // package name → "Name" and "Type.Member"
	files map[string]bool            // base names of every file of the module
}

// skipDir reports whether a folder holds no code or docs of the module.
func skipDir(path string, d fs.DirEntry) bool {
	name := d.Name()
	return path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules")
}

func loadModuleSymbols(t *testing.T) (*moduleSymbols, []*ast.File, *token.FileSet) {
	t.Helper()
	ms := &moduleSymbols{names: map[string]map[string]bool{}, files: map[string]bool{}}
	fset := token.NewFileSet()
	var parsed []*ast.File
	embeds := map[string]map[string][]string{} // package → type → embedded type names
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(path, d) {
				return filepath.SkipDir
			}
			return nil
		}
		ms.files[d.Name()] = true
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		parsed = append(parsed, f)
		pkg := strings.TrimSuffix(f.Name.Name, "_test")
		if pkg == "main" {
			return nil
		}
		set := ms.names[pkg]
		if set == nil {
			set, embeds[pkg] = map[string]bool{}, map[string][]string{}
			ms.names[pkg] = set
		}
		collectDecls(f, set, embeds[pkg])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg, types := range embeds {
		for typ := range types {
			promote(ms.names[pkg], types, typ, typ, map[string]bool{})
		}
	}
	return ms, parsed, fset
}

// collectDecls adds f's names to set, and each struct's embedded types to embeds.
func collectDecls(f *ast.File, set map[string]bool, embeds map[string][]string) {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				set[d.Name.Name] = true
			} else if recv := recvName(d.Recv.List[0].Type); recv != "" {
				set[recv+"."+d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						set[n.Name] = true
					}
				case *ast.TypeSpec:
					set[s.Name.Name] = true
					collectMembers(s.Name.Name, s.Type, set, embeds)
				}
			}
		}
	}
}

func collectMembers(typ string, expr ast.Expr, set map[string]bool, embeds map[string][]string) {
	var fields *ast.FieldList
	switch e := expr.(type) {
	case *ast.StructType:
		fields = e.Fields
	case *ast.InterfaceType:
		fields = e.Methods
	default:
		return
	}
	for _, fld := range fields.List {
		for _, n := range fld.Names {
			set[typ+"."+n.Name] = true
		}
		if len(fld.Names) == 0 {
			if name := recvName(fld.Type); name != "" {
				embeds[typ] = append(embeds[typ], name)
				set[typ+"."+name] = true
			}
		}
	}
}

// promote copies the members of the types embedded in typ (recursively)
// onto outer, as Go promotes them.
func promote(set map[string]bool, embeds map[string][]string, outer, typ string, seen map[string]bool) {
	if seen[typ] {
		return
	}
	seen[typ] = true
	for _, e := range embeds[typ] {
		for key := range set {
			if member, ok := strings.CutPrefix(key, e+"."); ok {
				set[outer+"."+member] = true
			}
		}
		promote(set, embeds, outer, e, seen)
	}
}

// recvName is the type name of a receiver or embedded field: T, *T, T[P],
// or the selector's name for another package's type.
func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

// resolves reports whether pkg.name(.member) is declared; ok is false when
// pkg is not a package of the module (the text is then not a symbol).
func (ms *moduleSymbols) resolves(pkg, name, member string) (found, ok bool) {
	set, ok := ms.names[pkg]
	if !ok {
		return false, false
	}
	if member == "" {
		return set[name], true
	}
	return set[name+"."+member], true
}

// TestDocSymbolsResolve: every Go identifier the docs and comments name
// (see docSymbol) is declared in the module, and every file path they
// name exists, so that a symbol that moves takes its prose along.
func TestDocSymbolsResolve(t *testing.T) {
	ms, parsed, fset := loadModuleSymbols(t)
	var bad []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(path, d) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range backticked.FindAllStringSubmatch(line, -1) {
				span := m[1]
				if s := docSymbol.FindStringSubmatch(span); s != nil {
					if found, ok := ms.resolves(s[1], s[2], s[3]); ok && !found {
						bad = append(bad, path+":"+itoa(i+1)+": `"+span+"` is declared nowhere in the module")
					}
					continue
				}
				if docPath.MatchString(span) && !pathExists(ms, filepath.Dir(path), span) {
					bad = append(bad, path+":"+itoa(i+1)+": `"+span+"`: no such file")
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range parsed {
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				for _, m := range commentSym.FindAllStringSubmatch(c.Text, -1) {
					if found, ok := ms.resolves(m[1], m[2], m[3]); ok && !found {
						bad = append(bad, fset.Position(c.Pos()).String()+": "+strings.TrimLeft(m[0], " (\"'`")+" is declared nowhere in the module")
					}
				}
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// pathExists reports whether a path the doc in folder docDir names is a
// file of the module (see docSymbol for where it is looked for).
func pathExists(ms *moduleSymbols, docDir, p string) bool {
	if !strings.Contains(p, "/") {
		return ms.files[p]
	}
	if first, _, _ := strings.Cut(p, "/"); first == strings.ToUpper(first) && first != ".." && first != "." {
		return true // a placeholder: OUT/README.md
	}
	for _, base := range []string{".", docDir} {
		if _, err := os.Stat(filepath.Join(base, filepath.FromSlash(p))); err == nil {
			return true
		}
	}
	return false
}

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}
