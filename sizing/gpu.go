package sizing

import (
	"fmt"
	"strings"
)

// GB is a datasheet gigabyte: decimal, 10^9 bytes. GiB is 2^30 bytes, the
// unit every figure extractbench prints uses. An "80 GB" card is therefore
// 74.5 GiB on paper; nvidia-smi usually reports a little more (an H100 80GB
// shows 81,559 MiB), so the datasheet reading is the conservative one, and a
// measured card size from a run manifest replaces it when there is one.
const (
	GB  = 1e9
	GiB = 1 << 30
	MiB = 1 << 20
	KiB = 1 << 10
)

// GPU is one card: its datasheet memory and bandwidth (leads, not
// measurements: MEASUREMENT.md section 5) or, when MemoryBytes is set, its
// measured memory.
type GPU struct {
	Name         string  `json:"name"`
	DatasheetGB  float64 `json:"datasheet_gb"`       // decimal GB as printed on the datasheet
	BandwidthGBs float64 `json:"bandwidth_gb_per_s"` // datasheet memory bandwidth, decimal GB/s; 0 = unknown
	// DenseBF16TFLOPS is the datasheet's dense (no sparsity) bf16 tensor
	// rate, 10^12 FLOP/s: the denominator of an MFU estimate; 0 = unknown.
	DenseBF16TFLOPS float64 `json:"dense_bf16_tflops,omitempty"`
	MemoryBytes     int64   `json:"memory_bytes,omitempty"` // measured total (nvidia-smi); 0 = use the datasheet
	// Arch is the architecture (Ampere, Ada, Hopper, Blackwell) and
	// ComputeCapability CUDA's major.minor for it ("8.9"): what decides
	// which kernels and formats run (compat.go). "" = unknown.
	Arch              string `json:"arch,omitempty"`
	ComputeCapability string `json:"compute_capability,omitempty"`
	// PCIeGBs is the host link's datasheet bandwidth in one direction,
	// decimal GB/s (Gen4 x16 32, Gen5 x16 64): what KV offload crosses.
	PCIeGBs float64 `json:"pcie_gb_per_s,omitempty"`
}

// Bytes is the card's memory in bytes: the measured total, else the
// datasheet's decimal GB converted.
func (g GPU) Bytes() int64 {
	if g.MemoryBytes > 0 {
		return g.MemoryBytes
	}
	return int64(g.DatasheetGB * GB)
}

// Catalog is the cards the calculator checks by default, with the datasheet
// figures of MEASUREMENT.md section 5 and each card's architecture and
// compute capability (NVIDIA's CUDA GPUs list).
var Catalog = []GPU{
	{Name: "L4", DatasheetGB: 24, BandwidthGBs: 300, DenseBF16TFLOPS: 121, Arch: "Ada", ComputeCapability: "8.9", PCIeGBs: 32},
	{Name: "RTX 4090", DatasheetGB: 24, BandwidthGBs: 1008, DenseBF16TFLOPS: 165, Arch: "Ada", ComputeCapability: "8.9", PCIeGBs: 32},
	{Name: "L40S", DatasheetGB: 48, BandwidthGBs: 864, DenseBF16TFLOPS: 362, Arch: "Ada", ComputeCapability: "8.9", PCIeGBs: 32},
	{Name: "A100 80GB", DatasheetGB: 80, BandwidthGBs: 2039, DenseBF16TFLOPS: 312, Arch: "Ampere", ComputeCapability: "8.0", PCIeGBs: 32},
	{Name: "H100 SXM", DatasheetGB: 80, BandwidthGBs: 3350, DenseBF16TFLOPS: 989, Arch: "Hopper", ComputeCapability: "9.0", PCIeGBs: 64},
	{Name: "H200", DatasheetGB: 141, BandwidthGBs: 4800, DenseBF16TFLOPS: 989, Arch: "Hopper", ComputeCapability: "9.0", PCIeGBs: 64},
	{Name: "B200", DatasheetGB: 180, BandwidthGBs: 8000, DenseBF16TFLOPS: 2250, Arch: "Blackwell", ComputeCapability: "10.0", PCIeGBs: 64},
}

// normGPU drops case, spaces, dashes and vendor words so that nvidia-smi's
// "NVIDIA H100 80GB HBM3" and a user's "h100" meet.
func normGPU(s string) string {
	s = strings.ToLower(s)
	for _, w := range []string{"nvidia", "geforce", "tesla", " ", "-", "_"} {
		s = strings.ReplaceAll(s, w, "")
	}
	return s
}

// FindGPU finds a catalog card by name: exactly (ignoring case, spaces and
// vendor words), or the catalog card whose name a longer name contains, so
// that nvidia-smi's "NVIDIA H200" or "NVIDIA A100-SXM4-80GB" find theirs.
func FindGPU(name string) (GPU, bool) {
	n := normGPU(name)
	var best GPU
	bestLen := 0
	for _, g := range Catalog {
		gn := normGPU(g.Name)
		if n == gn {
			return g, true
		}
		// The catalog name's first word (the model: "a100", "h100", "l40s")
		// is what nvidia-smi names carry.
		key := normGPU(strings.Fields(g.Name)[0])
		if g.Name == "RTX 4090" {
			key = "4090"
		}
		if strings.Contains(n, key) && len(key) > bestLen && !(key == "l4" && strings.Contains(n, "l40")) {
			best, bestLen = g, len(key)
		}
	}
	return best, bestLen > 0
}

// ParseGPU reads a card given on the command line: a catalog name ("H100"),
// or NAME=GB for a card the catalog lacks ("A10G=24").
func ParseGPU(s string) (GPU, error) {
	if name, gb, ok := strings.Cut(s, "="); ok {
		var v float64
		if _, err := fmt.Sscanf(gb, "%g", &v); err != nil || v <= 0 {
			return GPU{}, fmt.Errorf("gpu %q: want NAME=GB with GB a positive decimal number (datasheet gigabytes)", s)
		}
		return GPU{Name: strings.TrimSpace(name), DatasheetGB: v}, nil
	}
	g, ok := FindGPU(s)
	if !ok {
		names := make([]string, len(Catalog))
		for i, c := range Catalog {
			names[i] = c.Name
		}
		return GPU{}, fmt.Errorf("gpu %q is not in the catalog (%s): give NAME=GB instead", s, strings.Join(names, ", "))
	}
	return g, nil
}
