package extractbench

import (
	"context"
	"io"
	"time"
)

// ProcessStarter starts an engine from a protocol's start: command: an
// external process extractbench owns for the variant's turn. It is the
// Starter of engines that are not in-process, implemented beside the other
// engines (engines/process) and wired in by cmd/extractbench through
// pipeline.Options.Process, so that pipeline imports no engine.
type ProcessStarter interface {
	// StopStale stops the engine an interrupted attempt of this run left
	// running (found by files.PID), running v's stop: command as well for
	// an engine that daemonised. It returns what it did, "" for nothing.
	StopStale(v *Variant, files ProcessFiles, redact Redact) (string, error)
	// StartProcess runs v's start: command, its output appended to
	// files.Log with redact applied and its identity in files.PID, and
	// waits until health answers or engine.ready_timeout passes.
	StartProcess(ctx context.Context, v *Variant, files ProcessFiles, redact Redact, health func(context.Context) error) (Process, error)
}

// ProcessFiles are where a started engine's output and pid file go (the
// results directory's engine-<variant>.log and .pid).
type ProcessFiles struct {
	Log string
	PID string
}

// Redact wraps a writer so that the run's secrets never reach it; nil
// writes through unchanged. The engine's log is written through it:
// engines print their arguments, API keys among them.
type Redact func(io.Writer) io.WriteCloser

// Process is an engine a ProcessStarter started and watches.
type Process interface {
	// LoadTime is how long the engine took from its start command until
	// health answered; LoadDetail says how that figure was read, for the
	// engine_load event.
	LoadTime() time.Duration
	LoadDetail() string
	// Exited reports whether the engine ended on its own (a crash, an OOM
	// kill); an engine that daemonised is never reported.
	Exited() bool
	// Daemonised reports whether the start command exited 0 and left the
	// engine running on its own (stop: ends it): it is not watched.
	Daemonised() bool
	// ExitStatus says how the engine ended, in a few words; ExitDetail
	// adds the end of its log.
	ExitStatus() string
	ExitDetail() string
	// CrashEvidence waits up to wait for the engine's end to be seen
	// (exited false when it still runs) and says whether that end shows
	// it ran out of memory, with the evidence either way.
	CrashEvidence(wait time.Duration) (exited, oom bool, evidence string)
	// Stop ends the engine (its stop: command, then its process group)
	// and waits for it; the error is the stop: command's failure.
	Stop() error
}
