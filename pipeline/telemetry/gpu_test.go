package telemetry

import (
	"strings"
	"testing"

	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

func TestGPUInfo(t *testing.T) {
	pipelinetest.FakeSMI(t, "",
		string(pipelinetest.ReadFile(t, "testdata/nvidia-smi/h200-info.csv")),
		string(pipelinetest.ReadFile(t, "testdata/nvidia-smi/h200-plain.txt")))
	got, ok := GPUInfo(pipelinetest.Context(t))
	want := GPU{Name: "NVIDIA H200", MemoryTotalBytes: 143771 * mib, Driver: "580.159.04", CUDA: "13.0", Count: 1}
	if !ok || got != want {
		t.Errorf("GPUInfo() = %+v, %v, want %+v, true", got, ok, want)
	}
}

func TestGPUInfo_NoNvidiaSMI(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if g, ok := GPUInfo(pipelinetest.Context(t)); ok {
		t.Errorf("GPUInfo() = %+v, true, want false", g)
	}
}

func TestParseSMIMemory(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		used, total int64
		wantErr     bool
	}{
		{"h200 capture", string(pipelinetest.ReadFile(t, "testdata/nvidia-smi/h200-memory.csv")), 0, 143771 * mib, false},
		{"two cards", "NVIDIA L4, 100, 23034\nNVIDIA L4, 50, 23034\n", 150 * mib, 46068 * mib, false},
		{"crlf", "NVIDIA A100-SXM4-80GB, 10, 81920\r\n", 10 * mib, 81920 * mib, false},
		{"not available", "NVIDIA H200, [N/A], 143771\n", 0, 0, true},
		{"empty", "", 0, 0, true},
		{"wrong fields", "NVIDIA H200, 1\n", 0, 0, true},
		{"negative", "X, -1, 2\n", 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			used, total, err := parseSMIMemory([]byte(tt.in))
			if (err != nil) != tt.wantErr || used != tt.used || total != tt.total {
				t.Errorf("parseSMIMemory() = %d, %d, %v, want %d, %d, error %v", used, total, err, tt.used, tt.total, tt.wantErr)
			}
		})
	}
}

func TestParseCUDAVersion(t *testing.T) {
	tests := []struct{ in, want string }{
		{string(pipelinetest.ReadFile(t, "testdata/nvidia-smi/h200-plain.txt")), "13.0"},
		{"| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |", "12.2"},
		{"no header", ""},
	}
	for _, tt := range tests {
		if got := parseCUDAVersion([]byte(tt.in)); got != tt.want {
			t.Errorf("parseCUDAVersion(%q) = %q, want %q", tt.in[:min(len(tt.in), 40)], got, tt.want)
		}
	}
}

// FuzzSMI checks that the nvidia-smi parsers never panic and that what they
// accept is sane: non-negative whole MiB, at least one card, and a CUDA
// version that was in the input.
func FuzzSMI(f *testing.F) {
	f.Add("NVIDIA H200, 0, 143771\n")
	f.Add("NVIDIA L4, 100, 23034\nNVIDIA L4, 50, 23034\n")
	f.Add("\"a, b\", 1, 2\n")
	f.Add("NVIDIA H200, [Not Supported], 1\n")
	f.Fuzz(func(t *testing.T, in string) {
		used, total, err := parseSMIMemory([]byte(in))
		if err == nil && (used < 0 || total < 0 || used%mib != 0 || total%mib != 0) {
			t.Errorf("parseSMIMemory(%q) = %d, %d", in, used, total)
		}
		g, err := parseSMIInfo([]byte(in))
		if err == nil && (g.Count < 1 || g.MemoryTotalBytes < 0 || g.MemoryTotalBytes%mib != 0) {
			t.Errorf("parseSMIInfo(%q) = %+v", in, g)
		}
		if v := parseCUDAVersion([]byte(in)); v != "" && !strings.Contains(in, v) {
			t.Errorf("parseCUDAVersion(%q) = %q, not in the input", in, v)
		}
	})
}
