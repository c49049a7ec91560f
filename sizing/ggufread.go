package sizing

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
)

// Reading a GGUF file's header (the GGUF v2/v3 format of ggml's gguf.h:
// magic, version, tensor and key-value counts, the key-values, then each
// tensor's name, shape, type and data offset): what it holds, tensor by
// tensor, so that the calculator's GGUF weight bytes can be set beside a
// real file's. Only the header is read; the tensor data is not, but the
// file must be long enough to hold it.

// ggmlTypes are ggml's type ids (ggml.h's enum ggml_type) of the types
// llama-quantize writes for a dense model, with their blocks (ggml-common.h).
var ggmlTypes = map[uint32]GGMLType{
	0: GGMLF32, 1: GGMLF16,
	2: GGMLQ4_0, 3: {"Q4_1", 32, 20},
	6: GGMLQ5_0, 7: GGMLQ5_1,
	8: GGMLQ8_0, 9: {"Q8_1", 32, 36},
	10: {"Q2_K", 256, 84}, 11: {"Q3_K", 256, 110},
	12: GGMLQ4_K, 13: GGMLQ5_K, 14: GGMLQ6_K, 15: {"Q8_K", 256, 292},
	30: GGMLBF16,
}

// ggufFileTypes are llama.h's llama_ftype values (general.file_type) of the
// schemes GGUFTensors knows, and llama.cpp's own name of each
// (llama_model_ftype_name: /v1/models meta.ftype, /props model_ftype).
var ggufFileTypes = map[uint32]struct{ scheme, name string }{
	0:  {"f32", "all F32"},
	1:  {"f16", "F16"},
	2:  {"q4_0", "Q4_0"},
	7:  {"q8_0", "Q8_0"},
	15: {"q4_k_m", "Q4_K - Medium"},
	18: {"q6_k", "Q6_K"},
	32: {"bf16", "BF16"},
}

// ggufFileTypeGuessed is llama.h's LLAMA_FTYPE_GUESSED bit: a file type
// the loader guessed from the tensors.
const ggufFileTypeGuessed = 1024

// GGUFSchemeOf is the GGUF scheme (GGUFTensors' name: "q4_k_m") of the
// file type as llama.cpp names it ("Q4_K - Medium", "BF16"), false when it
// is not one the calculator knows.
func GGUFSchemeOf(ftypeName string) (string, bool) {
	name := strings.TrimSuffix(strings.TrimSpace(ftypeName), " (guessed)")
	for _, ft := range ggufFileTypes {
		if strings.EqualFold(ft.name, name) {
			return ft.scheme, true
		}
	}
	return "", false
}

// GGUFFile is what a GGUF file's header says.
type GGUFFile struct {
	Path         string       `json:"path,omitempty"`
	Version      uint32       `json:"version"`
	Architecture string       `json:"architecture"`
	Name         string       `json:"name,omitempty"`
	FileType     int64        `json:"file_type"`        // general.file_type; -1 when absent
	Scheme       string       `json:"scheme,omitempty"` // the file type as GGUFTensors names it; "" when unknown
	Alignment    int64        `json:"alignment"`
	Model        Model        `json:"model"`        // the shape, from the architecture's keys
	Tensors      []GGUFTensor `json:"tensors"`      // in the file's order
	DataOffset   int64        `json:"data_offset"`  // where the tensor data begins
	FileBytes    int64        `json:"file_bytes"`   // the file's length
	TensorBytes  int64        `json:"tensor_bytes"` // the sum of the tensors' bytes (llama.cpp's model size)
}

// OpenGGUF reads the header of the GGUF file at path.
func OpenGGUF(path string) (*GGUFFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	g, err := ReadGGUF(f, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("GGUF %s: %w", path, err)
	}
	g.Path = path
	return g, nil
}

// IsGGUF reports whether the file at path begins with GGUF's magic.
func IsGGUF(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == "GGUF"
}

// ggufReader reads the header's little-endian fields, never past size: a
// length that would is an error, not an allocation.
type ggufReader struct {
	r    io.ReaderAt
	off  int64
	size int64
	buf  [8]byte
}

var errGGUFShort = errors.New("file ends inside the header")

func (r *ggufReader) read(n int64) ([]byte, error) {
	if n < 0 || n > r.size-r.off {
		return nil, fmt.Errorf("at byte %d: %w (%d bytes wanted, %d left)", r.off, errGGUFShort, n, r.size-r.off)
	}
	var b []byte
	if n <= int64(len(r.buf)) {
		b = r.buf[:n]
	} else {
		b = make([]byte, n)
	}
	if _, err := r.r.ReadAt(b, r.off); err != nil {
		return nil, fmt.Errorf("at byte %d: %w", r.off, err)
	}
	r.off += n
	return b, nil
}

