package pipeline

// CommandProgram exposes commandProgram to the external tests.
var CommandProgram = commandProgram

// ProcessCPU exposes processCPU to the benchmarks (bench_run_test.go).
var ProcessCPU = processCPU
