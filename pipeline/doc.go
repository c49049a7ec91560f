// Package pipeline is the run itself: Run reads a protocol, checks the
// corpus, the engines and the results directory before anything is sent
// (preflight and its lock), then per variant loads, warms up, measures the
// baseline and the sweep, each pass's requests scored and recorded as they
// come, its row written when it ends, and the exports at the end; a
// canceled context leaves a run that -resume completes.
//
// Its parts live below it, one job each: protocol/ (the protocol file and
// its named defaults), dispatch/ (when each request goes, one file per
// sweep mode), telemetry/ (the engine's /metrics and nvidia-smi),
// client/ (the OpenAI-compatible engine client), tokenizer/ (prompt
// counts), and passrow/, the one tally that makes a pass row from the
// stored records. merge/ builds one run from the shards of a run with that
// same tally, and imports nothing of this package.
package pipeline
