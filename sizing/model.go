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
	// NormsPerLayer is the RMSNorm vectors of one layer: 2 for Llama-like
	// models, 4 for Gemma 2 (pre- and post-norms around attention and MLP);
	// 0 means 2.
	NormsPerLayer int `json:"norms_per_layer,omitempty"`
	// SlidingWindow is the tokens a sliding-window layer attends to (and
	// keeps in its KV cache); SlidingLayers is how many layers use it, the
	// rest attending to the whole context. Mistral-7B-v0.1 slides on every
	// layer, Gemma 2 on every other one (config.json's layer_types, or
	// sliding_window with the architecture's pattern).
	SlidingWindow int `json:"sliding_window,omitempty"`
	SlidingLayers int `json:"sliding_layers,omitempty"`
	// Experts is a mixture of experts' experts per layer (0 = a dense MLP),
	// ExpertsPerToken how many each token is routed to, and
	// ExpertIntermediate an expert's MLP width (0 = IntermediateSize).
	Experts            int `json:"num_experts,omitempty"`
	ExpertsPerToken    int `json:"num_experts_per_tok,omitempty"`
	ExpertIntermediate int `json:"moe_intermediate_size,omitempty"`
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
	SlidingWindow     *int     `json:"sliding_window"`
	UseSlidingWindow  *bool    `json:"use_sliding_window"`
	LayerTypes        []string `json:"layer_types"`
	// SlidingPattern is Gemma 3's "one global layer every N" (5 local : 1 global = 6).
	SlidingPattern    int `json:"sliding_window_pattern"`
	LocalExperts      int `json:"num_local_experts"` // Mixtral
	NumExperts        int `json:"num_experts"`       // Qwen2-MoE and others
	ExpertsPerToken   int `json:"num_experts_per_tok"`
	MoEIntermediate   int `json:"moe_intermediate_size"`
	SharedExpertInter int `json:"shared_expert_intermediate_size"`
}

// ParseHFConfig reads a Hugging Face config.json. The parameter count is
// computed from the shape for llama-like models (gated MLP, RMSNorm),
// Gemma 2's four norms a layer, and Mixtral-like mixtures of experts (every
// expert a gated MLP, a router per layer); shared experts (Qwen2-MoE,
// DeepSeek) are refused rather than guessed. Sliding-window layers come from
// layer_types, else from sliding_window with the architecture's pattern.
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
	experts := max(c.LocalExperts, c.NumExperts)
	if c.SharedExpertInter > 0 || (strings.Contains(strings.ToLower(c.ModelType), "moe") && experts == 0) {
		return Model{}, fmt.Errorf("config.json: model_type %q is a mixture of experts with shared experts: its parameters cannot be counted from a Mixtral-like shape", c.ModelType)
	}
	if experts > 0 && (c.ExpertsPerToken <= 0 || c.ExpertsPerToken > experts) {
		return Model{}, fmt.Errorf("config.json: %d experts but num_experts_per_tok %d: want between 1 and the number of experts", experts, c.ExpertsPerToken)
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
	} else if strings.HasPrefix(c.ModelType, "gemma") {
		m.TieWordEmbeddings = true // Gemma's config class defaults to tied embeddings
	}
	if c.AttentionBias != nil {
		m.AttentionBias = *c.AttentionBias
	}
	if strings.HasPrefix(c.ModelType, "gemma2") || strings.HasPrefix(c.ModelType, "gemma3") {
		m.NormsPerLayer = 4
	}
	if experts > 0 {
		m.Experts, m.ExpertsPerToken = experts, c.ExpertsPerToken
		if c.MoEIntermediate > 0 && c.MoEIntermediate != c.IntermediateSize {
			m.ExpertIntermediate = c.MoEIntermediate
		}
	}
	m.SlidingWindow, m.SlidingLayers = slidingLayers(c)
	return m, m.validate()
}

// slidingLayers reads which layers use a sliding window: config.json's
// layer_types when present (transformers 4.53 on writes it), else the
// architecture's pattern: Gemma 2 slides on even layers (every other one),
// Gemma 3 on all but every sliding_window_pattern-th, Mistral-like models
// (and Qwen2 only when use_sliding_window is true) on every layer. A window
// at least as long as the trained context changes nothing and is dropped.
func slidingLayers(c hfConfig) (window, layers int) {
	if c.SlidingWindow == nil || *c.SlidingWindow <= 0 {
		return 0, 0
	}
	window = *c.SlidingWindow
	if c.UseSlidingWindow != nil && !*c.UseSlidingWindow {
		return 0, 0
	}
	if c.MaxPosition > 0 && window >= c.MaxPosition {
		return 0, 0
	}
	switch {
	case len(c.LayerTypes) > 0:
		for _, t := range c.LayerTypes {
			if t == "sliding_attention" {
				layers++
			}
		}
	case strings.HasPrefix(c.ModelType, "gemma2"):
		layers = (c.Layers + 1) / 2
	case strings.HasPrefix(c.ModelType, "gemma3") && c.SlidingPattern > 0:
		layers = c.Layers - c.Layers/c.SlidingPattern
	default:
		layers = c.Layers
	}
	if layers == 0 {
		return 0, 0
	}
	return window, layers
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
	if m.KVHeads <= 0 {
		return fmt.Errorf("model %s: %d KV heads: want a positive count", m.Name, m.KVHeads)
	}
	if m.Heads%m.KVHeads != 0 {
		return fmt.Errorf("model %s: %d attention heads are not a multiple of %d KV heads", m.Name, m.Heads, m.KVHeads)
	}
	return nil
}

