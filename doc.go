// Package extractbench owns the contract every other package speaks, as
// litestream's root owns DB and Replica: the request Record (timings,
// tokens, transport, Score) and its Failure classes, the pass row Pass and
// its PassKey, the sweep modes and Sweep, Acceptance, the run's Manifest,
// the engine spec (Variant, Engine) and the Starter and ProcessStarter
// interfaces engines implement, the canonical metric names and the run's Clock.
//
// It imports nothing of the project but corpus; everything else imports it.
// Data flows one way: corpus → pipeline (request) → eval (scored record,
// pass row) → results (row) → export and report.
package extractbench