func (r *ggufReader) u32() (uint32, error) {
	b, err := r.read(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (r *ggufReader) u64() (uint64, error) {
	b, err := r.read(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (r *ggufReader) str() (string, error) {
	n, err := r.u64()
	if err != nil {
		return "", err
	}
	if n > uint64(r.size) {
		return "", fmt.Errorf("at byte %d: a string of %d bytes in a file of %d", r.off-8, n, r.size)
	}
	b, err := r.read(int64(n))
	return string(b), err
}

// GGUF value types (gguf.h's enum gguf_type) and the bytes of the scalar ones.
const (
	ggufString = 8
	ggufArray  = 9
)

var ggufScalarBytes = map[uint32]int64{0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

// value reads one value of type typ: integers as int64 (an unsigned 64-bit
// one over math.MaxInt64 is an error), strings as string, floats, bools and
// arrays skipped (nil).
func (r *ggufReader) value(typ uint32) (any, error) {
	switch typ {
	case ggufString:
		return r.str()
	case ggufArray:
		et, err := r.u32()
		if err != nil {
			return nil, err
		}
		n, err := r.u64()
		if err != nil {
			return nil, err
		}
		if w, ok := ggufScalarBytes[et]; ok {
			if n > uint64(r.size/w) {
				return nil, fmt.Errorf("at byte %d: an array of %d elements in a file of %d bytes", r.off-8, n, r.size)
			}
			_, err := r.read(int64(n) * w)
			return nil, err
		}
		if n > uint64(r.size) {
			return nil, fmt.Errorf("at byte %d: an array of %d elements in a file of %d bytes", r.off-8, n, r.size)
		}
		for range n {
			if _, err := r.value(et); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	w, ok := ggufScalarBytes[typ]
	if !ok {
		return nil, fmt.Errorf("at byte %d: value type %d is not GGUF's", r.off-4, typ)
	}
	b, err := r.read(w)
	if err != nil {
		return nil, err
	}
	switch typ {
	case 0, 7:
		return int64(b[0]), nil
	case 1:
		return int64(int8(b[0])), nil
	case 2:
		return int64(binary.LittleEndian.Uint16(b)), nil
	case 3:
		return int64(int16(binary.LittleEndian.Uint16(b))), nil
	case 4:
		return int64(binary.LittleEndian.Uint32(b)), nil
	case 5:
		return int64(int32(binary.LittleEndian.Uint32(b))), nil
	case 10:
		v := binary.LittleEndian.Uint64(b)
		if v > math.MaxInt64 {
			return nil, fmt.Errorf("at byte %d: %d does not fit an int64", r.off-8, v)
		}
		return int64(v), nil
	case 11:
		return int64(binary.LittleEndian.Uint64(b)), nil
	}
	return nil, nil // floats: not needed here
}

// ReadGGUF reads a GGUF header from r, a file of size bytes: the model's
// shape from the architecture's keys (llama.cpp's LLM_KV names), the file
// type, and every tensor with its type and bytes. A tensor type the table
// does not know, data past the end of the file or a shape that is not a
// dense llama-like model is an error that says which.
func ReadGGUF(r io.ReaderAt, size int64) (*GGUFFile, error) {
	gr := &ggufReader{r: r, size: size}
	magic, err := gr.read(4)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(magic, []byte("GGUF")) {
		return nil, fmt.Errorf("not a GGUF file (magic %q)", magic)
	}
	g := &GGUFFile{FileType: -1, Alignment: 32, FileBytes: size}
	if g.Version, err = gr.u32(); err != nil {
		return nil, err
	}
	if g.Version < 2 || g.Version > 3 {
		return nil, fmt.Errorf("GGUF version %d: want 2 or 3", g.Version)
	}
	nt, err := gr.u64()
	if err != nil {
		return nil, err
	}
	nkv, err := gr.u64()
	if err != nil {
		return nil, err
	}
	// A tensor's info takes at least 8+4+8+4+8 bytes, a key-value 8+4+1.
	if nt > uint64(size/32) || nkv > uint64(size/13) {
		return nil, fmt.Errorf("%d tensors and %d keys do not fit in %d bytes", nt, nkv, size)
	}
	ints, strs := map[string]int64{}, map[string]string{}
	for range nkv {
		key, err := gr.str()
		if err != nil {
			return nil, err
		}
		typ, err := gr.u32()
		if err != nil {
			return nil, err
		}
		v, err := gr.value(typ)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", key, err)
		}
		switch v := v.(type) {
		case int64:
			ints[key] = v
		case string:
			strs[key] = v
		}
	}
	g.Architecture, g.Name = strs["general.architecture"], strs["general.name"]
	if a, ok := ints["general.alignment"]; ok {
		if a <= 0 || a&(a-1) != 0 {
			return nil, fmt.Errorf("general.alignment %d: want a power of two", a)
		}
		g.Alignment = a
	}
	if ft, ok := ints["general.file_type"]; ok {
		g.FileType = ft
		if s, ok := ggufFileTypes[uint32(ft&^ggufFileTypeGuessed)]; ok && ft >= 0 {
			g.Scheme = s.scheme
		}
	}
	type info struct {
		t      GGUFTensor
		offset int64
	}
	infos := make([]info, 0, nt)
	for range nt {
		name, err := gr.str()
		if err != nil {
			return nil, err
		}
		nd, err := gr.u32()
		if err != nil {
			return nil, err
		}
		if nd == 0 || nd > 4 {
			return nil, fmt.Errorf("tensor %s: %d dimensions, want 1 to 4", name, nd)
		}
		t := GGUFTensor{Name: name, Rows: 1}
		for d := range nd {
			n, err := gr.u64()
			if err != nil {
				return nil, err
			}
			if n == 0 || n > uint64(size) {
				return nil, fmt.Errorf("tensor %s: dimension %d is %d", name, d, n)
			}
			if d == 0 {
				t.RowLength = int64(n)
			} else {
				t.Rows *= int64(n)
			}
			if t.Rows > size {
				return nil, fmt.Errorf("tensor %s: %d rows in a file of %d bytes", name, t.Rows, size)
			}
		}
		ty, err := gr.u32()
		if err != nil {
			return nil, err
		}
		gt, ok := ggmlTypes[ty]
		if !ok {
			return nil, fmt.Errorf("tensor %s: ggml type %d is not one this reader knows", name, ty)
		}
		if t.RowLength%gt.BlockSize != 0 {
			return nil, fmt.Errorf("tensor %s: rows of %d are not whole %s blocks of %d", name, t.RowLength, gt.Name, gt.BlockSize)
		}
		t.Type = gt
		off, err := gr.u64()
		if err != nil {
			return nil, err
		}
		if off > uint64(size) {
			return nil, fmt.Errorf("tensor %s: data offset %d past the end of the file (%d bytes)", name, off, size)
		}
		infos = append(infos, info{t, int64(off)})
	}
	g.DataOffset = (gr.off + g.Alignment - 1) / g.Alignment * g.Alignment
	for _, in := range infos {
		end := g.DataOffset + in.offset + in.t.Bytes()
		if end > size {
			return nil, fmt.Errorf("tensor %s: its %d bytes end at %d, past the end of the file (%d bytes: cut short?)", in.t.Name, in.t.Bytes(), end, size)
		}
		g.Tensors = append(g.Tensors, in.t)
		g.TensorBytes += in.t.Bytes()
	}
	g.Model, err = ggufModel(g, ints)
	if err != nil {
		return nil, err
	}
	return g, nil
}

// ggufModel is the shape the architecture's keys give, as ParseHFConfig
// would read the model's config.json: llama.cpp's
// {arch}.embedding_length, block_count, attention.head_count and so on, the
// vocabulary from {arch}.vocab_size (or token_embd's rows) and tied
// embeddings when there is no output tensor.
func ggufModel(g *GGUFFile, ints map[string]int64) (Model, error) {
	arch := g.Architecture
	if arch != "llama" {
		return Model{}, fmt.Errorf("general.architecture %q: the calculator reads llama's keys only", arch)
	}
	key := func(k string) (int, error) {
		v, ok := ints[arch+"."+k]
		if !ok {
			return 0, fmt.Errorf("no %s.%s", arch, k)
		}
		if v <= 0 || v > math.MaxInt32 {
			return 0, fmt.Errorf("%s.%s is %d", arch, k, v)
		}
		return int(v), nil
	}
	m := Model{Name: g.Name}
	var err error
	for _, f := range []struct {
		k string
		p *int
	}{{"embedding_length", &m.HiddenSize}, {"block_count", &m.Layers}, {"attention.head_count", &m.Heads},
		{"feed_forward_length", &m.IntermediateSize}, {"context_length", &m.MaxContext}} {
		if *f.p, err = key(f.k); err != nil {
			return Model{}, err
		}
	}
	if m.KVHeads, err = key("attention.head_count_kv"); err != nil {
		m.KVHeads = m.Heads
	}
	if m.HeadDim, err = key("attention.key_length"); err != nil {
		m.HeadDim = m.HiddenSize / m.Heads
	}
	byName := map[string]GGUFTensor{}
	for _, t := range g.Tensors {
		byName[t.Name] = t
	}
	if m.VocabSize, err = key("vocab_size"); err != nil {
		emb, ok := byName["token_embd.weight"]
		if !ok {
			return Model{}, errors.New("no llama.vocab_size and no token_embd.weight")
		}
		m.VocabSize = int(emb.Rows)
	}
	_, hasOutput := byName["output.weight"]
	m.TieWordEmbeddings = !hasOutput
	_, m.AttentionBias = byName["blk.0.attn_q.bias"]
	if m.Name == "" {
		m.Name = "gguf"
	}
	return m, m.validate()
}

// GGUFTypeCount is the tensors of one ggml type in a list and their bytes.
type GGUFTypeCount struct {
	Type    string `json:"type"`
	Tensors int    `json:"tensors"`
	Bytes   int64  `json:"bytes"`
}

// GGUFTypeCounts sums ts by type, the most bytes first.
func GGUFTypeCounts(ts []GGUFTensor) []GGUFTypeCount {
	by := map[string]*GGUFTypeCount{}
	var out []GGUFTypeCount
	for _, t := range ts {
		c := by[t.Type.Name]
		if c == nil {
			c = &GGUFTypeCount{Type: t.Type.Name}
			by[t.Type.Name] = c
		}
		c.Tensors++
		c.Bytes += t.Bytes()
	}
	for _, c := range by {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Type < out[j].Type
	})
	return out
}
