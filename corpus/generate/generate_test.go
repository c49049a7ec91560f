package generate

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/corpus"
)

var update = flag.Bool("update", false, "rewrite corpus/default from the generator")

// defaultDir is the committed default corpus, relative to this package.
const defaultDir = "../default"

// TestDefaultCorpus proves the committed corpus/default is exactly what the
// generator writes for DefaultSeed; run with -update after changing the generator.
func TestDefaultCorpus(t *testing.T) {
	if *update {
		if err := WriteDir(defaultDir, DefaultSeed); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	if err := WriteDir(tmp, DefaultSeed); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{corpus.DocumentsFile, corpus.ManifestFile} {
		got, err := os.ReadFile(filepath.Join(defaultDir, name))
		if err != nil {
			t.Fatalf("read committed %s (run go test ./corpus/generate -update): %v", name, err)
		}
		want, err := os.ReadFile(filepath.Join(tmp, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("committed %s differs from the generator's output; run go test ./corpus/generate -update", name)
		}
	}
	c, err := corpus.Load(defaultDir)
	if err != nil {
		t.Fatalf("load committed default corpus: %v", err)
	}
	if len(c.Warnings) > 0 {
		t.Errorf("default corpus warnings: %q", c.Warnings)
	}
}

func TestGenerate_Deterministic(t *testing.T) {
	a, err := corpus.EncodeDocuments(Generate(7))
	if err != nil {
		t.Fatal(err)
	}
	b, err := corpus.EncodeDocuments(Generate(7))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("same seed gave different bytes")
	}
	c, err := corpus.EncodeDocuments(Generate(8))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, c) {
		t.Fatal("seeds 7 and 8 gave the same corpus")
	}
}

// TestGenerate_Shape checks the properties the protocol relies on, for
// several seeds: class sizes and token ranges, every category in every
// class, about 10% missing fields, credit notes, unique ids and texts.
func TestGenerate_Shape(t *testing.T) {
	for _, seed := range []int64{DefaultSeed, 2, 3} {
		docs := Generate(seed)
		m := corpus.ComputeManifest(docs, corpus.DefaultCategories, nil)
		if got, want := m.Count, ShortCount+UsualCount+LongCount; got != want {
			t.Errorf("seed %d: count = %d, want %d", seed, got, want)
		}
		for class, want := range map[corpus.LengthClass]int{corpus.Short: ShortCount, corpus.Usual: UsualCount, corpus.Long: LongCount} {
			if got := m.Classes[class]; got != want {
				t.Errorf("seed %d: %s = %d, want %d", seed, class, got, want)
			}
		}
		for _, c := range corpus.DefaultCategories {
			if m.CategoryCounts[c] == 0 {
				t.Errorf("seed %d: category %s absent", seed, c)
			}
		}
		if got, want := m.Missing["date"], NoDateCount+NoBothCount; got != want {
			t.Errorf("seed %d: missing date = %d, want %d", seed, got, want)
		}
		if got, want := m.Missing["amount"], NoAmountCount+NoBothCount; got != want {
			t.Errorf("seed %d: missing amount = %d, want %d", seed, got, want)
		}
		withNull, negative := 0, 0
		ids, texts := map[string]bool{}, map[string]bool{}
		for _, d := range docs {
			tokens := corpus.ApproxTokens(d.Text)
			if got, ok := corpus.ClassOf(tokens); !ok || got != d.LengthClass {
				t.Errorf("seed %d: %s is %s but has %d tokens", seed, d.ID, d.LengthClass, tokens)
			}
			if d.Expected.Date == nil || d.Expected.Amount == nil {
				withNull++
			}
			if d.Expected.Amount != nil && strings.HasPrefix(*d.Expected.Amount, "-") {
				negative++
			}
			if ids[d.ID] || texts[d.Text] {
				t.Errorf("seed %d: %s: duplicate id or text", seed, d.ID)
			}
			ids[d.ID], texts[d.Text] = true, true
		}
		if frac := float64(withNull) / float64(len(docs)); frac < 0.08 || frac > 0.12 {
			t.Errorf("seed %d: %.1f%% of documents lack a field, want about 10%%", seed, 100*frac)
		}
		if negative != CreditCount {
			t.Errorf("seed %d: %d negative totals, want %d", seed, negative, CreditCount)
		}
	}
}

func BenchmarkGenerate(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Generate(DefaultSeed)
	}
}
