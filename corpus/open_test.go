package corpus

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// openByReference opens path as Open opens a corpus too large to hold.
func openByReference(path string) (*Corpus, error) { return open(path, nil, 0) }

// TestOpen_HeldOrByReference: Open holds a documents.jsonl of at most
// MaxHeldBytes in memory, decoded as Load decodes it, so that a request
// reads nothing; a larger one by reference, its file open once for every
// request until Close (it was always by reference, the file reopened and
// the line decoded again for every request).
func TestOpen_HeldOrByReference(t *testing.T) {
	defer func(n int64) { MaxHeldBytes = n }(MaxHeldBytes)
	docs := sampleDocs()
	dir := mustWriteDir(t, docs)
	info, err := os.Stat(filepath.Join(dir, DocumentsFile))
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}

	MaxHeldBytes = info.Size()
	held, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if held.file != nil || held.index != nil || !reflect.DeepEqual(held.Documents, loaded.Documents) {
		t.Fatalf("a corpus of %d bytes under a limit of %d: not held as Load holds it", info.Size(), MaxHeldBytes)
	}
	for i := range held.Len() {
		if full, err := held.Resolve(held.Doc(i)); err != nil || !reflect.DeepEqual(full, loaded.Documents[i]) {
			t.Errorf("held document %d resolved as %+v (%v)", i, full, err)
		}
	}
	if err := held.Close(); err != nil {
		t.Errorf("Close of a held corpus: %v", err)
	}

	MaxHeldBytes = info.Size() - 1
	ref, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ref.file == nil || ref.Documents != nil || ref.Len() != len(docs) {
		t.Fatalf("a corpus of %d bytes over a limit of %d: not by reference", info.Size(), MaxHeldBytes)
	}
	if ref.Manifest.SHA256 != loaded.Manifest.SHA256 {
		t.Errorf("sha256 by reference %s, held %s", ref.Manifest.SHA256, loaded.Manifest.SHA256)
	}
	for i := range ref.Len() {
		if full, err := ref.Resolve(ref.Doc(i)); err != nil || RecordHash(full) != RecordHash(loaded.Documents[i]) {
			t.Errorf("document %d by reference resolved as %+v (%v)", i, full, err)
		}
	}
	if err := ref.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Resolve(ref.Doc(0)); err == nil {
		t.Error("Resolve after Close read a document")
	}
	var none *Corpus
	if err := none.Close(); err != nil {
		t.Errorf("Close of a nil corpus: %v", err)
	}
}
