package sizing

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Model is the shape of a decoder-only transformer as a Hugging Face
// config.json describes it: enough to count its parameters and its KV cache.
type Model struct {
	Name              string `json:"name"`
	HiddenSize        int    `json:"hidden_size"`
	Layers            int    `json:"num_hidden_layers"`
	Heads             int    `json:"num_attention_heads"`
	KVHeads           int    `json:"num_key_value_heads"` // 0 in a config means Heads (no grouped-query attention)
	HeadDim           int    `json:"head_dim"`            // 0 in a config means HiddenSize / Heads
	IntermediateSize  int    `json:"intermediate_size"`
	VocabSize         int    `json:"vocab_size"`
	TieWordEmbeddings bool   `json:"tie_word_embeddings"`
	AttentionBias     bool   `json:"attention_bias"`          // q/k/v biases (Qwen2 has them without saying so)
	MaxContext        int    `json:"max_position_embeddings"` // the longest context the model was trained for
}

// hfConfig is the subset of config.json read; pointers tell absent from zero.
type hfConfig struct {
	ModelType         string   `json:"model_type"`
	Architectures     []string `json:"architectures"`
	NameOrPath        string   `json:"_name_or_path"`
	HiddenSize        int      `json:"hidden_size"`
	Layers            int      `json:"num_hidden_layers"`
	Heads             int      `json:"num_attention_heads"`
	KVHeads           *int     `json:"num_key_value_heads"`
	HeadDim           *int     `json:"head_dim"`
	IntermediateSize  int      `json:"intermediate_size"`
	VocabSize         int      `json:"vocab_size"`
	TieWordEmbeddings *bool    `json:"tie_word_embeddings"`
	AttentionBias     *bool    `json:"attention_bias"`
	MaxPosition       int      `json:"max_position_embeddings"`
}

// ParseHFConfig reads a Hugging Face config.json. The parameter count is
// computed from the shape for llama-like models (gated MLP, RMSNorm, no
// mixture of experts); other architectures are refused rather than guessed.
func ParseHFConfig(data []byte, name string) (Model, error) {
	var c hfConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return Model{}, fmt.Errorf("decode config.json: %w", err)
	}
	if c.HiddenSize == 0 {
		var wrapped struct {
			TextConfig *hfConfig `json:"text_config"`
		}
		if err := json.Unmarshal(data, &wrapped); err == nil && wrapped.TextConfig != nil {
			c = *wrapped.TextConfig
		}
	}
	var missing []string
	for _, f := range []struct {
		key string
		v   int
	}{{"hidden_size", c.HiddenSize}, {"num_hidden_layers", c.Layers}, {"num_attention_heads", c.Heads},
		{"intermediate_size", c.IntermediateSize}, {"vocab_size", c.VocabSize}} {
		if f.v <= 0 {
			missing = append(missing, f.key)
		}
	}
	if len(missing) > 0 {
		return Model{}, fmt.Errorf("config.json: missing or non-positive %s: is this a decoder-only transformer's config?", strings.Join(missing, ", "))
	}
	if strings.Contains(strings.ToLower(c.ModelType), "moe") || strings.Contains(string(data), `"num_local_experts"`) ||
		strings.Contains(string(data), `"num_experts"`) {
		return Model{}, fmt.Errorf("config.json: model_type %q is a mixture of experts: its parameters cannot be counted from a llama-like shape", c.ModelType)
	}
	m := Model{
		Name: name, HiddenSize: c.HiddenSize, Layers: c.Layers, Heads: c.Heads, KVHeads: c.Heads,
		HeadDim: c.HiddenSize / c.Heads, IntermediateSize: c.IntermediateSize, VocabSize: c.VocabSize,
		MaxContext: c.MaxPosition,
		// Qwen2 puts biases on q/k/v without an attention_bias key.
		AttentionBias: c.ModelType == "qwen2",
	}
	if m.Name == "" {
		m.Name = c.NameOrPath
	}
	if c.KVHeads != nil && *c.KVHeads > 0 {
		m.KVHeads = *c.KVHeads
	}
	if c.HeadDim != nil && *c.HeadDim > 0 {
		m.HeadDim = *c.HeadDim
	}
	if c.TieWordEmbeddings != nil {
		m.TieWordEmbeddings = *c.TieWordEmbeddings
	}
	if c.AttentionBias != nil {
		m.AttentionBias = *c.AttentionBias
	}
	return m, m.validate()
}

// LoadHFConfig reads a config.json file; see ParseHFConfig.
func LoadHFConfig(path string) (Model, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Model{}, fmt.Errorf("read model config: %w", err)
	}
	m, err := ParseHFConfig(data, "")
	if err != nil {
		return Model{}, fmt.Errorf("%s: %w", path, err)
	}
	if m.Name == "" {
		m.Name = path
	}
	return m, nil
}

