// Package sizing owns the decisions extractbench helps make before and after
// a run: the pre-rental memory calculator (weights, KV cache, buffers) with
// its GPU catalog and model presets, the verdict on which levels are usable
// and which one to recommend (MEASUREMENT.md section 8), and the plans that
// turn a measured throughput into corpus times and rental lengths (section 9).
//
// Everything here is a pure function of its inputs, except the few readers
// that load a results directory's run manifest, passes and events read-only.
package sizing
