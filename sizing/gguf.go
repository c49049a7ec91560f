package sizing

import (
	"fmt"
	"strings"
)

// GGUF weight bytes: what llama.cpp's llama-quantize makes of a dense
// llama-like model, tensor by tensor, so that the calculator's weight bytes
// for a GGUF variant are the file's tensor data and not a bits-per-weight
// guess. A k-quant's scheme name says little by itself: Q4_K_M keeps the
// embedding and some layers' attn_v and ffn_down in Q6_K, and a row whose
// length is not a multiple of the type's block falls back to another type
// (at hidden 384 every Q4_K row became Q5_0, engines/llamacpp/README.md).
// The rules are llama-quant.cpp's llama_tensor_get_type_impl and
// tensor_type_fallback (llama.cpp b1-de3ff81, the build of
// engines/llamacpp/build.sh) for a model without experts, not 70B-sized.

// GGMLType is one of ggml's tensor types: BlockSize weights of a row take
// BlockBytes bytes.
type GGMLType struct {
	Name       string
	BlockSize  int64
	BlockBytes int64
}

// The ggml types the schemes below use (ggml-common.h's block structs).
var (
	GGMLF32  = GGMLType{"F32", 1, 4}
	GGMLF16  = GGMLType{"F16", 1, 2}
	GGMLBF16 = GGMLType{"BF16", 1, 2}
	GGMLQ8_0 = GGMLType{"Q8_0", 32, 34}   // 32 int8 + an f16 scale
	GGMLQ5_0 = GGMLType{"Q5_0", 32, 22}   // f16 scale, 32 high bits, 16 bytes of nibbles
	GGMLQ5_1 = GGMLType{"Q5_1", 32, 24}   // f16 scale and min, 32 high bits, 16 bytes
	GGMLQ4_0 = GGMLType{"Q4_0", 32, 18}   // f16 scale + 16 bytes of nibbles
	GGMLQ6_K = GGMLType{"Q6_K", 256, 210} // 128 low nibble bytes, 64 high-bit bytes, 16 int8 scales, f16 scale
	GGMLQ5_K = GGMLType{"Q5_K", 256, 176}
	GGMLQ4_K = GGMLType{"Q4_K", 256, 144} // f16 scale and min, 12 bytes of 6-bit scales, 128 bytes of nibbles
)

// ggufSchemes maps a GGUF file type (gguf.sh's TYPE, llama-quantize's
// name in lower case) to its default tensor type.
var ggufSchemes = map[string]GGMLType{
	"bf16": GGMLBF16, "f16": GGMLF16, "f32": GGMLF32,
	"q8_0": GGMLQ8_0, "q6_k": GGMLQ6_K, "q4_k_m": GGMLQ4_K, "q4_0": GGMLQ4_0,
}

// ggufPrecision is the precision a GGUF scheme's linear layers are nearest
// to, for what a card's kernels support (a 6-bit k-quant counts as int8,
// f32 as 16 bits).
var ggufPrecision = map[string]Precision{
	"bf16": BF16, "f16": FP16, "f32": BF16, "q8_0": INT8, "q6_k": INT8, "q4_k_m": INT4, "q4_0": INT4,
}

// GGUFTensor is one tensor of a GGUF file: its llama.cpp name, type, row
// length (ggml's ne0: the input width) and rows, and its bytes.
type GGUFTensor struct {
	Name      string
	Type      GGMLType
	RowLength int64
	Rows      int64
	// Fallback is the type the scheme wanted when the row length did not
	// fit it (Type is then llama-quantize's fallback), else empty.
	Fallback string
}

// Bytes is the tensor's data: rows × blocks a row × bytes a block.
func (t GGUFTensor) Bytes() int64 {
	return t.Rows * (t.RowLength / t.Type.BlockSize) * t.Type.BlockBytes
}

// ggufUseMoreBits is llama-quant.cpp's use_more_bits: the first and last
// eighth of the layers and every third one between keep more bits.
func ggufUseMoreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

// ggufFallback is tensor_type_fallback: a type whose block does not divide
// the row length becomes a 32-block one, or F16 when even that does not fit.
func ggufFallback(t GGMLType, rowLength int64) (GGMLType, string) {
	if rowLength%t.BlockSize == 0 {
		return t, ""
	}
	want := t.Name
	switch t {
	case GGMLQ4_K:
		t = GGMLQ5_0
	case GGMLQ5_K:
		t = GGMLQ5_1
	case GGMLQ6_K:
		t = GGMLQ8_0
	}
	if rowLength%t.BlockSize != 0 {
		t = GGMLF16
	}
	return t, want
}

