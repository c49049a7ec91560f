package pipeline

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/extractbench/extractbench/pipeline/pipelinetest"
	"github.com/extractbench/extractbench/results"
)

// versioned is a vLLM-like engine whose /version answers what version
// holds at the time of asking.
func versioned(t *testing.T, version *atomic.Value) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, `{"version":%q}`, version.Load()) })
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

// dirHashes is every file under dir by relative path, with its SHA-256.
func dirHashes(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = sha256.Sum256(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRun_RefusedResumeWritesNothing is issue 40 item 4: -resume of a
// complete run whose engine changed (its version, its driver) is refused
// (a ConfigError: exit 2) and leaves every file of the results directory
// byte for byte as it was, none added. The old resume refused it only
// when the variant's engine was pinned, after recording the resumption:
// the run's status became failed, a variant_failed event was added and
// the exports were rewritten, so a finished PASS read ERROR.
func TestRun_RefusedResumeWritesNothing(t *testing.T) {
	plain := string(pipelinetest.ReadFile(t, "telemetry/testdata/nvidia-smi/h200-plain.txt"))
	const driver = "NVIDIA H200, 143771, 580.159.04\n"
	for _, tc := range []struct {
		name    string
		version string // the engine's version at the resume
		driver  string // nvidia-smi's answer at the resume
		want    string
	}{
		{name: "engine version", version: "0.12.0", driver: driver, want: `engine version "0.11.0", now "0.12.0"`},
		{name: "driver", version: "0.11.0", driver: "NVIDIA H200, 143771, 590.44.01\n", want: `driver "580.159.04", now "590.44.01"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pipelinetest.FakeSMI(t, "NVIDIA H200, 1024, 143771\n", driver, plain)
			var version atomic.Value
			version.Store("0.11.0")
			dir := t.TempDir()
			proto := envProtocol(t, dir, versioned(t, &version).URL, "")
			out := filepath.Join(dir, "out")
			sum, err := Run(context.Background(), Options{ProtocolPath: proto, OutDir: out, Quiet: true})
			if err != nil || sum.Status != results.RunComplete {
				t.Fatalf("first run: %v (status %v)", err, sum)
			}
			before := dirHashes(t, out)

			version.Store(tc.version)
			pipelinetest.FakeSMI(t, "NVIDIA H200, 1024, 143771\n", tc.driver, plain)
			_, err = Run(context.Background(), Options{OutDir: out, Resume: true, Quiet: true})
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.ExitCode() != 2 || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("resume: err = %v, want a ConfigError (exit 2) naming %s", err, tc.want)
			}
			after := dirHashes(t, out)
			if got, want := slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before)); !slices.Equal(got, want) {
				t.Errorf("files after the refused resume %v, want %v", got, want)
			}
			for name, h := range before {
				if after[name] != h {
					t.Errorf("%s changed by the refused resume", name)
				}
			}
			data, err := results.LoadRun(context.Background(), out)
			if err != nil {
				t.Fatal(err)
			}
			if data.Run.Status != results.RunComplete || !data.Outcomes()[0].Passed() {
				t.Errorf("after the refused resume: status %s, variant %s; want complete and PASS", data.Run.Status, data.Outcomes()[0].State)
			}
		})
	}
}
