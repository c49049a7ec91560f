package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// TestWrite_CPUEngine is issue 24's report of llama.cpp on the CPU, on the
// committed run itself (reference/cpu/llamacpp-extract-llama-15m-h384, the first model's):
// the engine ran on this machine, which has no GPU, with engine.params
// given. The report said "GPU and memory: (from unknown)", `CHECK: card ""
// is not in the catalog` and "MFU needs the model's parameter count"; it
// says "CPU engine: no GPU" and uses the parameters (the model's FLOP rate).
func TestWrite_CPUEngine(t *testing.T) {
	if _, err := exec.LookPath("xz"); err != nil {
		t.Skip("xz not installed: cannot read the committed reference")
	}
	src := filepath.Join("..", "..", "reference", "cpu", "llamacpp-extract-llama-15m-h384", results.DBNameXZ)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, results.DBNameXZ), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, filepath.Join(dir, "report.md"))
	for _, bad := range []string{"(from unknown)", `card "" is not in the catalog`, "MFU needs the model's parameter count", "unrecorded GPU"} {
		if strings.Contains(md, bad) {
			t.Errorf("report.md says %q of a CPU engine whose parameters were given", bad)
		}
	}
	for _, want := range []string{"**GPU and memory:** CPU engine: no GPU\n", "CPU engine: no GPU: no card, driver or CUDA to check; engine b1-de3ff81",
		"extract-llama-15m on the CPU (no GPU)", "(extract-llama-15m on CPU (no GPU)) | PASS |",
		"2 × 14,711,040 parameters × total tokens/s", " GFLOP/s |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// TestCPUEngine: only an engine on this machine with no card found and
// none named is a CPU engine; a remote engine of unknown card is not.
func TestCPUEngine(t *testing.T) {
	vm := func(url string, started bool, g extractbench.GPUInfoJSON) extractbench.VariantManifest {
		return extractbench.VariantManifest{Engine: extractbench.EngineInfo{URL: url, Started: started}, GPU: g}
	}
	unknown := extractbench.GPUInfoJSON{Source: "unknown"}
	tests := []struct {
		name string
		vm   extractbench.VariantManifest
		want bool
	}{
		{"started, no nvidia-smi", vm("http://127.0.0.1:8021", true, unknown), true},
		{"loopback, not started", vm("http://localhost:8021", false, unknown), true},
		{"remote, card unknown", vm("http://10.0.0.5:8000", false, unknown), false},
		{"started, nvidia-smi", vm("http://127.0.0.1:8000", true, extractbench.GPUInfoJSON{Name: "NVIDIA H200", Source: "nvidia-smi"}), false},
		{"card named by the protocol", vm("http://127.0.0.1:8000", true, extractbench.GPUInfoJSON{Name: "NVIDIA H200", Source: "protocol"}), false},
	}
	for _, tt := range tests {
		if got := cpuEngine(tt.vm); got != tt.want {
			t.Errorf("%s: cpuEngine = %v, want %v", tt.name, got, tt.want)
		}
	}
}
