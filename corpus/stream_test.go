package corpus

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCheck_Streamed checks the streaming reader on what a whole-file
// reader never met: a line longer than the read buffer, a duplicate text far
// from its first occurrence (its id is read back), a final line without a
// newline, and CRLF line ends.
func TestCheck_Streamed(t *testing.T) {
	docs := sampleDocs()
	long := docs[0]
	long.ID, long.LengthClass = "doc-long", Long
	long.Text = strings.Repeat("Line item: consulting hours, 1 h. ", 100000) // ~3.4 MB, over the 1 MiB buffer
	docs = append(docs, long)
	for i := 0; i < 500; i++ {
		d := docs[1]
		d.ID, d.Text = fmt.Sprintf("fill-%04d", i), fmt.Sprintf("%s\nRef %d", d.Text, i)
		docs = append(docs, d)
	}
	dup := docs[0]
	dup.ID = "doc-dup"
	docs = append(docs, dup)
	data, err := EncodeDocuments(docs)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.ReplaceAll(string(data), "}\n", "}\r\n"))
	data = data[:len(data)-2] // no newline after the last record
	file := filepath.Join(t.TempDir(), "c.jsonl")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Check(file)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Fatalf("problems: %v", r.Err())
	}
	if got, want := r.Lines, len(docs); got != want {
		t.Errorf("lines = %d, want %d", got, want)
	}
	if got, want := r.Manifest.SHA256, ComputeManifest(docs, DefaultCategories, nil).SHA256; got != want {
		t.Errorf("sha256 = %s, want %s (the in-memory manifest)", got, want)
	}
	wantDup := fmt.Sprintf("doc-0001 and doc-dup (lines 1, %d)", len(docs))
	if len(r.DuplicateTexts) != 1 || r.DuplicateTexts[0] != wantDup {
		t.Errorf("duplicate texts = %q, want [%q]", r.DuplicateTexts, wantDup)
	}
	found := false
	for _, w := range r.Warnings {
		if strings.HasSuffix(w, fmt.Sprintf(":%d: text: same text as doc-0001 (line 1)", len(docs))) {
			found = true
		}
	}
	if !found {
		t.Errorf("warnings = %q, want one naming the duplicate text and doc-0001", r.Warnings)
	}
	c, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Documents[3].Text; got != long.Text {
		t.Errorf("long document read back with %d bytes, want %d", len(got), len(long.Text))
	}
}

// TestOpen_ByReference checks that Open keeps no text and that Resolve reads
// each document back as Load has it, BOM and CRLF included.
func TestOpen_ByReference(t *testing.T) {
	docs := sampleDocs()
	data, err := EncodeDocuments(docs)
	if err != nil {
		t.Fatal(err)
	}
	data = append(append([]byte(nil), utf8BOM...), []byte(strings.ReplaceAll(string(data), "}\n", "}\r\n"))...)
	file := filepath.Join(t.TempDir(), "c.jsonl")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := openByReference(file)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := opened.Manifest.SHA256, loaded.Manifest.SHA256; got != want {
		t.Errorf("sha256 = %s, want %s", got, want)
	}
	if opened.Len() != len(docs) || opened.Documents != nil {
		t.Fatalf("documents = %d (%d held whole), want %d by reference", opened.Len(), len(opened.Documents), len(docs))
	}
	for i := range opened.Len() {
		d := opened.Doc(i)
		if d.ID != loaded.Documents[i].ID || d.Text != "" || d.Expected.Amount != nil {
			t.Errorf("document %s holds its text or expectations in memory", d.ID)
		}
		full, err := opened.Resolve(d)
		if err != nil {
			t.Fatal(err)
		}
		if RecordHash(full) != RecordHash(loaded.Documents[i]) || full.LengthClass != loaded.Documents[i].LengthClass {
			t.Errorf("document %d resolved as %+v, want %+v", i, full, loaded.Documents[i])
		}
	}
	// A file changed under the run is an error, not another document.
	if err := os.WriteFile(file, []byte(strings.Repeat("x", len(data))), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := opened.Resolve(opened.Doc(1)); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Errorf("Resolve after the file changed: err = %v, want one saying the file changed", err)
	}
}

