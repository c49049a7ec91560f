package corpus

import (
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
)

// compare reports every way the declared manifest disagrees with the one
// computed from the records.
func (s *scan) compare(manPath, docsPath string, declared Manifest) {
	got := s.corpus.Manifest
	if declared.Count != got.Count {
		s.add(manPath, 0, "count", "manifest says %d, %s has %d records", declared.Count, docsPath, got.Count)
	}
	for _, c := range []LengthClass{Short, Usual, Long} {
		if declared.Classes[c] != got.Classes[c] {
			s.add(manPath, 0, "classes."+string(c), "manifest says %d, the records have %d", declared.Classes[c], got.Classes[c])
		}
	}
	for _, k := range unionKeys(declared.CategoryCounts, got.CategoryCounts) {
		if s.exp != nil {
			break // declared fields: an enum is a field's, counted by no manifest
		}
		if declared.CategoryCounts[k] != got.CategoryCounts[k] {
			s.add(manPath, 0, "category_counts."+k, "manifest says %d, the records have %d", declared.CategoryCounts[k], got.CategoryCounts[k])
		}
	}
	for _, k := range unionKeys(declared.Langs, got.Langs) {
		if declared.Langs[k] != got.Langs[k] {
			s.add(manPath, 0, "langs."+k, "manifest says %d, the records have %d", declared.Langs[k], got.Langs[k])
		}
	}
	for _, k := range unionKeys(declared.Missing, got.Missing) {
		if declared.Missing[k] != got.Missing[k] {
			s.add(manPath, 0, "missing."+k, "manifest says %d, the records have %d", declared.Missing[k], got.Missing[k])
		}
	}
	// Record hashes were compared as the records streamed by; the ids left
	// in the declared map have no record.
	s.problems = append(s.problems, s.recordProbs...)
	recordsAgree := len(s.recordProbs) == 0
	var extra []string
	for id := range declared.RecordSHA256 {
		extra = append(extra, id)
	}
	sort.Strings(extra)
	for _, id := range extra {
		s.add(manPath, 0, "record_sha256."+id, "no record with this id in %s", docsPath)
		recordsAgree = false
	}
	// With every record hash in agreement, a different whole hash means the
	// order changed or the manifest's hash is wrong; otherwise it only
	// repeats the problems above.
	if recordsAgree && declared.SHA256 != got.SHA256 {
		s.add(manPath, 0, "sha256", "manifest says %s, the records hash to %s (records reordered?)", declared.SHA256, got.SHA256)
	}
}

