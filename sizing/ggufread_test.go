package sizing

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/sizing/gguftest"
)

// TestReadGGUF_BlockBytes reads a hand-built GGUF whose tensors' bytes are
// written out from ggml-common.h's block structs, not computed by the code
// under test: a wrong block size or block length for any type (Q4_K's 144
// bytes a 256-block against Q4_0's 18 a 32-block, Q6_K's 210, Q8_0's 34)
// changes a tensor's bytes, and the data would no longer end where the
// file does.
func TestReadGGUF_BlockBytes(t *testing.T) {
	// Rows of 512 (two 256-blocks, sixteen 32-blocks), 3 rows each.
	tensors := []gguftest.Tensor{
		{Name: "f32", Type: "F32", Dims: []uint64{512, 3}, Bytes: 512 * 4 * 3},
		{Name: "f16", Type: "F16", Dims: []uint64{512, 3}, Bytes: 512 * 2 * 3},
		{Name: "bf16", Type: "BF16", Dims: []uint64{512, 3}, Bytes: 512 * 2 * 3},
		{Name: "q8_0", Type: "Q8_0", Dims: []uint64{512, 3}, Bytes: 16 * (2 + 32) * 3},
		{Name: "q5_0", Type: "Q5_0", Dims: []uint64{512, 3}, Bytes: 16 * (2 + 4 + 16) * 3},
		{Name: "q4_0", Type: "Q4_0", Dims: []uint64{512, 3}, Bytes: 16 * (2 + 16) * 3},
		{Name: "q6_k", Type: "Q6_K", Dims: []uint64{512, 3}, Bytes: 2 * (128 + 64 + 16 + 2) * 3},
		{Name: "q4_k", Type: "Q4_K", Dims: []uint64{512, 3}, Bytes: 2 * (2 + 2 + 12 + 128) * 3},
		{Name: "q5_k", Type: "Q5_K", Dims: []uint64{512, 3}, Bytes: 2 * (2 + 2 + 12 + 32 + 128) * 3},
		{Name: "norm", Type: "F32", Dims: []uint64{512}, Bytes: 512 * 4},
		{Name: "3d", Type: "Q8_0", Dims: []uint64{64, 2, 5}, Bytes: 2 * 34 * 10},
	}
	path := filepath.Join(t.TempDir(), "blocks.gguf")
	kvs := gguftest.Llama("blocks", 512, 1, 8, 2, 64, 1024, 3, 8192, "q4_k_m")
	if err := gguftest.Write(path, kvs, tensors); err != nil {
		t.Fatal(err)
	}
	g, err := OpenGGUF(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Tensors) != len(tensors) {
		t.Fatalf("%d tensors read, %d written", len(g.Tensors), len(tensors))
	}
	var total int64
	for i, want := range tensors {
		got := g.Tensors[i]
		if got.Name != want.Name || got.Type.Name != want.Type || got.Bytes() != want.Bytes {
			t.Errorf("tensor %d: read %s %s %d bytes, wrote %s %s %d bytes", i, got.Name, got.Type.Name, got.Bytes(), want.Name, want.Type, want.Bytes)
		}
		total += want.Bytes
	}
	if g.TensorBytes != total {
		t.Errorf("tensor bytes %d, want %d", g.TensorBytes, total)
	}
	if g.Scheme != "q4_k_m" || g.Model.HiddenSize != 512 || g.Model.KVHeads != 2 || g.Model.VocabSize != 3 || !g.Model.TieWordEmbeddings {
		t.Errorf("read scheme %q, model %+v", g.Scheme, g.Model)
	}

	// The same file cut inside its last tensor is an error that says so.
	if err := os.Truncate(path, g.FileBytes-1); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenGGUF(path); err == nil || !strings.Contains(err.Error(), "past the end of the file") {
		t.Errorf("a file one byte short: %v, want past the end", err)
	}
}

