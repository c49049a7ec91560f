package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/client"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
	"github.com/extractbench/extractbench/results"
)

// llamaCppLike is a llama-server answering /props and /v1/models as the
// real one did for the GGUF file *gguf names (q8_0, bf16, q4_0: the
// captures in client/testdata/llamacpp, served name extract-llama-15m),
// and chat with a short answer.
func llamaCppLike(t *testing.T, gguf *atomic.Value) *httptest.Server {
	t.Helper()
	capture := func(name string) []byte {
		return pipelinetest.ReadFile(t, filepath.Join("client", "testdata", "llamacpp", name))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"status":"ok"}`) })
	mux.HandleFunc("/props", func(w http.ResponseWriter, r *http.Request) {
		w.Write(capture("props-" + gguf.Load().(string) + ".json"))
	})
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		w.Write(capture("v1-models-" + gguf.Load().(string) + ".json"))
	})
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{}\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// describeGGUF is what engine.pin makes of the llama.cpp server serving gguf.
func describeGGUF(t *testing.T, gguf string) extractbench.VariantManifest {
	t.Helper()
	var v atomic.Value
	v.Store(gguf)
	info := client.New(client.Config{BaseURL: llamaCppLike(t, &v).URL, Model: "extract-llama-15m"}).Describe(context.Background())
	vm := extractbench.VariantManifest{Name: "v", Engine: extractbench.EngineInfo{Kind: "llamacpp", Model: "extract-llama-15m",
		Version: info.Version, ServedModels: info.ServedModels, File: modelFile(info.File)}}
	vm.Environment = EnvironmentHash(vm)
	return vm
}

// TestEnvironmentHash_ServedFile is item 2 of the llama.cpp issue: BF16,
// Q8_0 and Q4_0 files of one model served under one alias by one build
// report the same version and served name, so their environments hashed
// alike and a resume could not tell them apart. The served file's type,
// bytes and parameters (what llama.cpp's /v1/models and /props say of it)
// are facts of the environment.
func TestEnvironmentHash_ServedFile(t *testing.T) {
	q8, bf16, q4 := describeGGUF(t, "q8_0"), describeGGUF(t, "bf16"), describeGGUF(t, "q4_0")
	for _, vm := range []extractbench.VariantManifest{q8, bf16, q4} {
		if vm.Engine.Version != "b1-de3ff81" || strings.Join(vm.Engine.ServedModels, ",") != "extract-llama-15m" {
			t.Fatalf("the captures should differ only in their file: version %q, served %v", vm.Engine.Version, vm.Engine.ServedModels)
		}
	}
	if f := q8.Engine.File; f == nil || *f != (extractbench.ModelFile{Format: "Q8_0", Bytes: 15649656, Params: 14711040}) {
		t.Errorf("Q8_0 file = %+v, want its type, bytes and parameters as /v1/models says them", f)
	}
	if q8.Environment == bf16.Environment || q8.Environment == q4.Environment || bf16.Environment == q4.Environment {
		t.Errorf("environments Q8_0 %.12s, BF16 %.12s, Q4_0 %.12s: two files share one", q8.Environment, bf16.Environment, q4.Environment)
	}
	// Files differing only in their type (the same bytes and parameters)
	// are still two environments.
	sameSize := q8
	sameSize.Engine.File = &extractbench.ModelFile{Format: "Q4_K - Medium", Bytes: q8.Engine.File.Bytes, Params: q8.Engine.File.Params}
	if EnvironmentHash(sameSize) == q8.Environment {
		t.Error("two files differing only in their type hash alike")
	}
	if diff := environmentDiff(q8, bf16); !strings.Contains(diff, `served file type "Q8_0", now "BF16"`) || !strings.Contains(diff, `served file bytes "15649656", now "29435136"`) {
		t.Errorf("environmentDiff(Q8_0, BF16) = %q, want the type and the bytes named", diff)
	}
	// A manifest pinned before the file was recorded resumes on the same engine.
	old := q8
	old.Engine.File = nil
	if diff := environmentDiff(old, q8); diff != "" {
		t.Errorf("pinned without a file: diff %q, want none", diff)
	}
}

// TestEnvironmentHash_ReferencesUnchanged: an engine that says nothing of
// its file (the transformers engine, vLLM, the built-in one) hashes as it
// did: every committed reference run's pinned environment is what
// EnvironmentHash gives its manifest today.
func TestEnvironmentHash_ReferencesUnchanged(t *testing.T) {
	if _, err := exec.LookPath("xz"); err != nil {
		t.Skip("xz not installed: cannot read the committed references")
	}
	dbs, err := filepath.Glob(filepath.Join("..", "reference", "*", "*", "results.db.xz"))
	if err != nil || len(dbs) == 0 {
		t.Fatalf("no committed references: %v", err)
	}
	checked := 0
	for _, xzPath := range dbs {
		b, err := exec.Command("xz", "-dc", xzPath).Output()
		if err != nil {
			t.Fatalf("decompress %s: %v", xzPath, err)
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, results.DBName), b, 0o644); err != nil {
			t.Fatal(err)
		}
		run, err := results.LoadRun(context.Background(), dir)
		if err != nil {
			t.Fatalf("%s: %v", xzPath, err)
		}
		for _, vm := range run.Manifest.Variants {
			if vm.Environment == "" {
				continue // pinned before environments were
			}
			checked++
			// A reference pinned before engines described their served file has
			// none, and its hash must not have moved; one pinned since (the
			// llama.cpp runs) has one, and its hash covers it.
			if got := EnvironmentHash(vm); got != vm.Environment {
				t.Errorf("%s: variant %s (%s %s): environment %.12s now, %.12s pinned", xzPath, vm.Name, vm.Engine.Kind, vm.Engine.Version, got, vm.Environment)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no reference variant has a pinned environment to check")
	}
}

// TestRun_ResumeRefusesAnotherGGUF: a run pinned on the Q8_0 file refuses
// to resume when the same alias and build serve the BF16 file, naming the
// file's facts; so does a variant whose replicas serve different files.
func TestRun_ResumeRefusesAnotherGGUF(t *testing.T) {
	var gguf atomic.Value
	gguf.Store("q8_0")
	srv := llamaCppLike(t, &gguf)
	dir := t.TempDir()
	proto := envProtocol(t, dir, srv.URL, "")
	if err := os.WriteFile(proto, []byte(strings.Replace(string(pipelinetest.ReadFile(t, proto)), "model: m", "model: extract-llama-15m", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if _, err := Run(context.Background(), Options{ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	if f := readManifest(t, out).Variants[0].Engine.File; f == nil || f.Format != "Q8_0" {
		t.Fatalf("pinned file = %+v, want Q8_0's", f)
	}
	gguf.Store("bf16")
	_, err := Run(context.Background(), Options{OutDir: out, Resume: true, Quiet: true})
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `served file type "Q8_0", now "BF16"`) {
		t.Fatalf("resume on the BF16 file: err = %v, want a ConfigError naming the file's type", err)
	}

	var other atomic.Value
	other.Store("q4_0")
	two := filepath.Join(t.TempDir(), "p.yaml")
	replicas := fmt.Sprintf("urls: [%q, %q]", srv.URL, llamaCppLike(t, &other).URL)
	if err := os.WriteFile(two, []byte(strings.Replace(string(pipelinetest.ReadFile(t, proto)), fmt.Sprintf("url: %q", srv.URL), replicas, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Options{ProtocolPath: two, OutDir: filepath.Join(t.TempDir(), "out"), Quiet: true})
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `served file (type "Q4_0", 9358200 bytes, 14711040 parameters), not (type "BF16"`) {
		t.Fatalf("replicas serving two files: err = %v, want a ConfigError naming both", err)
	}
}
