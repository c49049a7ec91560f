package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
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
	Documents []Document // in file order; nil for a corpus held by reference (Open): use Len and Doc
	Manifest  Manifest   // recomputed from the records; enum and field definitions from manifest.json
	Warnings  []string   // problems that do not stop a run (a duplicate text, a class that disagrees with the length)
	// Fields are the declared field names its expected objects follow
	// (LoadFields, OpenFields); nil for the default fields.
	Fields []string

	docsPath string    // documents.jsonl of a corpus opened by reference (Open)
	index    *docIndex // its documents, by reference
	file     *os.File  // docsPath, open from Open to Close
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
// ExitCode is the status the command line exits with on a corpus that
// cannot be loaded: 2, a usage or configuration error.
func (e *LoadError) ExitCode() int { return 2 }

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
//
// Load reads a corpus as written: by the declared fields its manifest
// names (field_names; their keys checked, not their types), else by the
// default ones. It is for readers of a corpus (a report's excerpts); a run
// opens its corpus by its protocol's fields (Open, OpenFields), which
// refuses a corpus of other fields.
func Load(path string) (*Corpus, error) {
	return load(path, asWritten)
}

// asWritten, given as the expectations, reads a corpus by the fields its
// manifest names (Load, Check).
var asWritten = &Expectations{}

// LoadFields loads a corpus of the declared fields exp (see Expectations)
// as Load does: every expected object is checked by exp, and each
// document's Expected.Object is its canonical expected object. A corpus
// whose manifest names other fields, or none (the default three), than
// exp's is refused with the difference.
func LoadFields(path string, exp Expectations) (*Corpus, error) {
	return load(path, &exp)
}

func load(path string, exp *Expectations) (*Corpus, error) {
	var docs []Document
	s, err := read(path, exp, func(d *Document, _ int, _ int64, _ int, _ []byte) { docs = append(docs, *d) }, func() { docs = nil }, false)
	if err != nil {
		return nil, err
	}
	if len(s.problems) > 0 {
		return nil, &LoadError{Path: path, Problems: s.problems}
	}
	s.corpus.Documents = docs
	return s.corpus, nil
}

// utf8BOM is the UTF-8 byte-order mark some editors put at the start of a file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// scan is everything read learns about a corpus, good or bad. It keeps
// nothing per document: the hashes that find duplicates are sorted on disk
// past 2 MiB (readFS).
type scan struct {
	corpus         *Corpus
	problems       []Problem
	duplicateIDs   []string // "id (lines a, b)"
	duplicateTexts []string // "id-a and id-b (lines a, b)"
	lines          int      // records read, good or bad
	borrow         bool     // onDoc keeps no text: a line's may be borrowed (parseFast)
	exp            *Expectations
	fieldProblems  int // expectation problems found; past MaxFieldProblems they are counted, not listed

	// The declared manifest's record hashes, compared as records stream by:
	// matched ids are deleted, so what is left at the end has no record.
	declared    *Manifest
	recordProbs []Problem // kept apart: reported only when the records have no problems

	// Duplicate texts name the first document's id, which is not kept: the
	// message is completed by a second read of the lines named here.
	pendingTexts []pendingText
}

// pendingText is a duplicate text whose first document's id is read back.
type pendingText struct {
	warning, duplicate int // indexes in Corpus.Warnings and duplicateTexts
	firstLine, line    int
	id                 string
}

// DocFunc receives each valid document of a streamed corpus with its line
// number, the byte offset and length of its line in the file, and the
// record's bytes as parsed (the line less its "\n", "\r" and, on the first
// line, byte-order mark; valid only during the call).
type DocFunc func(d *Document, line int, offset int64, length int, record []byte)

// read loads path without stopping at the first problem.
func read(path string, exp *Expectations, onDoc DocFunc, reset func(), borrow bool) (*scan, error) {
	return readFS(osFS{}, path, exp, onDoc, reset, borrow)
}

