// Package merge builds one run from the results directories of a run's
// shards (`extractbench run -shard I/N`): Merge opens each shard
// read-only, refuses shards of different fingerprints or counts and any
// shard whose rows are not what its run left (audit.go), copies every
// request row once onto one clock, and writes each merged pass's row with
// the run's own tally (pipeline/passrow), so that every page reads a
// merged run as it reads any run.
//
// It never imports the run (package pipeline): what a pass row needs is
// passrow.Account (the protocol, the store, the shards' segments), and the
// merged results.db is written through results alone.
package merge
