package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/extractbench/extractbench/schemas"
)

// Corpus is a loaded, validated corpus.
type Corpus struct {
	Path      string     // the directory or .jsonl file it was loaded from
	Documents []Document // in file order
	Manifest  Manifest   // recomputed from the records; enum and field definitions from manifest.json
	Warnings  []string   // problems that do not stop a run (a duplicate text, a class that disagrees with the length)
}

// Problem is one thing wrong with a corpus, located as precisely as the
// loader can: file, line (0 when the problem is not on a line) and field.
type Problem struct {
	File    string
	Line    int
	Field   string
	Message string
}

// String formats p as FILE:LINE: field: problem.
func (p Problem) String() string {
	loc := p.File
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return loc + ": " + p.Field + ": " + p.Message
}

// LoadError is the error Load returns for a corpus that is not valid: every
// problem found, one per line in Error, so a user can fix them all at once.
type LoadError struct {
	Path     string
	Problems []Problem
}

// Error lists every problem, one per line.
func (e *LoadError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "corpus %s: %d problem(s):", e.Path, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n" + p.String())
	}
	return b.String()
}

// Load reads and validates a corpus: a directory holding documents.jsonl and
// manifest.json, or a bare .jsonl file (its manifest is computed, with
// DefaultCategories as the enum). A corpus with problems returns a
// *LoadError listing all of them; other errors are I/O errors.
func Load(path string) (*Corpus, error) {
	s, err := read(path)
	if err != nil {
		return nil, err
	}
	if len(s.problems) > 0 {
		return nil, &LoadError{Path: path, Problems: s.problems}
	}
	return s.corpus, nil
}

// utf8BOM is the UTF-8 byte-order mark some editors put at the start of a file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// scan is everything read learns about a corpus, good or bad.
type scan struct {
	corpus         *Corpus
	problems       []Problem
	duplicateIDs   []string // "id (lines a, b)"
	duplicateTexts []string // "id-a and id-b (lines a, b)"
	lineOf         map[string]int
	lines          int // records read, good or bad
}

// read loads path without stopping at the first problem.
func read(path string) (*scan, error) {
	return readFS(osFS{}, path)
}

// readFS is read over any file system: the disk, or the default corpus
// embedded in the binary.
func readFS(fsys fs.FS, path string) (*scan, error) {
	info, err := fs.Stat(fsys, path)
	if err != nil {
		return nil, fmt.Errorf("open corpus %s: %w", path, err)
	}
	docsPath, manPath := path, ""
	if info.IsDir() {
		docsPath = filepath.Join(path, DocumentsFile)
		manPath = filepath.Join(path, ManifestFile)
	}
	data, err := fs.ReadFile(fsys, docsPath)
	if err != nil {
		return nil, fmt.Errorf("read corpus documents %s: %w", docsPath, err)
	}
	s := &scan{corpus: &Corpus{Path: path}}
	if rest, ok := bytes.CutPrefix(data, utf8BOM); ok {
		// Windows editors save UTF-8 with a byte-order mark; JSON has none.
		data = rest
		s.corpus.Warnings = append(s.corpus.Warnings, docsPath+": starts with a UTF-8 byte-order mark (ignored)")
	}
	categories, fields := DefaultCategories, DefaultFields
	var declared *Manifest
	if manPath != "" {
		raw, err := fs.ReadFile(fsys, manPath)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			s.corpus.Warnings = append(s.corpus.Warnings, fmt.Sprintf("%s: no %s: manifest computed from the records with the default category enum", path, ManifestFile))
		case err != nil:
			return nil, fmt.Errorf("read corpus manifest %s: %w", manPath, err)
		default:
			declared = s.parseManifest(manPath, bytes.TrimPrefix(raw, utf8BOM))
			if declared != nil {
				categories, fields = declared.Categories, declared.Fields
			}
		}
	}
	s.records(docsPath, data, categories)
	docs := s.corpus.Documents
	s.corpus.Manifest = ComputeManifest(docs, categories, fields)
	if declared != nil {
		if len(s.problems) > 0 {
			s.corpus.Warnings = append(s.corpus.Warnings, manPath+": not compared with the records: fix the record problems first")
		} else {
			s.compare(manPath, docsPath, *declared)
		}
	}
	return s, nil
}

func (s *scan) add(file string, line int, field, format string, args ...any) {
	s.problems = append(s.problems, Problem{File: file, Line: line, Field: field, Message: fmt.Sprintf(format, args...)})
}

// parseManifest decodes manifest.json and checks what the loader relies on.
func (s *scan) parseManifest(file string, raw []byte) *Manifest {
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		s.add(file, 0, "(file)", "not a valid manifest: %v", err)
		return nil
	}
	ok := true
	if m.Format != ManifestFormat {
		s.add(file, 0, "format", "is %q, want %q", m.Format, ManifestFormat)
		ok = false
	}
	if len(m.Categories) == 0 {
		s.add(file, 0, "categories", "the category enum is empty; list the allowed categories")
		ok = false
	}
	seen := map[string]bool{}
	for _, c := range m.Categories {
		if seen[c] {
			s.add(file, 0, "categories", "%q is listed twice", c)
			ok = false
		}
		seen[c] = true
	}
	if !ok {
		return nil
	}
	if m.Fields == nil {
		m.Fields = DefaultFields
	}
	return &m
}

