package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/pipeline/protocol"
)

// poExample is the purchase-order example, relative to this package.
const poExample = "../../examples/purchase-orders"

// TestCorpusGenerate_Example: corpus generate -example purchase-orders
// writes exactly the committed example corpus; an unknown example, or -n
// with one, is a usage error.
func TestCorpusGenerate_Example(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "po")
	code, stdout, stderr := runCLI(t, "corpus", "generate", "-example", "purchase-orders", "-out", dir)
	if code != exitOK || !strings.Contains(stdout, "example purchase-orders, seed 1") {
		t.Fatalf("generate -example purchase-orders: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	for _, name := range []string{corpus.DocumentsFile, corpus.ManifestFile} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(poExample, "corpus", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the committed examples/purchase-orders/corpus/%s", name, name)
		}
	}
	for _, args := range [][]string{
		{"corpus", "generate", "-example", "purchase-order", "-out", dir},
		{"corpus", "generate", "-example", "purchase-orders", "-n", "10", "-out", dir},
	} {
		if code, _, stderr := runCLI(t, args...); code != exitUsage || !strings.Contains(stderr, "purchase-orders") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error naming purchase-orders", args, code, stderr)
		}
	}
}

// TestExample_PurchaseOrders: the example protocol loads, declares the
// fields its corpus is keyed by, in order, and every expectation of the
// corpus is valid for its field (Field.CheckExpectation).
func TestExample_PurchaseOrders(t *testing.T) {
	p, err := protocol.Load(filepath.Join(poExample, "protocol.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range p.Fields {
		names = append(names, f.Name)
	}
	check := func(name string, v any) error {
		for _, f := range p.Fields {
			if f.Name == name {
				return f.CheckExpectation(v)
			}
		}
		return nil
	}
	c, err := corpus.LoadFields(p.ResolvePath(p.Corpus), corpus.Expectations{Names: names, Check: check})
	if err != nil {
		t.Fatalf("load the example corpus for its protocol's fields: %v", err)
	}
	if c.Len() != 300 {
		t.Errorf("%d documents, want 300", c.Len())
	}
	if len(p.Variants) != 2 || !p.GuidedDecoding {
		t.Errorf("variants %d, guided decoding %t: want bf16 and int4, the schema sent to the engine", len(p.Variants), p.GuidedDecoding)
	}
}
