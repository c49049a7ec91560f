package purchaseorders

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/extractbench/extractbench/corpus"
)

var update = flag.Bool("update", false, "rewrite examples/purchase-orders/corpus from the generator")

// exampleDir is the committed example corpus, relative to this package.
const exampleDir = "../../../examples/purchase-orders/corpus"

// TestExampleCorpus proves the committed examples/purchase-orders/corpus
// is exactly what the generator writes for DefaultSeed, and that it loads
// for its declared fields without a warning; run with -update after
// changing the generator.
func TestExampleCorpus(t *testing.T) {
	if *update {
		if err := WriteDir(exampleDir, DefaultSeed); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	if err := WriteDir(tmp, DefaultSeed); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{corpus.DocumentsFile, corpus.ManifestFile} {
		got, err := os.ReadFile(filepath.Join(exampleDir, name))
		if err != nil {
			t.Fatalf("read committed %s (run go test ./corpus/generate/purchaseorders -update): %v", name, err)
		}
		want, err := os.ReadFile(filepath.Join(tmp, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("committed %s differs from the generator's output; run go test ./corpus/generate/purchaseorders -update", name)
		}
	}
	c, err := corpus.LoadFields(exampleDir, corpus.Expectations{Names: FieldNames})
	if err != nil {
		t.Fatalf("load committed example corpus: %v", err)
	}
	if c.Len() != Count || len(c.Warnings) > 0 {
		t.Errorf("example corpus: %d documents, warnings %q; want %d, none", c.Len(), c.Warnings, Count)
	}
}