// records parses every line of documents.jsonl.
func (s *scan) records(file string, data []byte, categories []string) {
	enum := make(map[string]bool, len(categories))
	for _, c := range categories {
		enum[c] = true
	}
	ids := map[string]int{}
	texts := map[[32]byte]int{} // text hash → index in Documents
	lines := bytes.Split(data, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1] // the newline that ends the last record
	}
	if len(lines) == 0 {
		s.add(file, 0, "(file)", "no records: a corpus needs at least one document")
		return
	}
	docLine := map[string]int{}
	s.lineOf, s.lines = docLine, len(lines)
	for i, raw := range lines {
		n := i + 1
		d, probs := ParseLine(bytes.TrimSuffix(raw, []byte("\r")), enum)
		for _, p := range probs {
			s.add(file, n, p.Field, "%s", p.Message)
		}
		if d == nil {
			continue
		}
		if first, dup := ids[d.ID]; dup {
			s.add(file, n, "id", "duplicate id %q, first on line %d; every id must be unique", d.ID, first)
			s.duplicateIDs = append(s.duplicateIDs, fmt.Sprintf("%s (lines %d, %d)", d.ID, first, n))
			continue
		}
		ids[d.ID] = n
		if len(probs) > 0 {
			continue
		}
		h := sha256.Sum256([]byte(d.Text))
		if j, dup := texts[h]; dup {
			other := s.corpus.Documents[j].ID
			s.corpus.Warnings = append(s.corpus.Warnings, fmt.Sprintf("%s:%d: text: same text as %s (line %d)", file, n, other, docLine[other]))
			s.duplicateTexts = append(s.duplicateTexts, fmt.Sprintf("%s and %s (lines %d, %d)", other, d.ID, docLine[other], n))
		} else {
			texts[h] = len(s.corpus.Documents)
		}
		if tokens := ApproxTokens(d.Text); !inClass(d.LengthClass, tokens) {
			s.corpus.Warnings = append(s.corpus.Warnings, fmt.Sprintf("%s:%d: length_class: %q but the text is about %d tokens", file, n, d.LengthClass, tokens))
		}
		docLine[d.ID] = n
		s.corpus.Documents = append(s.corpus.Documents, *d)
	}
}

func inClass(c LengthClass, tokens int) bool {
	min, max, ok := ClassRange(c)
	if !ok {
		return false
	}
	if c == Short {
		return tokens >= min && tokens < max
	}
	return tokens >= min && tokens <= max
}

// LineProblem is one problem of one line, before the loader adds file and line.
type LineProblem struct {
	Field   string
	Message string
}

// ParseLine parses and validates one documents.jsonl line against the
// corpus-record schema and the category enum (nil enum: any category). It
// returns the document when the line could be decoded, even with problems,
// so the caller can still check its id for duplicates; nil when it could not.
func ParseLine(raw []byte, enum map[string]bool) (*Document, []LineProblem) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, []LineProblem{{"(line)", "blank line; every line must be one JSON record"}}
	}
	var probs []LineProblem
	badUTF8 := !utf8.Valid(raw)
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, []LineProblem{{"(line)", "not valid JSON: " + err.Error()}}
	}
	if dec.More() {
		return nil, []LineProblem{{"(line)", "more than one JSON value on the line"}}
	}
	var d Document
	_ = json.Unmarshal(raw, &d) // best effort: the schema below says what is wrong
	own := map[string]bool{}    // fields with a clearer message than the schema's
	if badUTF8 {
		field := "(line)"
		for name, val := range map[string]string{"text": d.Text, "id": d.ID} {
			if strings.ContainsRune(val, utf8.RuneError) {
				field = name
			}
		}
		probs = append(probs, LineProblem{field, fmt.Sprintf("invalid UTF-8 at byte %d of the line; save the file as UTF-8", invalidAt(raw))})
		own[field] = true
	}
	if _, isString := fieldOf(v, "text").(string); isString && strings.TrimSpace(d.Text) == "" {
		probs = append(probs, LineProblem{"text", "empty text; a document needs its text"})
		own["text"] = true
	}
	if c, isString := fieldOf(fieldOf(v, "expected"), "category").(string); isString && enum != nil && !enum[c] {
		probs = append(probs, LineProblem{"expected.category", fmt.Sprintf("%q is not in the category enum %s", c, enumList(enum))})
		own["expected.category"] = true
	}
	if ds, isString := fieldOf(fieldOf(v, "expected"), "date").(string); isString {
		if _, err := time.Parse("2006-01-02", ds); err != nil && len(ds) == 10 {
			probs = append(probs, LineProblem{"expected.date", fmt.Sprintf("%q is not a real calendar day (YYYY-MM-DD)", ds)})
			own["expected.date"] = true
		}
	}
	for _, msg := range schemas.Validate(schemas.CorpusRecord(), v) {
		field, text, _ := strings.Cut(msg, ": ")
		if own[field] {
			continue
		}
		if field == "expected" && strings.HasSuffix(text, " is required") {
			// Name the missing key itself, and say null is how to write "absent".
			key := strings.TrimSuffix(text, " is required")
			probs = append(probs, LineProblem{"expected." + key, "missing key; write null when the document lacks it"})
			continue
		}
		probs = append(probs, LineProblem{field, text})
	}
	if _, isString := fieldOf(v, "id").(string); !isString {
		return nil, probs
	}
	return &d, probs
}

// fieldOf returns v[key] when v is a JSON object, else nil.
func fieldOf(v any, key string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	return m[key]
}

func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

func enumList(enum map[string]bool) string {
	var names []string
	for _, c := range DefaultCategories {
		if enum[c] {
			names = append(names, c)
		}
	}
	if len(names) != len(enum) {
		names = names[:0]
		for c := range enum {
			names = append(names, c)
		}
		sort.Strings(names)
	}
	return "[" + strings.Join(names, ", ") + "]"
}