// TestResolve_ChangedOrUnreadable checks that a document read back must be
// the record indexed: a same-length edit of its text (the line still parses
// and holds its id) and a corpus closed are *ReadErrors naming the
// document and where it was, never a document. A file removed is still
// read: the corpus holds it open (it was reopened for every document, and
// a file removed failed the run).
func TestResolve_ChangedOrUnreadable(t *testing.T) {
	data, err := EncodeDocuments(sampleDocs())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "c.jsonl")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	opened, err := openByReference(file)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(data), "Total due: USD 1,234.56", "Total due: USD 9,234.56", 1)
	if edited == string(data) {
		t.Fatal("the sample's first text has no total to edit")
	}
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(file)
	for _, tc := range []struct {
		name string
		doc  int
		want error
		prep func()
	}{
		{"edited in place", 0, ErrChanged, func() {}},
		{"unchanged line", 1, nil, func() {}},
		{"removed, still open", 1, nil, func() { os.Remove(file) }},
		{"closed", 2, os.ErrClosed, func() { opened.Close() }},
	} {
		tc.prep()
		d := opened.Doc(tc.doc)
		full, err := opened.Resolve(d)
		if tc.want == nil {
			if err != nil || full.Text == "" {
				t.Errorf("%s: %v (text %q)", tc.name, err, full.Text)
			}
			continue
		}
		var re *ReadError
		if !errors.As(err, &re) || !errors.Is(err, tc.want) {
			t.Fatalf("%s: err = %v, want a *ReadError wrapping %v", tc.name, err, tc.want)
		}
		if at := fmt.Sprintf("%s:%d", abs, tc.doc+1); re.ID != d.ID || !strings.Contains(err.Error(), at) || !strings.Contains(err.Error(), d.ID) {
			t.Errorf("%s: %q does not name document %s at %s", tc.name, err, d.ID, at)
		}
		if full.Text != "" {
			t.Errorf("%s: a text came with the error: %q", tc.name, full.Text)
		}
	}
}

