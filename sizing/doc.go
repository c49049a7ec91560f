// Package sizing owns the decisions extractbench helps make before and after
// a run: the pre-rental memory calculator (weights, KV cache, buffers) with
// its GPU catalog and model presets, the calculator set beside a run's
// measured peaks, and the plans that turn a measured throughput into corpus
// times and rental lengths (MEASUREMENT.md section 9).
//
// Everything here is a pure function of its inputs: runs are read by
// package results, and the verdict on which level to recommend is eval's.
package sizing
