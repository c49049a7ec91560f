package client

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

// engineMux answers the given paths with status and body; others 404.
func engineMux(t *testing.T, routes map[string]struct {
	status int
	body   string
}) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt, ok := routes[r.Method+" "+r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(rt.status)
		w.Write([]byte(rt.body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

type route = struct {
	status int
	body   string
}

func TestClient_Health(t *testing.T) {
	tests := []struct {
		name    string
		routes  map[string]route
		wantErr string
	}{
		{"health", map[string]route{"GET /health": {200, ""}}, ""},
		{"models fallback", map[string]route{"GET /v1/models": {200, `{"data":[]}`}}, ""},
		{"loading", map[string]route{"GET /health": {503, `{"error":"Model is loading"}`}}, "Model is loading"},
		{"nothing", map[string]route{}, "endpoint not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := New(Config{BaseURL: engineMux(t, tt.routes).URL}).Health(pipelinetest.Context(t))
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Health() = %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestClient_ModelsAndDescribe(t *testing.T) {
	srv := engineMux(t, map[string]route{
		"GET /v1/models": {200, `{"object":"list","data":[{"id":"Qwen/Qwen2.5-7B-Instruct","object":"model","owned_by":"vllm","max_model_len":32768},{"id":"lora-a","object":"model"}]}`},
		"GET /version":   {200, `{"version":"0.11.0"}`},
	})
	c := New(Config{BaseURL: srv.URL})
	got, err := c.Models(pipelinetest.Context(t))
	if want := []string{"Qwen/Qwen2.5-7B-Instruct", "lora-a"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Models() = %v, %v, want %v", got, err, want)
	}
	rep := c.Describe(pipelinetest.Context(t))
	if rep.Version != "0.11.0" || rep.ContextWindow != 32768 || len(rep.ServedModels) != 2 {
		t.Errorf("Describe() = %+v", rep)
	}

	tgi := engineMux(t, map[string]route{
		"GET /info": {200, `{"model_id":"mistralai/Mistral-7B-Instruct-v0.3","max_total_tokens":8192,"version":"3.0.1"}`},
	})
	rep = New(Config{BaseURL: tgi.URL}).Describe(pipelinetest.Context(t))
	if rep.Version != "3.0.1" || rep.ContextWindow != 8192 || rep.ServedModels != nil {
		t.Errorf("Describe(TGI) = %+v", rep)
	}
}

// TestClient_DescribeSimulated: an engine that says it is simulated (the
// built-in engine's /version, also an earlier build's version name) is
// reported so, with the card it models; another engine's fields of the same
// names and other types neither make it simulated nor lose its version.
func TestClient_DescribeSimulated(t *testing.T) {
	tests := []struct {
		name, answer string
		want         EngineReport
	}{
		{"builtin", `{"version":"extractbench-builtin 0.1.0","engine":"extractbench-builtin","simulated":true,"model":"sim-8b","gpu":{"name":"NVIDIA L4 (simulated)","memory_total_bytes":24}}`,
			EngineReport{Version: "extractbench-builtin 0.1.0", Simulated: true, ModelledGPU: ModelledGPU{Name: "NVIDIA L4 (simulated)", MemoryTotalBytes: 24}}},
		{"earlier builtin", `{"version":"extractbench-builtin/1"}`, EngineReport{Version: "extractbench-builtin/1", Simulated: true}},
		{"vllm", `{"version":"0.11.0"}`, EngineReport{Version: "0.11.0"}},
		{"other types", `{"version":"1.2.3","simulated":"no","gpu":"H100"}`, EngineReport{Version: "1.2.3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := New(Config{BaseURL: engineMux(t, map[string]route{"GET /version": {200, tt.answer}}).URL}).Describe(pipelinetest.Context(t))
			if rep.Version != tt.want.Version || rep.Simulated != tt.want.Simulated || rep.ModelledGPU != tt.want.ModelledGPU {
				t.Errorf("Describe() = version %q, simulated %v, GPU %+v; want %q, %v, %+v",
					rep.Version, rep.Simulated, rep.ModelledGPU, tt.want.Version, tt.want.Simulated, tt.want.ModelledGPU)
			}
		})
	}
}

func TestClient_ResetPeaks(t *testing.T) {
	tests := []struct {
		name          string
		routes        map[string]route
		wantSupported bool
		wantErr       bool
	}{
		{"supported", map[string]route{"POST /reset_peaks": {200, `{"ok":true}`}}, true, false},
		{"unsupported", map[string]route{}, false, false},
		{"failing", map[string]route{"POST /reset_peaks": {500, "boom"}}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := New(Config{BaseURL: engineMux(t, tt.routes).URL}).ResetPeaks(pipelinetest.Context(t))
			if got != tt.wantSupported || (err != nil) != tt.wantErr {
				t.Errorf("ResetPeaks() = %v, %v, want %v, error %v", got, err, tt.wantSupported, tt.wantErr)
			}
		})
	}
}

// TestClient_DescribeFamilies reads each engine family's recorded answers
// (testdata/engines): its version endpoint, its model list, and what is
// kept of its self-description.
func TestClient_DescribeFamilies(t *testing.T) {
	tests := []struct {
		family, versionPath, versionFile string
		wantVersion                      string
		wantContext                      int
		wantModel                        string
	}{
		{"vllm", "/version", "vllm-version.json", "0.11.0", 32768, "Qwen/Qwen2.5-7B-Instruct"},
		{"sglang", "/get_server_info", "sglang-get_server_info.json", "0.4.9.post2", 32768, "Qwen/Qwen2.5-7B-Instruct"},
		{"tgi", "/info", "tgi-info.json", "3.0.1", 8192, "Qwen/Qwen2.5-7B-Instruct"},
		{"llamacpp", "/props", "llamacpp-props.json", "b4567-1a2b3c4d", 8192, "/models/qwen2.5-7b-instruct-q4_k_m.gguf"},
		{"ollama", "/api/version", "ollama-api-version.json", "0.5.7", 0, "qwen2.5:7b"},
	}
	for _, tt := range tests {
		t.Run(tt.family, func(t *testing.T) {
			srv := engineMux(t, map[string]route{
				"GET /v1/models":        {200, string(pipelinetest.ReadFile(t, "testdata/engines/"+tt.family+"-models.json"))},
				"GET " + tt.versionPath: {200, string(pipelinetest.ReadFile(t, "testdata/engines/"+tt.versionFile))},
			})
			rep := New(Config{BaseURL: srv.URL}).Describe(pipelinetest.Context(t))
			if rep.Family.Kind != tt.family {
				t.Errorf("Describe() family %q (%s), want %q", rep.Family.Kind, rep.FamilyEvidence, tt.family)
			}
			if rep.Version != tt.wantVersion || rep.VersionSource != tt.versionPath || rep.ContextWindow != tt.wantContext {
				t.Errorf("Describe() = version %q from %q, context %d; want %q from %q, context %d",
					rep.Version, rep.VersionSource, rep.ContextWindow, tt.wantVersion, tt.versionPath, tt.wantContext)
			}
			if !slices.Equal(rep.ServedModels, []string{tt.wantModel}) {
				t.Errorf("served models = %v, want [%s]", rep.ServedModels, tt.wantModel)
			}
			about := string(rep.About)
			if !strings.Contains(about, tt.wantVersion) {
				t.Errorf("About does not keep the version: %s", about)
			}
			if strings.Contains(about, "sk-sglang-secret") || strings.Contains(about, "api_key") {
				t.Errorf("About keeps a secret: %s", about)
			}
			if len(about) > 4096 {
				t.Errorf("About is %d bytes: long strings (chat templates) must be left out", len(about))
			}
		})
	}
}
