package family_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin"
	"github.com/extractbench/extractbench/pipeline/family"
)

// fixture is a hand-written engine answer of pipeline/client's testdata
// (its README says where each comes from).
func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "client", "testdata", "engines", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// engine answers GET and POST paths with 200 and a body; others 404.
type engine map[string]string

func (e engine) Ask(_ context.Context, method, path string) (int, []byte, error) {
	if b, ok := e[method+" "+path]; ok {
		return 200, []byte(b), nil
	}
	return 404, []byte("404 page not found"), nil
}

func (e engine) Clean(s string) string { return strings.ReplaceAll(s, "sk-secret", "[redacted]") }

// TestFamily_Identity reads each family's identity from its endpoints'
// answers: the version, the model and what else tells it apart.
func TestFamily_Identity(t *testing.T) {
	tests := []struct {
		fam     *family.Family
		answers engine
		want    family.Identity
	}{
		{family.VLLM, engine{"GET /version": fixture(t, "vllm-version.json")}, family.Identity{Version: "0.11.0", Source: "/version"}},
		{family.SGLang, engine{"GET /get_server_info": fixture(t, "sglang-get_server_info.json")},
			family.Identity{Version: "0.4.9.post2", Source: "/get_server_info", Model: "Qwen/Qwen2.5-7B-Instruct"}},
		{family.TGI, engine{"GET /info": fixture(t, "tgi-info.json")}, family.Identity{Version: "3.0.1", Source: "/info", Model: "Qwen/Qwen2.5-7B-Instruct"}},
		{family.LlamaCpp, engine{"GET /props": fixture(t, "llamacpp-props.json")},
			family.Identity{Version: "b4567-1a2b3c4d", Source: "/props", Model: "/models/qwen2.5-7b-instruct-q4_k_m.gguf"}},
		{family.Ollama, engine{"GET /api/version": fixture(t, "ollama-api-version.json"), "GET /api/ps": fixture(t, "ollama-api-ps.json")},
			family.Identity{Version: "0.5.7", Source: "/api/version", Model: "qwen2.5:7b,nomic-embed-text:latest",
				Extra: map[string]string{"digest": "845dbda0ea48ed749caafd9e6037047aa19acfcfd82e704d7ca97d631a0b697e,0a109f422b47e3a30ba2b10eca18548e944e8a23073ee3f3e947efcf3c45e59f",
					"context_length": "4096,2048", "quantization_level": "Q4_K_M,F16"}}},
		{family.Ollama, engine{"GET /api/version": fixture(t, "ollama-api-version.json"), "GET /api/ps": `{"models":[]}`},
			family.Identity{Version: "0.5.7", Source: "/api/version"}}, // every model unloaded after keep_alive
		{family.Builtin, engine{"GET /version": `{"version":"extractbench-builtin 0.1.0","engine":"extractbench-builtin","simulated":true,"model":"sim-8b"}`},
			family.Identity{Version: "extractbench-builtin 0.1.0", Source: "/version", Model: "sim-8b"}},
		{family.Transformers, engine{"GET /version": `{"version":"transformers-4.57.1+torch-2.9.0","served_model":"extract-llama-15m","shape":"15m"}`},
			family.Identity{Version: "transformers-4.57.1+torch-2.9.0", Source: "/version", Model: "extract-llama-15m"}},
		{family.Generic, engine{"GET /info": fixture(t, "tgi-info.json")}, family.Identity{Version: "3.0.1", Source: "/info"}},
	}
	for _, tt := range tests {
		t.Run(tt.fam.Label(), func(t *testing.T) {
			got, err := tt.fam.Identity(context.Background(), tt.answers)
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != tt.want.Version || got.Source != tt.want.Source || got.Model != tt.want.Model {
				t.Errorf("Identity() = %+v, want %+v", got, tt.want)
			}
			if tt.want.Extra != nil && !maps.Equal(got.Extra, tt.want.Extra) {
				t.Errorf("Extra = %v, want %v", got.Extra, tt.want.Extra)
			}
		})
	}
	t.Run("secrets and silence", func(t *testing.T) {
		id, err := family.SGLang.Identity(context.Background(), engine{"GET /get_server_info": fixture(t, "sglang-get_server_info.json")})
		if err != nil || strings.Contains(strings.Join(slicesOf(id.Extra), " "), "sk-") {
			t.Errorf("Identity() = %+v, %v: want no secret", id, err)
		}
		for _, f := range append(family.All(), family.Generic) {
			if _, err := f.Identity(context.Background(), engine{}); err == nil {
				t.Errorf("%s: Identity of an engine that answers nothing = nil error", f.Label())
			}
		}
	})
}

