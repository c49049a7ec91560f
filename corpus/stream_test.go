package corpus

import (
	"fmt"
	"os"
	"path/filepath"
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