// TestOpen_Dir checks a corpus directory opened by reference: the manifest
// is compared and texts are read back from its documents.jsonl.
func TestOpen_Dir(t *testing.T) {
	docs := sampleDocs()
	dir := mustWriteDir(t, docs)
	c, err := openByReference(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != len(docs) {
		t.Fatalf("documents = %d, want %d", c.Len(), len(docs))
	}
	for i := range c.Len() {
		full, err := c.Resolve(c.Doc(i))
		if err != nil {
			t.Fatal(err)
		}
		if full.Text != docs[i].Text || RecordHash(full) != RecordHash(docs[i]) {
			t.Errorf("document %d read back as %q, want %q", i, full.Text, docs[i].Text)
		}
	}
	if c.TextSize(c.Doc(0)) < len(docs[0].Text) {
		t.Errorf("TextSize %d below the text's %d bytes", c.TextSize(c.Doc(0)), len(docs[0].Text))
	}
}

// TestScan_HashesThenExact checks the two reads that look for duplicates:
// on a corpus without any, the first read's sorted hashes give the same
// result as the exact sets; with a duplicate id and a duplicate text the
// first read names their hashes, the second the lines (as one exact read
// does), and Load and Open keep each document once, not once per read.
func TestScan_HashesThenExact(t *testing.T) {
	defer func(n int) { hashRun = n }(hashRun)
	hashRun = 2 // several runs in a temporary file, merged
	docs := sampleDocs()
	file := filepath.Join(t.TempDir(), "c.jsonl")
	write := func(docs []Document) {
		data, err := EncodeDocuments(docs)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	seed := maphash.MakeSeed()
	all := func(docs []Document) *hashesRepeat { // every hash a suspect: the exact read of every line
		rep := &hashesRepeat{ids: map[uint64]bool{}, texts: map[uint64]bool{}}
		for _, d := range docs {
			rep.ids[maphash.String(seed, d.ID)], rep.texts[maphash.String(seed, d.Text)] = true, true
		}
		return rep
	}
	write(docs)
	fast, err := scanCorpus(osFS{}, file, nil, nil, seed, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := scanCorpus(osFS{}, file, nil, nil, seed, all(docs), true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fast, exact) {
		t.Errorf("sorted hashes and exact sets disagree:\n%+v\n%+v", fast, exact)
	}

	dupText, dupID := docs[0], docs[2]
	dupText.ID = "doc-dup"
	dupID.Text += " (again)"
	docs = append(docs, dupText, dupID)
	write(docs)
	_, err = scanCorpus(osFS{}, file, nil, nil, seed, nil, true)
	var rep *hashesRepeat
	if !errors.As(err, &rep) || len(rep.ids) != 1 || len(rep.texts) != 1 {
		t.Fatalf("a repeated id and text read with sorted hashes: %v (%+v), want one id and one text named", err, rep)
	}
	second, err := scanCorpus(osFS{}, file, nil, nil, seed, rep, true)
	if err != nil {
		t.Fatal(err)
	}
	exact, err = scanCorpus(osFS{}, file, nil, nil, seed, all(docs), true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(second, exact) || len(second.duplicateIDs) != 1 || len(second.pendingTexts) != 1 {
		t.Errorf("second read of the suspects:\n%+v\nexact read of every line:\n%+v", second, exact)
	}

	docs = docs[:len(docs)-1] // a repeated text only: a warning, the corpus loads
	write(docs)
	for name, load := range map[string]func(string) (*Corpus, error){"Load": Load, "Open": Open} {
		c, err := load(file)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Len() != len(docs) || len(c.Warnings) != 1 { // same text as doc-0001
			t.Errorf("%s: %d documents, warnings %q; want %d and the repeated text named", name, c.Len(), c.Warnings, len(docs))
		}
	}
}

// TestHashSorter checks the external sort that finds repeated hashes, in
// memory and across runs in a temporary file (removed after), against a map.
func TestHashSorter(t *testing.T) {
	defer func(n int) { hashRun = n }(hashRun)
	rng := rand.New(rand.NewPCG(7, 9))
	for _, run := range []int{1 << 18, 7, 1} {
		hashRun = run
		for _, n := range []int{0, 1, 2, 50, 1000} {
			var h hashSorter
			seen, want := map[uint64]int{}, map[uint64]bool{}
			for range n {
				v := rng.Uint64N(uint64(n)*3 + 1) // some repeat, some three times
				h.add(v)
				if seen[v]++; seen[v] > 1 {
					want[v] = true
				}
			}
			file := h.file
			got, err := h.repeated()
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 && got != nil || len(want) > 0 && !reflect.DeepEqual(got, want) {
				t.Errorf("run %d, %d hashes: repeated %v, want %v", run, n, got, want)
			}
			if file != nil {
				if _, err := os.Stat(file.Name()); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("temporary file %s left behind: %v", file.Name(), err)
				}
			}
		}
	}
}

// TestCorpus_Keep: a corpus loaded whole and one held by reference keep the
// same documents, in file order, and the kept ones still resolve.
func TestCorpus_Keep(t *testing.T) {
	docs := sampleDocs()
	data, err := EncodeDocuments(docs)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "c.jsonl")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	odd := func(id string) bool { return id[len(id)-1]%2 == 1 }
	var want []string
	for _, d := range docs {
		if odd(d.ID) {
			want = append(want, d.ID)
		}
	}
	if len(want) == 0 || len(want) == len(docs) {
		t.Fatalf("the sample's ids %v do not split", want)
	}
	loaded, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := openByReference(file)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*Corpus{"loaded": loaded, "opened": opened} {
		if n := c.Keep(odd); n != len(want) || c.Len() != n {
			t.Fatalf("%s: Keep = %d, Len %d; want %d", name, n, c.Len(), len(want))
		}
		for i, id := range want {
			d := c.Doc(i)
			full, err := c.Resolve(d)
			if d.ID != id || err != nil || full.Text == "" {
				t.Errorf("%s: document %d = %q (text %d bytes, %v), want %q", name, i, d.ID, len(full.Text), err, id)
			}
		}
	}
}