func slicesOf(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

// TestFamily_MemoryEvidence: each family knows the out-of-memory texts of
// the layers under it and its own, and a text that is not about memory
// is evidence for none.
func TestFamily_MemoryEvidence(t *testing.T) {
	tests := []struct {
		text string
		fam  *family.Family
		want bool
	}{
		{"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB", family.VLLM, true},
		{"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB", family.Generic, true},
		{"ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`", family.VLLM, true},
		{"RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.", family.SGLang, true},
		{"ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: out of memory", family.LlamaCpp, true},
		{"llama_model_load: error loading model: unable to allocate CUDA0 buffer", family.LlamaCpp, true},
		{`{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}`, family.LlamaCpp, true},
		{fixture(t, "ollama-error-api.json"), family.Ollama, true},
		{fixture(t, "ollama-error-api.json"), family.VLLM, false}, // Ollama's own text
		{fixture(t, "ollama-error-v1.json"), family.Ollama, false},
		{"Input validation error: `inputs` must have less than 4096 tokens", family.TGI, false},
	}
	for _, tt := range tests {
		if got := tt.fam.MemoryText(tt.text) != ""; got != tt.want {
			t.Errorf("%s.MemoryText(%q) matched %v, want %v", tt.fam.Label(), tt.text, got, tt.want)
		}
	}
}

// TestOllama_Telemetry reads /api/ps into the memory its models hold: the
// one on the device counts its size_vram, the one in system memory alone
// (size_vram omitted) 0 there; no model is 0 held; a model without its
// size, or an answer that is not JSON, gives nothing.
func TestOllama_Telemetry(t *testing.T) {
	read := family.Ollama.Telemetry.JSON
	got, err := read([]byte(fixture(t, "ollama-api-ps.json")))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{extractbench.MetricEngineVRAM: 5333539264, extractbench.MetricEngineMemory: 6654289920 + 849195008}
	if len(got) != len(want) {
		t.Fatalf("readings %+v, want %v", got, want)
	}
	for _, r := range got {
		if r.Value != want[r.Metric] || !strings.HasPrefix(r.Source, "/api/ps ") {
			t.Errorf("%s = %v from %q, want %v", r.Metric, r.Value, r.Source, want[r.Metric])
		}
	}
	if got, _ := read([]byte(`{"models":[]}`)); len(got) != 2 || got[0].Value != 0 || got[1].Value != 0 {
		t.Errorf("no model loaded: %+v, want both 0", got)
	}
	if got, _ := read([]byte(`{"models":[{"name":"m","size_vram":5}]}`)); len(got) != 0 {
		t.Errorf("a model without its size: %+v, want nothing", got)
	}
	if got, _ := read([]byte(`{"models":[{"name":"m","size":-5,"size_vram":5},{"name":"n","size":9}]}`)); len(got) != 2 || got[1].Value >= 0 {
		t.Errorf("a negative size: %+v, want it kept, for telemetry to refuse", got)
	}
	if _, err := read([]byte("<html>")); err == nil {
		t.Error("an answer that is not JSON read without an error")
	}
	if family.Ollama.CanReset() || !strings.Contains(family.Ollama.Reset.Note, "keep_alive 0") {
		t.Errorf("Ollama reset %+v: want none, saying why keep_alive 0 is not one", family.Ollama.Reset)
	}
	if len(family.Ollama.Quirks.CachedTokens) != 0 || !strings.Contains(family.Ollama.Quirks.KeepAlive, "OLLAMA_KEEP_ALIVE") {
		t.Errorf("Ollama quirks %+v: want no cached-token field and its keep_alive", family.Ollama.Quirks)
	}
}

// TestBuiltin_AgreesWithTheEngine: the family's view of the built-in engine
// is what engines/builtin serves.
func TestBuiltin_AgreesWithTheEngine(t *testing.T) {
	if family.BuiltinCacheResetPath != builtin.CacheResetPath {
		t.Errorf("reset path %q, the engine serves %q", family.BuiltinCacheResetPath, builtin.CacheResetPath)
	}
	for _, v := range []string{builtin.Name + " 1.0", builtin.Name + "/1"} {
		if !family.Builtin.Probes[0].Match(map[string]json.RawMessage{"version": json.RawMessage(`"` + v + `"`)}) {
			t.Errorf("the probe does not know the built-in engine's version %q", v)
		}
	}
}