func (m Model) validate() error {
	if m.HeadDim <= 0 {
		// hidden_size / num_attention_heads rounded down to 0, and no head_dim given.
		return fmt.Errorf("model %s: head size is 0 (hidden_size %d / num_attention_heads %d, and no head_dim): set head_dim, or check the two", m.Name, m.HiddenSize, m.Heads)
	}
	if m.Heads%m.KVHeads != 0 {
		return fmt.Errorf("model %s: %d attention heads are not a multiple of %d KV heads", m.Name, m.Heads, m.KVHeads)
	}
	return nil
}

// ParamCounts splits a model's parameters into the linear layers of its
// blocks (what weight quantisation shrinks) and the rest: embeddings, the
// output head, norms and biases, which int4/fp8 checkpoints keep in 16 bits.
type ParamCounts struct {
	Linear int64 `json:"linear"`
	Other  int64 `json:"other"`
}

// Total is every parameter.
func (p ParamCounts) Total() int64 { return p.Linear + p.Other }

// Params counts the parameters of a llama-like model from its shape: per
// layer q and o (hidden × heads·head_dim), k and v (hidden × kv_heads·head_dim),
// a gated MLP (3 × hidden × intermediate) and two RMSNorm vectors; plus the
// token embedding, the output head unless tied, and the final norm.
func (m Model) Params() ParamCounts {
	h, q, kv := int64(m.HiddenSize), int64(m.Heads*m.HeadDim), int64(m.KVHeads*m.HeadDim)
	inter, l, v := int64(m.IntermediateSize), int64(m.Layers), int64(m.VocabSize)
	attn := 2*h*q + 2*h*kv
	mlp := 3 * h * inter
	perLayerOther := 2 * h
	if m.AttentionBias {
		perLayerOther += q + 2*kv
	}
	heads := v * h
	if !m.TieWordEmbeddings {
		heads *= 2
	}
	return ParamCounts{Linear: l * (attn + mlp), Other: l*perLayerOther + heads + h}
}

// Presets are common shapes from their Hugging Face config.json files, so
// that the calculator works before anything is downloaded.
var Presets = []Model{
	{Name: "Llama-3.2-1B", HiddenSize: 2048, Layers: 16, Heads: 32, KVHeads: 8, HeadDim: 64,
		IntermediateSize: 8192, VocabSize: 128256, TieWordEmbeddings: true, MaxContext: 131072},
	{Name: "Llama-3.2-3B", HiddenSize: 3072, Layers: 28, Heads: 24, KVHeads: 8, HeadDim: 128,
		IntermediateSize: 8192, VocabSize: 128256, TieWordEmbeddings: true, MaxContext: 131072},
	{Name: "Llama-3.1-8B", HiddenSize: 4096, Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128,
		IntermediateSize: 14336, VocabSize: 128256, MaxContext: 131072},
	{Name: "Qwen2.5-7B", HiddenSize: 3584, Layers: 28, Heads: 28, KVHeads: 4, HeadDim: 128,
		IntermediateSize: 18944, VocabSize: 152064, AttentionBias: true, MaxContext: 32768},
	{Name: "Mistral-7B", HiddenSize: 4096, Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128,
		IntermediateSize: 14336, VocabSize: 32768, MaxContext: 32768},
	{Name: "Qwen2.5-32B", HiddenSize: 5120, Layers: 64, Heads: 40, KVHeads: 8, HeadDim: 128,
		IntermediateSize: 27648, VocabSize: 152064, AttentionBias: true, MaxContext: 32768},
	{Name: "Llama-3.1-70B", HiddenSize: 8192, Layers: 80, Heads: 64, KVHeads: 8, HeadDim: 128,
		IntermediateSize: 28672, VocabSize: 128256, MaxContext: 131072},
}

// Preset finds a preset by name, ignoring case, or by a name that contains
// it ("meta-llama/Llama-3.1-8B-Instruct" finds Llama-3.1-8B); the longest
// match wins, so "Qwen2.5-32B" is not read as a smaller model's name.
func Preset(name string) (Model, bool) {
	lower := strings.ToLower(name)
	var best Model
	for _, p := range Presets {
		pn := strings.ToLower(p.Name)
		if lower == pn {
			return p, true
		}
		if strings.Contains(lower, pn) && len(p.Name) > len(best.Name) {
			best = p
		}
	}
	return best, best.Name != ""
}

// ResolveModel finds a model by a preset name or a config.json path: a
// path that exists is read as a config (a directory holding config.json
// too), anything else must name a preset.
func ResolveModel(nameOrPath string) (Model, error) {
	if fi, err := os.Stat(nameOrPath); err == nil {
		path := nameOrPath
		if fi.IsDir() {
			path = filepath.Join(path, "config.json")
		}
		return LoadHFConfig(path)
	}
	if m, ok := Preset(nameOrPath); ok {
		return m, nil
	}
	return Model{}, fmt.Errorf("model %q is neither a config.json file nor a preset (%s)", nameOrPath, strings.Join(PresetNames(), ", "))
}

// PresetNames lists the presets' names, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(Presets))
	for _, p := range Presets {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}