// GGUFTensors lists the tensors of m's GGUF in the given scheme (bf16, f16,
// f32 as engines/llamacpp/convert.py writes them; q8_0, q6_k, q4_k_m, q4_0
// as llama-quantize makes them from the bf16 file), norms in F32. A model
// with tied embeddings has no output tensor: its token_embd is quantised as
// the output.
func GGUFTensors(m Model, scheme string) ([]GGUFTensor, error) {
	if err := m.validate(); err != nil {
		return nil, err
	}
	if m.MoE() || m.AttentionBias {
		return nil, fmt.Errorf("model %s: GGUF sizes are written for dense models without biases", m.Name)
	}
	def, ok := ggufSchemes[strings.ToLower(scheme)]
	if !ok {
		return nil, fmt.Errorf("GGUF scheme %q: want bf16, f16, f32, q8_0, q6_k, q4_k_m or q4_0", scheme)
	}
	float := def.BlockSize == 1
	h, q, kv := int64(m.HiddenSize), int64(m.Heads*m.HeadDim), int64(m.KVHeads*m.HeadDim)
	f, v := int64(m.IntermediateSize), int64(m.VocabSize)
	mk := func(name string, t GGMLType, rowLength, rows int64) GGUFTensor {
		if float {
			return GGUFTensor{Name: name, Type: t, RowLength: rowLength, Rows: rows}
		}
		got, want := ggufFallback(t, rowLength)
		return GGUFTensor{Name: name, Type: got, RowLength: rowLength, Rows: rows, Fallback: want}
	}
	// The output (or the tied token_embd): Q8_0 when the row does not fit
	// the scheme's block, else Q6_K, unless the scheme is Q8_0.
	output := func(name string) GGUFTensor {
		t := def
		switch {
		case float:
		case h%def.BlockSize != 0, def == GGMLQ8_0:
			t = GGMLQ8_0
		default:
			t = GGMLQ6_K
		}
		return mk(name, t, h, v)
	}
	q4km := def == GGMLQ4_K
	var out []GGUFTensor
	if m.TieWordEmbeddings {
		out = append(out, output("token_embd.weight"))
	} else {
		out = append(out, mk("token_embd.weight", def, h, v))
	}
	for i := range m.Layers {
		p := fmt.Sprintf("blk.%d.", i)
		more := q4km && ggufUseMoreBits(i, m.Layers)
		pick := func(up bool) GGMLType {
			if up {
				return GGMLQ6_K
			}
			return def
		}
		out = append(out,
			GGUFTensor{Name: p + "attn_norm.weight", Type: GGMLF32, RowLength: h, Rows: 1},
			mk(p+"attn_q.weight", def, h, q),
			mk(p+"attn_k.weight", def, h, kv),
			mk(p+"attn_v.weight", pick(more), h, kv),
			mk(p+"attn_output.weight", def, q, h),
			GGUFTensor{Name: p + "ffn_norm.weight", Type: GGMLF32, RowLength: h, Rows: 1},
			mk(p+"ffn_gate.weight", def, h, f),
			mk(p+"ffn_up.weight", def, h, f),
			mk(p+"ffn_down.weight", pick(more), f, h),
		)
	}
	out = append(out, GGUFTensor{Name: "output_norm.weight", Type: GGMLF32, RowLength: h, Rows: 1})
	if !m.TieWordEmbeddings {
		out = append(out, output("output.weight"))
	}
	return out, nil
}

// GGUFWeightBytes is the tensor data of m's GGUF in the given scheme (the
// file adds its metadata, the vocabulary and 32-byte alignment), and how
// many tensors fell back to another type than the scheme wanted.
func GGUFWeightBytes(m Model, scheme string) (bytes int64, fallbacks int, err error) {
	ts, err := GGUFTensors(m, scheme)
	if err != nil {
		return 0, 0, err
	}
	for _, t := range ts {
		bytes += t.Bytes()
		if t.Fallback != "" {
			fallbacks++
		}
	}
	return bytes, fallbacks, nil
}