// TestReadGGUF_Ladder reads a copy of every GGUF of the ladder (the header
// of each file llama-quantize made, rebuilt from testdata/gguf/*.tsv: the
// types, shapes and bytes gguf-py read from the real files) and checks
// that each tensor reads as gguf-py's bytes and that the calculator's
// tensors for the shape read from the metadata are the file's: no
// difference, the same total.
func TestReadGGUF_Ladder(t *testing.T) {
	files, err := filepath.Glob("testdata/gguf/h*-*.tsv")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/gguf/*.tsv (%v)", err)
	}
	for _, file := range files {
		base := strings.TrimSuffix(filepath.Base(file), ".tsv")
		shape, scheme, _ := strings.Cut(base, "-")
		raw, err := os.ReadFile(filepath.Join("testdata", "gguf", shape+"-config.json"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseHFConfig(raw, "extract-llama-15m")
		if err != nil {
			t.Fatal(err)
		}
		tensors, err := gguftest.ReadTable(file)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), base+".gguf")
		kvs := gguftest.Llama(m.Name, m.HiddenSize, m.Layers, m.Heads, m.KVHeads, m.HeadDim, m.IntermediateSize, m.VocabSize, m.MaxContext, scheme)
		if err := gguftest.Write(path, kvs, tensors); err != nil {
			t.Fatal(err)
		}
		g, err := OpenGGUF(path)
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		var want int64
		for i, w := range tensors {
			want += w.Bytes
			if g.Tensors[i].Bytes() != w.Bytes {
				t.Errorf("%s: %s reads as %s, %d bytes; gguf-py read %s, %d", base, w.Name, g.Tensors[i].Type.Name, g.Tensors[i].Bytes(), w.Type, w.Bytes)
			}
		}
		if g.Model != m {
			t.Errorf("%s: shape read %+v, config.json %+v", base, g.Model, m)
		}
		c, err := CheckGGUF(g, "")
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		if c.Scheme != scheme || len(c.Differences) != 0 || c.PredictedBytes != want || c.FileTensorBytes != want {
			t.Errorf("%s: scheme %s, calculator %d bytes, file %d, gguf-py %d, differences %+v", base, c.Scheme, c.PredictedBytes, c.FileTensorBytes, want, c.Differences)
		}
		// The calculator's estimate for the same scheme has these weights.
		e, err := Calculate(Inputs{Model: g.Model, GGUF: scheme, ContextTokens: 8192, Concurrency: 1})
		if err != nil || e.WeightBytes != want {
			t.Errorf("%s: Calculate with GGUF %s: weights %d (%v), want %d", base, scheme, e.WeightBytes, err, want)
		}
		// Another scheme's prediction is not this file's.
		other := map[string]string{"q4_k_m": "q4_0", "q4_0": "q4_k_m", "q8_0": "q6_k", "q6_k": "q8_0", "bf16": "q8_0"}[scheme]
		if c2, err := CheckGGUF(g, other); err != nil || len(c2.Differences) == 0 {
			t.Errorf("%s: checked as %s: %d differences (%v), want some", base, other, len(c2.Differences), err)
		}
	}
}

// TestReadGGUF_Refuses: what is not a GGUF header this reader can size
// is an error naming the problem, not a panic or a huge allocation.
func TestReadGGUF_Refuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, kvs []gguftest.KV, ts []gguftest.Tensor) string {
		p := filepath.Join(dir, name)
		if err := gguftest.Write(p, kvs, ts); err != nil {
			t.Fatal(err)
		}
		return p
	}
	llama := gguftest.Llama("m", 256, 1, 4, 2, 64, 512, 3, 8192, "f16")
	cases := []struct {
		name, path, want string
	}{
		{"not llama", write("gpt2.gguf", []gguftest.KV{{Key: "general.architecture", Value: "gpt2"}}, nil), `"gpt2"`},
		{"no shape", write("bare.gguf", []gguftest.KV{{Key: "general.architecture", Value: "llama"}}, nil), "no llama.embedding_length"},
		{"partial block", write("part.gguf", llama, []gguftest.Tensor{{Name: "x", Type: "Q4_K", Dims: []uint64{384}, Bytes: 216}}), "not whole Q4_K blocks"},
	}
	for _, c := range cases {
		_, err := OpenGGUF(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := ReadGGUF(bytes.NewReader([]byte("GGML\x03\x00\x00\x00")), 8); err == nil || !strings.Contains(err.Error(), "not a GGUF") {
		t.Errorf("bad magic: %v", err)
	}
}

// FuzzReadGGUF: any bytes give a header or an error, within the file's size.
func FuzzReadGGUF(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.gguf")
	kvs := gguftest.Llama("m", 256, 1, 4, 2, 64, 512, 3, 8192, "q8_0")
	if err := gguftest.Write(path, kvs, []gguftest.Tensor{{Name: "token_embd.weight", Type: "Q8_0", Dims: []uint64{256, 3}, Bytes: 8 * 34 * 3}}); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ReadGGUF(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		for _, ts := range g.Tensors {
			if g.DataOffset+ts.Bytes() > int64(len(b)) {
				t.Fatalf("tensor %s of %d bytes from %d in a file of %d", ts.Name, ts.Bytes(), g.DataOffset, len(b))
			}
		}
	})
}