// ParamCounts splits a model's parameters into the linear layers of its
// blocks (what weight quantisation shrinks) and the rest: embeddings, the
// output head, norms, biases and a mixture of experts' routers, which
// int4/fp8 checkpoints keep in 16 bits. ActiveLinear is the linear
// parameters one token runs through: all of them in a dense model, the
// attention and ExpertsPerToken experts in a mixture of experts.
type ParamCounts struct {
	Linear       int64 `json:"linear"`
	Other        int64 `json:"other"`
	ActiveLinear int64 `json:"active_linear"`
}

// Total is every parameter: what must be resident.
func (p ParamCounts) Total() int64 { return p.Linear + p.Other }

// Active is the parameters one token uses (the model card's "active").
func (p ParamCounts) Active() int64 { return p.ActiveLinear + p.Other }

// MoE reports whether the model is a mixture of experts.
func (m Model) MoE() bool { return m.Experts > 0 }

// expertInter is the MLP width of one expert (or of the dense MLP).
func (m Model) expertInter() int {
	if m.ExpertIntermediate > 0 {
		return m.ExpertIntermediate
	}
	return m.IntermediateSize
}

// Params counts the parameters of a llama-like model from its shape: per
// layer q and o (hidden × heads·head_dim), k and v (hidden × kv_heads·head_dim),
// a gated MLP (3 × hidden × intermediate; in a mixture of experts one per
// expert plus a hidden × experts router) and NormsPerLayer RMSNorm vectors;
// plus the token embedding, the output head unless tied, and the final norm.
func (m Model) Params() ParamCounts {
	h, q, kv := int64(m.HiddenSize), int64(m.Heads*m.HeadDim), int64(m.KVHeads*m.HeadDim)
	inter, l, v := int64(m.expertInter()), int64(m.Layers), int64(m.VocabSize)
	attn := 2*h*q + 2*h*kv
	mlp := 3 * h * inter
	norms := int64(m.NormsPerLayer)
	if norms == 0 {
		norms = 2
	}
	perLayerOther := norms * h
	if m.AttentionBias {
		perLayerOther += q + 2*kv
	}
	mlpAll, mlpActive := mlp, mlp
	if m.MoE() {
		mlpAll, mlpActive = int64(m.Experts)*mlp, int64(m.ExpertsPerToken)*mlp
		perLayerOther += h * int64(m.Experts) // the router
	}
	heads := v * h
	if !m.TieWordEmbeddings {
		heads *= 2
	}
	return ParamCounts{Linear: l * (attn + mlpAll), Other: l*perLayerOther + heads + h, ActiveLinear: l * (attn + mlpActive)}
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
	// Mistral-7B-v0.1 slides a 4,096-token window on every layer (v0.3,
	// the Mistral-7B preset, dropped the window and grew the vocabulary).
	{Name: "Mistral-7B-v0.1", HiddenSize: 4096, Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128,
		IntermediateSize: 14336, VocabSize: 32000, MaxContext: 32768, SlidingWindow: 4096, SlidingLayers: 32},
	// Gemma 2 interleaves 4,096-token sliding-window layers with global
	// ones (21 of each), has four norms a layer and a 256-wide head.
	{Name: "Gemma-2-9B", HiddenSize: 3584, Layers: 42, Heads: 16, KVHeads: 8, HeadDim: 256,
		IntermediateSize: 14336, VocabSize: 256000, TieWordEmbeddings: true, MaxContext: 8192,
		NormsPerLayer: 4, SlidingWindow: 4096, SlidingLayers: 21},
	// Mixtral routes each token to 2 of 8 experts: all 8 are resident.
	{Name: "Mixtral-8x7B", HiddenSize: 4096, Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128,
		IntermediateSize: 14336, VocabSize: 32000, MaxContext: 32768, Experts: 8, ExpertsPerToken: 2},
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
		} else if IsGGUF(path) {
			g, err := OpenGGUF(path)
			if err != nil {
				return Model{}, err
			}
			return g.Model, nil
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
