// Package gguftest writes GGUF files for tests: a real header (GGUF v3:
// key-values, tensor infos, 32-byte alignment) over tensor data of the
// stated bytes, left as a hole (the file is truncated to its length), so a
// 30 MB model's file costs the disk nothing. The types' ids are ggml.h's;
// the bytes of each tensor are the caller's, never computed here, so a
// reader's block sizes are checked against numbers it did not make.
package gguftest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// TypeIDs are ggml.h's enum ggml_type values by name.
var TypeIDs = map[string]uint32{
	"F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q8_1": 9,
	"Q2_K": 10, "Q3_K": 11, "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "Q8_K": 15, "BF16": 30,
}

// FileTypes are llama.h's llama_ftype values (general.file_type) by the
// scheme names of engines/llamacpp/gguf.sh.
var FileTypes = map[string]uint32{"f32": 0, "f16": 1, "q4_0": 2, "q8_0": 7, "q4_k_m": 15, "q6_k": 18, "bf16": 32}

// Tensor is one tensor's info: ggml's dimensions (row length first), its
// type's name and the bytes of its data.
type Tensor struct {
	Name  string
	Type  string
	Dims  []uint64
	Bytes int64
}

// KV is one key-value: a uint32, uint64, string or []string value.
type KV struct {
	Key   string
	Value any
}

// Llama is the key-values of a llama model of this shape as
// engines/llamacpp/convert.py writes them (file type by scheme name).
func Llama(name string, hidden, layers, heads, kvHeads, headDim, ffn, vocab, ctx int, scheme string) []KV {
	u := func(v int) uint32 { return uint32(v) }
	return []KV{
		{"general.architecture", "llama"}, {"general.name", name},
		{"llama.block_count", u(layers)}, {"llama.context_length", u(ctx)},
		{"llama.embedding_length", u(hidden)}, {"llama.feed_forward_length", u(ffn)},
		{"llama.attention.head_count", u(heads)}, {"llama.attention.head_count_kv", u(kvHeads)},
		{"llama.attention.key_length", u(headDim)}, {"llama.attention.value_length", u(headDim)},
		{"general.file_type", FileTypes[scheme]}, {"llama.vocab_size", u(vocab)},
		{"tokenizer.ggml.tokens", []string{"<|begin_of_text|>", "a", "b"}},
	}
}

// Write writes the GGUF file at path.
func Write(path string, kvs []KV, tensors []Tensor) error {
	var h bytes.Buffer
	le := func(v any) { _ = binary.Write(&h, binary.LittleEndian, v) }
	str := func(s string) { le(uint64(len(s))); h.WriteString(s) }
	h.WriteString("GGUF")
	le(uint32(3))
	le(uint64(len(tensors)))
	le(uint64(len(kvs)))
	for _, kv := range kvs {
		str(kv.Key)
		switch v := kv.Value.(type) {
		case uint32:
			le(uint32(4))
			le(v)
		case uint64:
			le(uint32(10))
			le(v)
		case string:
			le(uint32(8))
			str(v)
		case []string:
			le(uint32(9))
			le(uint32(8))
			le(uint64(len(v)))
			for _, s := range v {
				str(s)
			}
		default:
			return fmt.Errorf("key %s: value %T is not one gguftest writes", kv.Key, kv.Value)
		}
	}
	var off int64
	for _, t := range tensors {
		id, ok := TypeIDs[t.Type]
		if !ok {
			return fmt.Errorf("tensor %s: type %q has no ggml id here", t.Name, t.Type)
		}
		str(t.Name)
		le(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			le(d)
		}
		le(id)
		le(uint64(off))
		off += (t.Bytes + 31) / 32 * 32
	}
	data := (int64(h.Len()) + 31) / 32 * 32
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(h.Bytes()); err != nil {
		f.Close()
		return err
	}
	end := data + off
	if len(tensors) > 0 {
		last := tensors[len(tensors)-1]
		end = data + off - (last.Bytes+31)/32*32 + last.Bytes
	}
	if err := f.Truncate(end); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadTable reads a sizing/testdata/gguf/*.tsv file (tensor, type, ne0,
// ne1, bytes; what gguf-py's GGUFReader read from a file llama-quantize
// made) as tensors: 1-D where ne1 is 1, as the file had them.
func ReadTable(path string) ([]Tensor, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Tensor
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := strings.Split(line, "\t")
		if len(c) != 5 {
			return nil, fmt.Errorf("%s:%d: %d fields, want 5", path, n, len(c))
		}
		var v [3]int64
		for i, s := range c[2:] {
			if v[i], err = strconv.ParseInt(s, 10, 64); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, n, err)
			}
		}
		t := Tensor{Name: c[0], Type: c[1], Dims: []uint64{uint64(v[0])}, Bytes: v[2]}
		if v[1] != 1 {
			t.Dims = append(t.Dims, uint64(v[1]))
		}
		out = append(out, t)
	}
	return out, nil
}
