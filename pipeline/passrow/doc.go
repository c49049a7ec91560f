// Package passrow builds a pass's row (extractbench.Pass) from the pass's
// request records as the store holds them: one tally, fed each record as
// the run stores it (Account.NewTally) or read once from the store
// (Account.ReadPass), equal bit for bit to the one SQLite's order
// statistics make (Account.TallyPass), then every figure and the pass's
// own verdict (Account.Row, Account.Judge).
// The run (pipeline) and the merge (pipeline/merge) share it, so that a
// merged pass's figures are made by the code that made each shard's, and
// a resumed pass's by the code that made one that ran through.
//
// It imports the store, the protocol and the engine's telemetry, never the
// run: neither the run's state nor the merge's is needed to count a pass.
package passrow