func unionKeys(a, b map[string]int) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range []map[string]int{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// CheckReport is what `extractbench corpus check` prints: the counts of a
// corpus, its duplicates, and every problem and warning.
type CheckReport struct {
	Path           string
	Lines          int      // lines of documents.jsonl read
	Manifest       Manifest // computed from the records without problems
	Problems       []Problem
	Warnings       []string
	DuplicateIDs   []string // "id (lines a, b)"
	DuplicateTexts []string // "id-a and id-b (lines a, b)"
}

// Check reads the corpus at path like Load (by the fields its manifest
// names) and reports on it without stopping at problems. The error is only
// for a corpus that cannot be read at all; a corpus with problems returns
// a report whose OK is false.
func Check(path string) (*CheckReport, error) {
	return check(path, asWritten)
}

// CheckFields checks a corpus of the declared fields exp as Check does,
// every expected object by exp (LoadFields).
func CheckFields(path string, exp Expectations) (*CheckReport, error) {
	return check(path, &exp)
}

// CheckDefault checks the embedded default corpus as Check does.
func CheckDefault() (*CheckReport, error) { return checkFS(defaultFS, DefaultName, asWritten) }

// CheckDefaultFields checks the embedded default corpus under declared
// fields (see LoadDefaultFields).
func CheckDefaultFields(exp Expectations) (*CheckReport, error) {
	return checkFS(defaultFS, DefaultName, &exp)
}

func check(path string, exp *Expectations) (*CheckReport, error) { return checkFS(osFS{}, path, exp) }

func checkFS(fsys fs.FS, path string, exp *Expectations) (*CheckReport, error) {
	s, err := readFS(fsys, path, exp, nil, nil, true)
	if err != nil {
		return nil, err
	}
	return &CheckReport{
		Path:           path,
		Lines:          s.lines,
		Manifest:       s.corpus.Manifest,
		Problems:       s.problems,
		Warnings:       s.corpus.Warnings,
		DuplicateIDs:   s.duplicateIDs,
		DuplicateTexts: s.duplicateTexts,
	}, nil
}

// Summary is one line for a corpus without problems: its path, documents,
// fields, warnings and hash.
func (r *CheckReport) Summary() string {
	m := r.Manifest
	names := m.FieldNames
	if names == nil {
		names = []string{"date", "amount", "category"}
	}
	warn := ""
	if len(r.Warnings) > 0 {
		warn = fmt.Sprintf(", %d warning(s)", len(r.Warnings))
	}
	return fmt.Sprintf("corpus %s: ok: %d documents, every expectation follows the fields %s%s; sha256 %s", r.Path, m.Count, strings.Join(names, ", "), warn, m.SHA256)
}

// OK reports whether the corpus has no problems (warnings allowed).
func (r *CheckReport) OK() bool { return len(r.Problems) == 0 }

// Err returns the report's problems as a *LoadError, or nil when OK.
func (r *CheckReport) Err() error {
	if r.OK() {
		return nil
	}
	return &LoadError{Path: r.Path, Problems: r.Problems}
}

// WriteText writes the report for a terminal: counts per class and
// category, missing fields, duplicates, warnings and every problem with its
// file and line.
func (r *CheckReport) WriteText(w io.Writer) error {
	m := r.Manifest
	p := &printer{w: w}
	p.printf("corpus %s\n", r.Path)
	p.printf("documents  %d valid of %d lines\n", m.Count, r.Lines)
	p.printf("sha256     %s\n", m.SHA256)
	p.printf("classes    short %d, usual %d, long %d\n", m.Classes[Short], m.Classes[Usual], m.Classes[Long])
	if m.FieldNames != nil {
		p.printf("fields     %s\n", strings.Join(m.FieldNames, ", "))
		missing := make([]string, len(m.FieldNames))
		for i, n := range m.FieldNames {
			missing[i] = fmt.Sprintf("%s %d", n, m.Missing[n])
		}
		p.printf("missing    %s\n", strings.Join(missing, ", "))
	} else {
		p.printf("categories\n")
		for _, c := range m.Categories {
			p.printf("  %-24s %d\n", c, m.CategoryCounts[c])
		}
		for _, c := range sortedKeys(m.CategoryCounts) {
			if !contains(m.Categories, c) {
				p.printf("  %-24s %d (not in the enum)\n", c, m.CategoryCounts[c])
			}
		}
		p.printf("missing    date %d, amount %d, category %d\n", m.Missing["date"], m.Missing["amount"], m.Missing["category"])
	}
	p.printf("duplicate ids    %d\n", len(r.DuplicateIDs))
	for _, d := range r.DuplicateIDs {
		p.printf("  %s\n", d)
	}
	p.printf("duplicate texts  %d\n", len(r.DuplicateTexts))
	for _, d := range r.DuplicateTexts {
		p.printf("  %s\n", d)
	}
	if len(r.Warnings) > 0 {
		p.printf("warnings (%d)\n", len(r.Warnings))
		for _, wn := range r.Warnings {
			p.printf("  %s\n", wn)
		}
	}
	if r.OK() {
		p.printf("ok: no problems\n")
	} else {
		p.printf("problems (%d)\n", len(r.Problems))
		for _, pr := range r.Problems {
			p.printf("%s\n", pr)
		}
	}
	return p.err
}

// printer keeps the first write error so WriteText can print unconditionally.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
