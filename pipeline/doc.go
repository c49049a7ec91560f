// Package pipeline is the run itself: Run reads a protocol, checks the
// corpus, the engines and the results directory before anything is sent
// (preflight and its lock), then per variant loads, warms up, measures the
// baseline and the sweep, each pass's requests scored and recorded as they
// come, its row written when it ends, and the exports at the end; a
// canceled context leaves a run that -resume completes.
//
// # Where each job of a run lives
//
//   - The run from start to end: Run and runVariants (run.go); what the
//     jobs share, runState (runstate.go); preflight and the manifest
//     (prepare.go, validate.go, shard.go); creating or resuming the run in
//     the store (runstart.go); its status, exports and report (runend.go).
//   - One variant's phases and sweep: variantRun (variantrun.go), with the
//     warm-up (warmup.go), an auto sweep's rates (autolevels.go), what a
//     memory failure does to the levels above it (memoryfailure.go) and a
//     level's steady-state and client-bound decisions (steady.go).
//   - One pass: passRun (passrun.go: its documents to send, its dispatch;
//     passrecord.go: its row and how it ended); its send order
//     (passorder.go), its side of package dispatch (passdispatch.go) and
//     the client's own timeline, whose gaps (a frozen client) take the
//     requests across them out of the measurement (clientgap.go).
//   - An engine's lifecycle: engine (engine.go: death, stop); starting or
//     reaching it and its replicas (enginestart.go), its identity pinned in
//     the manifest (enginepin.go) and read again before each pass
//     (engineidentity.go), its replicas (replicas.go), the
//     requests sent to it and scored (request.go).
//   - Progress: the Progress interface (progress.go); pipeline/progress
//     draws it on a terminal or a log, and cmd/extractbench wires it in.
//
// Its parts live below it, one job each: protocol/ (the protocol file and
// its named defaults), dispatch/ (when each request goes, one file per
// sweep mode), telemetry/ (the engine's /metrics and nvidia-smi),
// client/ (the OpenAI-compatible engine client), tokenizer/ (prompt
// counts), progress/ (the terminal display), and passrow/, the one tally
// that makes a pass row from the stored records. merge/ builds one run
// from the shards of a run with that same tally, and imports nothing of
// this package.
package pipeline
