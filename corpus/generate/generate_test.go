package generate

import (
	"bytes"
	"flag"
	"fmt"
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

// TestGenerateN_Sizes: a corpus of n documents keeps the default corpus's
// proportions (a third short, half usual, a sixth long, every category in
// the usual class, about 10% lacking a field), stable ids doc-0001 ...
// doc-N, documents in their class's token range, and the same bytes for
// the same seed and n; it passes corpus check.
func TestGenerateN_Sizes(t *testing.T) {
	for _, n := range []int{1, 7, 60, 2000} {
		docs, err := GenerateN(DefaultSeed, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(docs) != n {
			t.Fatalf("n %d: %d documents", n, len(docs))
		}
		m := corpus.ComputeManifest(docs, corpus.DefaultCategories, nil)
		short, long := (n*ShortCount+150)/300, (n*LongCount+150)/300
		for class, want := range map[corpus.LengthClass]int{corpus.Short: short, corpus.Usual: n - short - long, corpus.Long: long} {
			if got := m.Classes[class]; got != want {
				t.Errorf("n %d: %s = %d, want %d", n, class, got, want)
			}
		}
		for i, d := range docs {
			if want := fmt.Sprintf("doc-%04d", i+1); d.ID != want {
				t.Errorf("n %d: document %d has id %s, want %s", n, i, d.ID, want)
				break
			}
			if got, ok := corpus.ClassOf(corpus.ApproxTokens(d.Text)); !ok || got != d.LengthClass {
				t.Errorf("n %d: %s is %s but has %d tokens", n, d.ID, d.LengthClass, corpus.ApproxTokens(d.Text))
			}
		}
		if n >= 60 {
			for _, c := range corpus.DefaultCategories {
				if m.CategoryCounts[c] < n/20 {
					t.Errorf("n %d: category %s has %d documents, want about %d", n, c, m.CategoryCounts[c], n/10)
				}
			}
			lacking := 0
			for _, d := range docs {
				if d.Expected.Date == nil || d.Expected.Amount == nil {
					lacking++
				}
			}
			if frac := float64(lacking) / float64(n); frac < 0.08 || frac > 0.12 {
				t.Errorf("n %d: %.1f%% of documents lack a field, want about 10%%", n, 100*frac)
			}
		}
		dir := t.TempDir()
		if err := WriteDirN(dir, DefaultSeed, n); err != nil {
			t.Fatal(err)
		}
		again := t.TempDir()
		if err := WriteDirN(again, DefaultSeed, n); err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(filepath.Join(dir, corpus.DocumentsFile))
		b, _ := os.ReadFile(filepath.Join(again, corpus.DocumentsFile))
		if !bytes.Equal(a, b) {
			t.Errorf("n %d: the same seed and n gave different bytes", n)
		}
		rep, err := corpus.Check(dir)
		if err != nil || !rep.OK() {
			t.Errorf("n %d: corpus check: %v, problems %v", n, err, rep.Problems)
		}
	}
	for _, n := range []int{0, -1, MaxCount + 1} {
		if _, err := GenerateN(DefaultSeed, n); err == nil {
			t.Errorf("GenerateN(%d) succeeded, want an error", n)
		}
	}
}
