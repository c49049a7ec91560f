package corpus

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Imported is a corpus read from where a team keeps its data (ImportJSONL,
// ImportCSV), ready for WriteDirFields when it has no problems.
type Imported struct {
	Docs     []Document // each Expected.Object canonical, in Names' order
	Names    []string   // the field names: the protocol's, or the source's own
	Problems []Problem  // every problem, file:line: field: why; nothing should be written when there is one
	Warnings []string   // what does not stop the import (a class derived from a text between two ranges, a text no row names)
}

// MaxImportProblems caps how many problems an import lists; the rest are
// counted in one last problem.
const MaxImportProblems = 100

var (
	idRe   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`) // the corpus-record schema's id
	langRe = regexp.MustCompile(`^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$`)
)

// importer collects an import's documents and problems.
type importer struct {
	out     Imported
	exp     *Expectations
	ids     map[string]int // id → line of its first record
	dropped int            // problems past MaxImportProblems
}

func (im *importer) add(file string, line int, field, format string, args ...any) {
	if len(im.out.Problems) >= MaxImportProblems {
		im.dropped++
		return
	}
	im.out.Problems = append(im.out.Problems, Problem{File: file, Line: line, Field: field, Message: fmt.Sprintf(format, args...)})
}

func (im *importer) done(file string) *Imported {
	if im.dropped > 0 {
		im.out.Problems = append(im.out.Problems, Problem{File: file, Field: "(file)", Message: fmt.Sprintf("%d more problems not listed (the first %d are)", im.dropped, MaxImportProblems)})
	}
	if len(im.out.Docs) == 0 && len(im.out.Problems) == 0 {
		im.add(file, 0, "(file)", "no documents: a corpus needs at least one")
	}
	return &im.out
}

// document checks what every source shares (text, class, lang; the
// caller checks the id) and keeps the document when it has no problem.
func (im *importer) document(file string, line int, d Document, class string, ok bool) {
	if !utf8.ValidString(d.Text) {
		im.add(file, line, "text", "invalid UTF-8; save the text as UTF-8")
		ok = false
	} else if strings.TrimSpace(d.Text) == "" {
		im.add(file, line, "text", "empty text; a document needs its text")
		ok = false
	}
	if d.Lang != "" && !langRe.MatchString(d.Lang) {
		im.add(file, line, "lang", "%q is not a language tag such as en or pt-BR", d.Lang)
		ok = false
	}
	switch LengthClass(class) {
	case Short, Usual, Long:
		d.LengthClass = LengthClass(class)
	case "":
		tokens := ApproxTokens(d.Text)
		c, fits := ClassOf(tokens)
		if !fits {
			c = Usual
			if tokens > 3500 {
				c = Long
			}
			im.out.Warnings = append(im.out.Warnings, fmt.Sprintf("%s:%d: class: the text is about %d tokens, in no class's range: counted %s (give class to choose)", file, line, tokens, c))
		}
		d.LengthClass = c
	default:
		im.add(file, line, "class", "%q is not short, usual or long", class)
		ok = false
	}
	if ok {
		im.out.Docs = append(im.out.Docs, d)
	}
}

// id checks an id, and that no earlier record has it.
func (im *importer) id(file string, line int, id string) bool {
	switch {
	case id == "":
		im.add(file, line, "id", "missing or empty; every document needs an id")
	case len(id) > 200 || !idRe.MatchString(id):
		im.add(file, line, "id", "%q: an id is 1 to 200 letters, digits, '.', '_', ':' or '-', starting with a letter or digit", id)
	default:
		if first, dup := im.ids[id]; dup {
			im.add(file, line, "id", "duplicate id %q, first on line %d; every id must be unique", id, first)
			return false
		}
		im.ids[id] = line
		return true
	}
	return false
}

// expected checks one decoded expected object and returns it canonical;
// fieldOf names a field in problems ("expected.total", or a CSV column).
func (im *importer) expected(file string, line int, v any, field func(string) string) (string, bool) {
	obj, probs := checkExpected(v, im.exp)
	for _, p := range probs {
		name := p.Field
		if rest, ok := strings.CutPrefix(p.Field, "expected."); ok {
			name = field(rest)
		}
		im.add(file, line, name, "%s", p.Message)
	}
	return obj, len(probs) == 0
}

// ImportJSONL reads a JSONL file of {"id", "text", "expected": {...}}
// records, each optionally with "class" (short, usual or long; derived
// from the text's length when absent; "length_class" as a corpus writes
// it is read too) and "lang". With exp, every expected
// object follows exp (Expectations); without, the field names are the
// first record's expected keys, in their order, and every record must
// have the same keys. The error is for a file that cannot be read.
func ImportJSONL(path string, exp *Expectations) (*Imported, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", path, err)
	}
	defer f.Close()
	im := &importer{exp: exp, ids: map[string]int{}}
	if exp != nil {
		im.out.Names = exp.Names
	}
	lr := newLineReader(f)
	for n := 1; ; n++ {
		raw, _, _, more, err := lr.next()
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", path, err)
		}
		if !more {
			break
		}
		raw = bytes.TrimSuffix(raw, []byte("\r"))
		if n == 1 {
			raw = bytes.TrimPrefix(raw, utf8BOM)
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue // a blank line between records: nothing to import
		}
		im.jsonRecord(path, n, raw)
	}
	return im.done(path), nil
}

func (im *importer) jsonRecord(file string, n int, raw []byte) {
	if !json.Valid(raw) {
		p := syntaxProblem(raw)
		im.add(file, n, p.Field, "%s", p.Message)
		return
	}
	v, dups := decodeRecord(raw)
	rec, isObject := v.(map[string]any)
	if !isObject {
		im.add(file, n, "(line)", "want a JSON object {\"id\", \"text\", \"expected\"}, got %s", kindOf(v))
		return
	}
	ok := true
	for _, d := range dups {
		im.add(file, n, d, "key given twice in one object; keep one")
		ok = false
	}
	var unknown []string
	for k := range rec {
		if !slices.Contains([]string{"id", "text", "expected", "class", "length_class", "lang"}, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		im.add(file, n, k, "unknown key; a record has id, text, expected and optionally class and lang")
		ok = false
	}
	str := func(key string) string {
		x, given := rec[key]
		if !given {
			return ""
		}
		s, isString := x.(string)
		if !isString {
			im.add(file, n, key, "want a string, got %s", kindOf(x))
			ok = false
		}
		return s
	}
	d := Document{ID: str("id"), Text: str("text"), Lang: str("lang")}
	class := str("class")
	if _, both := rec["length_class"]; both && class != "" {
		im.add(file, n, "length_class", "given with class; keep one")
		ok = false
	} else if class == "" {
		class = str("length_class") // a corpus's own documents.jsonl imports as it is
	}
	e, given := rec["expected"]
	switch {
	case !given:
		im.add(file, n, "expected", "missing; every record needs its expected object")
		ok = false
	default:
		if im.exp == nil {
			names, isObj := keyOrder(raw, "expected")
			if !isObj {
				im.add(file, n, "expected", "want an object keyed by the field names, got %s", kindOf(e))
				ok = false
				break
			}
			if im.out.Names == nil {
				im.out.Names = names
			}
			im.exp = &Expectations{Names: im.out.Names}
		}
		obj, good := im.expected(file, n, e, func(name string) string { return "expected." + name })
		d.Expected = Expected{Object: obj}
		ok = ok && good
	}
	ok = im.id(file, n, d.ID) && ok
	im.document(file, n, d, class, ok)
}

// keyOrder is the keys of the object at top-level key of the record raw,
// in the order written; false when it is not an object.
func keyOrder(raw []byte, key string) ([]string, bool) {
	var rec map[string]json.RawMessage
	if json.Unmarshal(raw, &rec) != nil {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(rec[key]))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var names []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		names = append(names, t.(string))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil, false
		}
	}
	return names, true
}

// ImportCSV reads a CSV of expectations, header "id" then one column per
// field, one row per document, beside textDir, which holds each
// document's text as ID.txt. An empty cell is null; a list or object is
// written as JSON in its cell. With exp, the columns must be exp's names
// (in any order) and a cell is its text when the field takes a string,
// else the cell read as JSON (a number, true or false, a list), except
// that a field taking numbers as text (a decimal, in its locale) never
// reads a cell as a JSON number; without,
// the columns are the field names and a cell is its text unless it starts
// with [ or {. Problems name the CSV's line and the column. The error is
// for a file that cannot be read.
func ImportCSV(csvPath, textDir string, exp *Expectations) (*Imported, error) {
	raw, err := os.ReadFile(csvPath)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", csvPath, err)
	}
	if _, err := os.Stat(textDir); err != nil {
		return nil, fmt.Errorf("import %s: the folder of texts: %w", csvPath, err)
	}
	im := &importer{exp: exp, ids: map[string]int{}}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(raw, utf8BOM)))
	header, err := r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			im.add(csvPath, 0, "(file)", "empty: want a header id,FIELD,... and a row per document")
			return im.done(csvPath), nil
		}
		im.add(csvPath, 1, "(header)", "%v", csvErr(err))
		return im.done(csvPath), nil
	}
	if !im.csvHeader(csvPath, header) {
		return im.done(csvPath), nil
	}
	named := map[string]bool{}
	for {
		row, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line := 0
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.StartLine
			}
			im.add(csvPath, line, "(row)", "%v", csvErr(err))
			continue
		}
		line, _ := r.FieldPos(0)
		d := im.csvRow(csvPath, line, header, row)
		if !im.id(csvPath, line, d.ID) {
			continue
		}
		named[d.ID+".txt"] = true
		text, err := os.ReadFile(filepath.Join(textDir, d.ID+".txt"))
		ok := d.Expected.Object != ""
		switch {
		case errors.Is(err, os.ErrNotExist):
			im.add(csvPath, line, "id", "no text %s for document %q: the folder of texts holds ID.txt per row", filepath.Join(textDir, d.ID+".txt"), d.ID)
			continue
		case err != nil:
			return nil, fmt.Errorf("import %s: %w", csvPath, err)
		}
		d.Text = string(bytes.TrimPrefix(text, utf8BOM))
		im.document(csvPath, line, d, "", ok)
	}
	entries, err := os.ReadDir(textDir)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", csvPath, err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".txt") && !named[e.Name()] {
			im.out.Warnings = append(im.out.Warnings, fmt.Sprintf("%s: no row of %s names it: not imported", filepath.Join(textDir, e.Name()), csvPath))
		}
	}
	return im.done(csvPath), nil
}

// csvErr is a CSV reader's error without the line it already gives.
func csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// csvHeader checks the header and sets the field names.
func (im *importer) csvHeader(file string, header []string) bool {
	ok := true
	if len(header) == 0 || header[0] != "id" {
		im.add(file, 1, "(header)", "the first column must be id, then one column per field")
		return false
	}
	cols := header[1:]
	seen := map[string]bool{}
	for _, c := range cols {
		if seen[c] {
			im.add(file, 1, c, "column given twice")
			ok = false
		}
		seen[c] = true
		if c == "" {
			im.add(file, 1, "(header)", "a column without a name")
			ok = false
		}
	}
	if im.exp == nil {
		im.out.Names = cols
		im.exp = &Expectations{Names: cols}
		return ok
	}
	im.out.Names = im.exp.Names
	for _, c := range cols {
		if c != "" && !slices.Contains(im.exp.Names, c) {
			im.add(file, 1, c, "not a declared field; the fields are %s", strings.Join(im.exp.Names, ", "))
			ok = false
		}
	}
	for _, n := range im.exp.Names {
		if !seen[n] {
			im.add(file, 1, n, "no column for this declared field; add it (empty cells are null)")
			ok = false
		}
	}
	return ok
}

// csvRow reads one row: its id and its expected object, from the cells
// (the header has every field, checked). Object stays "" on a problem.
func (im *importer) csvRow(file string, line int, header, row []string) Document {
	d := Document{ID: row[0]}
	values := map[string]any{}
	ok := true
	for i, c := range header[1:] {
		v, err := im.cell(c, row[i+1])
		if err == nil && im.exp.Check != nil {
			err = im.exp.Check(c, v)
		}
		if err != nil {
			im.add(file, line, c, "%v", err)
			ok = false
			continue
		}
		values[c] = v
	}
	if !ok {
		return d
	}
	obj, err := encodeObject(im.exp.Names, values)
	if err != nil {
		im.add(file, line, "(row)", "%v", err)
		return d
	}
	d.Expected = Expected{Object: obj}
	return d
}

// cell is the value of one cell of column name.
func (im *importer) cell(name, cell string) (any, error) {
	if cell == "" {
		return nil, nil
	}
	asJSON := func() (any, error) {
		dec := json.NewDecoder(strings.NewReader(cell))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil || dec.More() {
			return nil, fmt.Errorf("%q is not valid JSON (a list or object is written as JSON in its cell)", cell)
		}
		return v, nil
	}
	if im.exp.Check == nil {
		if strings.HasPrefix(cell, "[") || strings.HasPrefix(cell, "{") {
			return asJSON()
		}
		return cell, nil
	}
	strErr := im.exp.Check(name, cell)
	if strErr == nil {
		return cell, nil
	}
	v, err := asJSON()
	if err != nil && (strings.HasPrefix(cell, "[") || strings.HasPrefix(cell, "{")) {
		return nil, err
	}
	if err != nil {
		return cell, nil // the check of the text says why: its message is clearer
	}
	if _, isString := v.(string); isString {
		return cell, nil
	}
	if _, isNumber := v.(json.Number); isNumber && im.exp.Check(name, "0") == nil {
		// A field that takes numbers as text (a decimal) reads its cells
		// in its own locale: "12.5" under pt is refused, not guessed.
		return cell, nil
	}
	return v, nil
}