// readFS streams documents.jsonl from any file system (the disk or the
// embedded default) and hands each valid document to onDoc (nil: none kept).
// Duplicates are found from sorted 8-byte hashes, so memory does not grow
// with the corpus; only when two hashes are equal is the file read again,
// after reset, to tell a duplicate from a collision exactly. With borrow,
// onDoc keeps no document's text (nor does a nil onDoc): a text decoded
// is lent to it, valid during the call, not allocated.
func readFS(fsys fs.FS, path string, exp *Expectations, onDoc DocFunc, reset func(), borrow bool) (*scan, error) {
	seed := maphash.MakeSeed()
	s, err := scanCorpus(fsys, path, exp, onDoc, seed, nil, borrow)
	var rep *hashesRepeat
	if !errors.As(err, &rep) {
		return s, err
	}
	if reset != nil {
		reset()
	}
	return scanCorpus(fsys, path, exp, onDoc, seed, rep, borrow)
}

// hashesRepeat is the first read's answer when two ids or two texts share a
// hash: which hashes, for the second read to look at.
type hashesRepeat struct{ ids, texts map[uint64]bool }

func (*hashesRepeat) Error() string { return "two ids or two texts share a hash" }

// scanCorpus reads the corpus once. With suspects nil it sorts the hashes
// of every id and text and returns a *hashesRepeat when some repeat; with
// suspects it names every duplicate among the ids and texts whose hashes
// suspects holds.
func scanCorpus(fsys fs.FS, path string, exp *Expectations, onDoc DocFunc, seed maphash.Seed, suspects *hashesRepeat, borrow bool) (*scan, error) {
	info, err := fs.Stat(fsys, path)
	if err != nil {
		return nil, fmt.Errorf("open corpus %s: %w", path, err)
	}
	docsPath, manPath := path, ""
	if info.IsDir() {
		docsPath = filepath.Join(path, DocumentsFile)
		manPath = filepath.Join(path, ManifestFile)
	}
	f, err := fsys.Open(docsPath)
	if errors.Is(err, fs.ErrNotExist) && info.IsDir() {
		return nil, fmt.Errorf("corpus directory %s has no %s: a corpus directory holds %s (one JSON record per line) and %s; give the directory that has them, or a .jsonl file (%w)",
			path, DocumentsFile, DocumentsFile, ManifestFile, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("read corpus documents %s: %w", docsPath, err)
	}
	defer f.Close()
	follow := exp == asWritten
	if follow {
		exp = nil
	}
	s := &scan{corpus: &Corpus{Path: path}, exp: exp, borrow: borrow || onDoc == nil}
	categories, fields := DefaultCategories, DefaultFields
	if manPath != "" {
		raw, err := fs.ReadFile(fsys, manPath)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			s.corpus.Warnings = append(s.corpus.Warnings, fmt.Sprintf("%s: no %s: manifest computed from the records with the default category enum", path, ManifestFile))
		case err != nil:
			return nil, fmt.Errorf("read corpus manifest %s: %w", manPath, err)
		default:
			s.declared = s.parseManifest(manPath, bytes.TrimPrefix(raw, utf8BOM))
			if follow && s.declared != nil && s.declared.FieldNames != nil && !isDefaultNames(s.declared.FieldNames) {
				exp = &Expectations{Names: s.declared.FieldNames} // no types to check them by
				s.exp = exp
			}
			if s.declared != nil {
				categories, fields = s.declared.Categories, s.declared.Fields
			}
			if s.declared != nil && !s.sameFields(manPath, s.declared.FieldNames) {
				return s, nil // its records follow other fields: every line would say so
			}
		}
	}
	var names []string
	if exp != nil {
		s.corpus.Fields = append([]string(nil), exp.Names...)
		names, categories = exp.Names, nil
		if s.declared == nil {
			fields = nil
		}
	}
	mb := newManifestBuilder(categories, fields, names, false)
	if err := s.records(docsPath, manPath, f, categories, mb, onDoc, seed, suspects); err != nil {
		var rep *hashesRepeat
		if errors.As(err, &rep) {
			return nil, err
		}
		return nil, fmt.Errorf("read corpus documents %s: %w", docsPath, err)
	}
	if len(s.pendingTexts) > 0 {
		if err := s.completeDuplicateTexts(fsys, docsPath); err != nil {
			return nil, fmt.Errorf("read corpus documents %s: %w", docsPath, err)
		}
	}
	s.corpus.Manifest = mb.done()
	if s.declared != nil {
		if len(s.problems) > 0 {
			s.corpus.Warnings = append(s.corpus.Warnings, manPath+": not compared with the records: fix the record problems first")
		} else {
			s.compare(manPath, docsPath, *s.declared)
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
	if len(m.Categories) == 0 && s.exp == nil && m.FieldNames == nil {
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
	if m.Fields == nil && m.FieldNames == nil {
		m.Fields = DefaultFields
	}
	return &m
}

// records streams every line of documents.jsonl.
func (s *scan) records(file, manPath string, r io.Reader, categories []string, mb *manifestBuilder, onDoc DocFunc, seed maphash.Seed, suspects *hashesRepeat) error {
	enum := make(map[string]bool, len(categories))
	for _, c := range categories {
		enum[c] = true
	}
	exact := suspects != nil
	ids := map[[16]byte]uint32{}   // exact, suspects only: id hash → line
	texts := map[[16]byte]uint32{} // exact, suspects only: text hash → line of its first document
	var idHashes, textHashes hashSorter
	defer idHashes.close()
	defer textHashes.close()
	var fl fastLine
	var hasher spanHasher
	lr := newLineReader(r)
	for n := 1; ; n++ {
		raw, offset, size, ok, err := lr.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if n == 1 {
			if rest, bom := bytes.CutPrefix(raw, utf8BOM); bom {
				// Windows editors save UTF-8 with a byte-order mark; JSON has none.
				raw = rest
				if size == len(utf8BOM) {
					break // the mark alone: no records
				}
				s.corpus.Warnings = append(s.corpus.Warnings, file+": starts with a UTF-8 byte-order mark (ignored)")
			}
		}
		s.lines = n
		record := bytes.TrimSuffix(raw, []byte("\r"))
		var d *Document
		var probs []LineProblem
		fast := s.exp == nil && (parseFast(record, enum, &fl, s.borrow) || s.borrow && parseFast(record, enum, &fl, false))
		if fast {
			d = &fl.doc
		} else {
			d, probs = parseLine(record, enum, s.exp)
		}
		for _, p := range probs {
			if s.exp != nil && strings.HasPrefix(p.Field, "expected") {
				if s.fieldProblems++; s.fieldProblems > MaxFieldProblems {
					continue
				}
			}
			s.add(file, n, p.Field, "%s", p.Message)
		}
		if d == nil {
			continue
		}
		if h := maphash.String(seed, d.ID); !exact {
			idHashes.add(h)
		} else if !suspects.ids[h] { // no other id has its hash: not a duplicate
		} else if first, dup := ids[hash16(d.ID)]; dup {
			s.add(file, n, "id", "duplicate id %q, first on line %d; every id must be unique", d.ID, first)
			s.duplicateIDs = append(s.duplicateIDs, fmt.Sprintf("%s (lines %d, %d)", d.ID, first, n))
			continue
		} else {
			ids[hash16(d.ID)] = uint32(n)
		}
		if len(probs) > 0 {
			continue
		}
		if h := maphash.String(seed, d.Text); !exact {
			textHashes.add(h)
		} else if !suspects.texts[h] { // no other text has its hash: not a duplicate
		} else if first, dup := texts[hash16(d.Text)]; dup {
			s.pendingTexts = append(s.pendingTexts, pendingText{warning: len(s.corpus.Warnings), duplicate: len(s.duplicateTexts), firstLine: int(first), line: n, id: d.ID})
			s.corpus.Warnings = append(s.corpus.Warnings, "")
			s.duplicateTexts = append(s.duplicateTexts, "")
		} else {
			texts[hash16(d.Text)] = uint32(n)
		}
		if tokens := ApproxTokens(d.Text); !inClass(d.LengthClass, tokens) {
			s.corpus.Warnings = append(s.corpus.Warnings, fmt.Sprintf("%s:%d: length_class: %q but the text is about %d tokens", file, n, d.LengthClass, tokens))
		}
		var h string
		if fast && fl.canonical {
			h = hasher.recordHash(&fl)
			mb.addHashed(d, h)
		} else {
			h = mb.add(d)
		}
		if s.declared != nil {
			want, ok := s.declared.RecordSHA256[d.ID]
			switch {
			case !ok:
				s.recordProbs = append(s.recordProbs, Problem{manPath, 0, "record_sha256." + d.ID, fmt.Sprintf("no hash for the record on %s:%d", file, n)})
			case want != h:
				s.recordProbs = append(s.recordProbs, Problem{manPath, 0, "record_sha256." + d.ID, fmt.Sprintf("does not match the record on %s:%d: its text or expectations changed after the manifest was written", file, n)})
			}
			delete(s.declared.RecordSHA256, d.ID)
		}
		if onDoc != nil {
			onDoc(d, n, offset, size, record)
		}
	}
	if !exact {
		repIDs, err := idHashes.repeated()
		if err != nil {
			return err
		}
		repTexts, err := textHashes.repeated()
		if err != nil {
			return err
		}
		if repIDs != nil || repTexts != nil {
			return &hashesRepeat{ids: repIDs, texts: repTexts}
		}
	}
	if s.lines == 0 {
		s.add(file, 0, "(file)", "no records: a corpus needs at least one document")
	}
	if more := s.fieldProblems - MaxFieldProblems; more > 0 {
		s.add(file, 0, "expected", "%d more expectation problems not listed (the first %d are)", more, MaxFieldProblems)
	}
	return nil
}

// hash16 is the first 16 bytes of the sha256 of s: a compact set key.
func hash16(s string) [16]byte {
	sum := sha256.Sum256([]byte(s))
	return [16]byte(sum[:16])
}

// completeDuplicateTexts reads back the ids on the lines where a repeated
// text first appeared and writes the duplicate-text messages.
func (s *scan) completeDuplicateTexts(fsys fs.FS, file string) error {
	want := map[int]string{}
	for _, p := range s.pendingTexts {
		want[p.firstLine] = ""
	}
	f, err := fsys.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	lr := newLineReader(f)
	for n := 1; ; n++ {
		raw, _, _, ok, err := lr.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if _, needed := want[n]; needed {
			var rec struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(bytes.TrimPrefix(raw, utf8BOM), &rec)
			want[n] = rec.ID
		}
	}
	for _, p := range s.pendingTexts {
		other := want[p.firstLine]
		s.corpus.Warnings[p.warning] = fmt.Sprintf("%s:%d: text: same text as %s (line %d)", file, p.line, other, p.firstLine)
		s.duplicateTexts[p.duplicate] = fmt.Sprintf("%s and %s (lines %d, %d)", other, p.id, p.firstLine, p.line)
	}
	return nil
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
	return parseLine(raw, enum, nil)
}

// parseLine is ParseLine, or, when exp is not nil, the parse of a line
// of a corpus of declared fields: id, text and length_class as the
// corpus-record schema says, the expected object by exp (Expectations),
// Expected.Object its canonical form.
func parseLine(raw []byte, enum map[string]bool, exp *Expectations) (*Document, []LineProblem) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, []LineProblem{{"(line)", "blank line; every line must be one JSON record"}}
	}
	var probs []LineProblem
	badUTF8 := !utf8.Valid(raw)
	if !json.Valid(raw) {
		return nil, []LineProblem{syntaxProblem(raw)}
	}
	v, duplicates := decodeRecord(raw)
	d := documentOf(v)       // best effort: the schema below says what is wrong
	own := map[string]bool{} // fields with a clearer message than the schema's
	for _, field := range duplicates {
		probs = append(probs, LineProblem{field, "key given twice in one object: JSON leaves which one counts undefined (an answer with a duplicate key is refused too); keep one"})
		own[field] = true
	}
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
	if exp != nil {
		return declaredLine(v, d, probs, own, exp)
	}
	if c, isString := fieldOf(fieldOf(v, "expected"), "category").(string); isString && enum != nil && !enum[c] {
		probs = append(probs, LineProblem{"expected.category", fmt.Sprintf("%q is not in the category enum %s", c, enumList(enum))})
		own["expected.category"] = true
	}
	if as, isString := fieldOf(fieldOf(v, "expected"), "amount").(string); isString && decimalRe.MatchString(as) && !own["expected.amount"] {
		if digits := integerDigits(as); digits > MaxAmountDigits {
			probs = append(probs, LineProblem{"expected.amount", fmt.Sprintf("%d digits before the point, more than %d: the scorer takes an answer that large for a wrong number, so no answer could match it", digits, MaxAmountDigits)})
			own["expected.amount"] = true
		}
	}
	if ds, isString := fieldOf(fieldOf(v, "expected"), "date").(string); isString {
		if _, err := time.Parse("2006-01-02", ds); err != nil && len(ds) == 10 {
			probs = append(probs, LineProblem{"expected.date", fmt.Sprintf("%q is not a real calendar day (YYYY-MM-DD)", ds)})
			own["expected.date"] = true
		}
	}
	for _, msg := range schemas.ValidateDecoded(schemas.CorpusRecord(), v) {
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
	return d, probs
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
