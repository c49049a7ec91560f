package report

import "github.com/extractbench/extractbench"

// cpuEngineLine is what the report says of a variant that ran on no GPU.
const cpuEngineLine = "CPU engine: no GPU"

// cpuEngine reports whether a variant's engine ran on the CPU: it ran on
// this machine (extractbench started it, or its URL is a loopback address)
// and nvidia-smi found no card there, while the protocol named none
// (pipeline's engineGPU then records the source "unknown" and no name). A
// remote engine whose card is unknown is not one: its card is just unknown.
func cpuEngine(vm extractbench.VariantManifest) bool {
	if vm.Engine.Simulated || vm.GPU.Name != "" || vm.GPU.Source != "unknown" {
		return false
	}
	if vm.Engine.Started {
		return true
	}
	return extractbench.IsLoopback(vm.Engine.URL)
}
