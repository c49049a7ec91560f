package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
	"github.com/extractbench/extractbench/results"
)

// vllmLike is a local engine that answers like vLLM: /health, /version,
// /v1/models and a streamed chat answer.
func vllmLike(t *testing.T, version string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, `{"version":%q}`, version) })
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"m","object":"model","max_model_len":8192}]}`)
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{}\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// envProtocol writes a one-variant protocol over 3 documents for the engine at url.
func envProtocol(t *testing.T, dir, url, engineExtra string) string {
	t.Helper()
	c, err := corpus.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	b, err := corpus.EncodeDocuments(c.Documents[:3])
	if err != nil {
		t.Fatal(err)
	}
	docs := filepath.Join(dir, "docs.jsonl")
	if err := os.WriteFile(docs, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p := fmt.Sprintf(`name: env
corpus: %s
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 16, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
variants:
  - name: v
    engine: {url: %q, model: m%s}
`, docs, url, engineExtra)
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func readManifest(t *testing.T, out string) extractbench.Manifest {
	t.Helper()
	s, err := results.Open(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run, err := s.LatestRun(context.Background())
	if err != nil || run == nil {
		t.Fatalf("latest run: %v", err)
	}
	var m extractbench.Manifest
	if err := json.Unmarshal(run.Manifest, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRun_ResumeRefusesChangedEnvironment: the engine version, GPU, driver
// and CUDA of a local engine are pinned at its first start (environment
// hash); a resume on another driver is refused.
func TestRun_ResumeRefusesChangedEnvironment(t *testing.T) {
	plain := string(pipelinetest.ReadFile(t, "telemetry/testdata/nvidia-smi/h200-plain.txt"))
	pipelinetest.FakeSMI(t, "NVIDIA H200, 1024, 143771\n", "NVIDIA H200, 143771, 580.159.04\n", plain)
	dir := t.TempDir()
	proto := envProtocol(t, dir, vllmLike(t, "0.11.0").URL, "")
	out := filepath.Join(dir, "out")
	if _, err := Run(context.Background(), Options{ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	vm := readManifest(t, out).Variants[0]
	if vm.Engine.Version != "0.11.0" || vm.Engine.VersionSource != "/version" || vm.GPU.Driver != "580.159.04" || vm.GPU.CUDA != "13.0" || vm.Environment == "" {
		t.Fatalf("pinned environment = engine %q from %q, GPU %+v, hash %q", vm.Engine.Version, vm.Engine.VersionSource, vm.GPU, vm.Environment)
	}

	pipelinetest.FakeSMI(t, "NVIDIA H200, 1024, 143771\n", "NVIDIA H200, 143771, 590.44.01\n", plain)
	_, err := Run(context.Background(), Options{OutDir: out, Resume: true, Quiet: true})
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `driver "580.159.04", now "590.44.01"`) {
		t.Fatalf("resume on another driver: err = %v, want a ConfigError naming the driver", err)
	}
}

// TestRun_RemoteEngineGetsNoHostGPU: for an engine the protocol says is not
// on this machine, this machine's nvidia-smi is neither recorded as its GPU
// nor sampled during passes; engine.gpu names its card.
func TestRun_RemoteEngineGetsNoHostGPU(t *testing.T) {
	pipelinetest.FakeSMI(t, "NVIDIA H200, 1024, 143771\n", "NVIDIA H200, 143771, 580.159.04\n", string(pipelinetest.ReadFile(t, "telemetry/testdata/nvidia-smi/h200-plain.txt")))
	dir := t.TempDir()
	proto := envProtocol(t, dir, vllmLike(t, "0.11.0").URL, ", local: false, gpu: NVIDIA L4")
	out := filepath.Join(dir, "out")
	if _, err := Run(context.Background(), Options{ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	g := readManifest(t, out).Variants[0].GPU
	if g != (extractbench.GPUInfoJSON{Name: "NVIDIA L4", Source: "protocol"}) {
		t.Errorf("remote engine's GPU = %+v, want only the protocol's name", g)
	}
	s, err := results.Open(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run, err := s.LatestRun(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ps, err := s.Passes(context.Background(), run.RunID)
	if err != nil || len(ps) == 0 {
		t.Fatalf("passes: %v (%d)", err, len(ps))
	}
	for _, p := range ps {
		if p.PeakGPUMemBytes != nil {
			t.Errorf("pass %d sampled this machine's GPU memory for a remote engine", p.Level)
		}
	}
}
