package client

import (
	"slices"
	"testing"

	"github.com/extractbench/extractbench/pipeline/family"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

// TestClient_DetectKind reads each engine family's recorded answers
// (testdata/engines) and names the family from them alone: owned_by where
// the engine writes its name there, else the endpoint only it answers.
func TestClient_DetectKind(t *testing.T) {
	fixture := func(name string) string { return string(pipelinetest.ReadFile(t, "testdata/engines/"+name)) }
	tests := []struct {
		name     string
		routes   map[string]route
		want     string
		evidence string
	}{
		{"vllm", map[string]route{"GET /v1/models": {200, fixture("vllm-models.json")}, "GET /version": {200, fixture("vllm-version.json")}},
			family.VLLM.Kind, `GET /v1/models: owned_by "vllm"`},
		{"sglang", map[string]route{"GET /v1/models": {200, fixture("sglang-models.json")}, "GET /version": {200, `{"version":"0.4.9.post2"}`},
			"GET /get_server_info": {200, fixture("sglang-get_server_info.json")}}, family.SGLang.Kind, `GET /v1/models: owned_by "sglang"`},
		{"sglang without owned_by", map[string]route{"GET /v1/models": {200, fixture("tgi-models.json")}, "GET /version": {200, `{"version":"0.4.9.post2"}`},
			"GET /get_server_info": {200, fixture("sglang-get_server_info.json")}}, family.SGLang.Kind, "GET /get_server_info"},
		{"llamacpp", map[string]route{"GET /v1/models": {200, fixture("llamacpp-models.json")}, "GET /props": {200, fixture("llamacpp-props.json")}},
			family.LlamaCpp.Kind, `GET /v1/models: owned_by "llamacpp"`},
		{"llamacpp without /v1/models", map[string]route{"GET /props": {200, fixture("llamacpp-props.json")}}, family.LlamaCpp.Kind, "GET /props"},
		{"tgi", map[string]route{"GET /v1/models": {200, fixture("tgi-models.json")}, "GET /info": {200, fixture("tgi-info.json")}},
			family.TGI.Kind, "GET /info"},
		{"ollama", map[string]route{"GET /v1/models": {200, fixture("ollama-models.json")}, "GET /api/version": {200, fixture("ollama-api-version.json")}},
			family.Ollama.Kind, "GET /api/version"},
		{"builtin", map[string]route{"GET /v1/models": {200, `{"data":[{"id":"sim-8b","owned_by":"extractbench"}]}`},
			"GET /version": {200, `{"version":"extractbench-builtin dev","engine":"extractbench-builtin","simulated":true}`}}, family.Builtin.Kind, "GET /version"},
		{"transformers", map[string]route{"GET /v1/models": {200, `{"data":[{"id":"m","owned_by":"extractbench"}]}`},
			"GET /version": {200, `{"version":"transformers-4.57.1+torch-2.9.0","transformers":"4.57.1"}`}}, family.Transformers.Kind, "GET /version"},
		{"unknown: a version but no name", map[string]route{"GET /v1/models": {200, `{"data":[{"id":"hostile","object":"model"}]}`},
			"GET /version": {200, `{"version":"hostile-1"}`}, "GET /props": {200, `"not an object"`}}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := engineMux(t, tt.routes)
			d, err := New(Config{BaseURL: srv.URL}).DetectKind(pipelinetest.Context(t))
			if err != nil {
				t.Fatal(err)
			}
			if d.Kind != tt.want || tt.evidence != "" && d.Evidence != tt.evidence {
				t.Errorf("DetectKind() = %q (%s), want %q (%s)", d.Kind, d.Evidence, tt.want, tt.evidence)
			}
			if tt.want == "" && d.Evidence == "" {
				t.Error("an unknown kind says nothing of what was asked")
			}
		})
	}
	t.Run("models listed", func(t *testing.T) {
		srv := engineMux(t, map[string]route{"GET /v1/models": {200, fixture("vllm-models.json")}})
		d, err := New(Config{BaseURL: srv.URL}).DetectKind(pipelinetest.Context(t))
		if err != nil || !slices.Equal(d.Models, []string{"Qwen/Qwen2.5-7B-Instruct"}) {
			t.Errorf("DetectKind() = %+v, %v; want the listed model", d, err)
		}
	})
	t.Run("nothing answers", func(t *testing.T) {
		srv := engineMux(t, nil)
		srv.Close()
		if d, err := New(Config{BaseURL: srv.URL}).DetectKind(pipelinetest.Context(t)); err == nil {
			t.Errorf("DetectKind() on a closed port = %+v, want an error", d)
		}
	})
	t.Run("an error status", func(t *testing.T) {
		srv := engineMux(t, map[string]route{"GET /v1/models": {500, "boom"}})
		if d, err := New(Config{BaseURL: srv.URL}).DetectKind(pipelinetest.Context(t)); err == nil {
			t.Errorf("DetectKind() on HTTP 500 = %+v, want an error", d)
		}
	})
}
