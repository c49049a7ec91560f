// Package sizing owns the decisions extractbench helps make before and after
// a run: the pre-rental memory calculator (weights, KV cache with sliding
// windows, precision, static or dynamic cache and offload, mixtures of
// experts, tensor parallelism, buffers) with its GPU catalog, compatibility
// table and model presets; the training-memory calculator (full, LoRA,
// QLoRA); llama.cpp's GGUF files, predicted tensor by tensor for each
// quantisation scheme (GGUFTensors) and read back from a file's header
// (ReadGGUF, CheckGGUF); and the plans that turn a measured throughput
// into corpus times, rental lengths and costs from a user's price file
// (MEASUREMENT.md section 9).
//
// Everything here is arithmetic on its inputs, but for the model files it
// is pointed at (config.json, a GGUF header). It imports no eval: results/plan
// reads the runs, takes the medians and the recommendation from eval, and
// hands sizing the figures.
package sizing
