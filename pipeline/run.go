package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/results"
)

// Options configure one `extractbench run`.
type Options struct {
	ProtocolPath string    // "" = the embedded default (or, on resume, the run's own protocol)
	OutDir       string    // results directory
	Resume       bool      // complete the latest run in OutDir
	Append       bool      // add a new run to an OutDir holding runs of the same fingerprint
	Quiet        bool      // no pass is shown on Display; log lines still are
	Progress     io.Writer // where log lines and Display write (stderr)
	// Display shows the run's log lines and passes (pipeline/progress);
	// cmd/extractbench wires it in. Nil: plain log lines, no pass shown.
	Display Progress
	// Starters are the in-process engines by the engine.url that names
	// them ("builtin"); cmd/extractbench wires them in.
	Starters map[string]extractbench.Starter
	// Process starts the engines a protocol's engine.start names
	// (engines/process); cmd/extractbench wires it in. Nil: a variant with
	// engine.start is refused.
	Process extractbench.ProcessStarter
	// Abandon is closed at the second signal: the requests still in flight
	// are cancelled at once instead of at the end of the grace period. Nil:
	// never.
	Abandon <-chan struct{}
	// BeforeSend, when set, runs in the dispatcher before each measured
	// request is handed to the client: a test hook that slows the client
	// deliberately, to prove that its delay shows as client queue and
	// flags the pass client_bound.
	BeforeSend func()
	// Shard, when set, measures only the corpus's documents whose id
	// hashes to it (extractbench.ShardOf): `run -shard I/N` or an Indexed Job's
	// JOB_COMPLETION_INDEX. A resumed run measures its own shard; a Shard
	// that differs from it is refused.
	Shard *extractbench.Shard
	// CheckManifest, when set, is called with the run's manifest once the
	// protocol, corpus and output schema are read, before anything is
	// created, started or sent (`run -baseline` compares the run with its
	// baseline there): the problems it returns refuse the run
	// (ValidationError, exit 2).
	CheckManifest func(*extractbench.Manifest) []string
	// ProtocolText, when set, is the protocol itself, read in place of
	// ProtocolPath and named ProtocolSource in messages and the manifest
	// ("(run -url …)"): `run -url URL -model NAME` runs one it writes.
	ProtocolText   []byte
	ProtocolSource string
}

// ConfigError is a usage or configuration problem: bad protocol, missing
// corpus, a resume that does not match. The CLI exits 2 on it.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// ExitCode is the status the command line exits with on a configuration
// error: 2, as a usage error.
func (e *ConfigError) ExitCode() int { return 2 }

// RunReport is the outcome of a run, for the final table and -json. Its
// figures are results' and eval's, read back from the store: the same
// Outcomes and levels the report, compare and plan show.
type RunReport struct {
	RunID       string              `json:"run_id"`
	Fingerprint string              `json:"fingerprint"`
	OutDir      string              `json:"out_dir"`
	Protocol    string              `json:"protocol"`
	Status      string              `json:"status"` // the runs row's: complete, interrupted, failed
	Simulated   bool                `json:"simulated"`
	Interrupted bool                `json:"interrupted"`
	Resumed     bool                `json:"resumed"`
	Passed      bool                `json:"passed"` // every variant's verdict passed
	Variants    []results.Outcome   `json:"variants"`
	Passes      []extractbench.Pass `json:"passes"`
	Exports     []string            `json:"exports"`
	Elapsed     time.Duration       `json:"elapsed_ns"`
	Shard       *extractbench.Shard `json:"shard,omitempty"` // the corpus's part the run measured; nil = all of it
}

// Run executes a protocol end to end: per variant, load, warm-up, baseline,
// sweep; every request scored and recorded; exports written at the end.
// A canceled ctx (Ctrl-C, SIGTERM) stops dispatching, finishes the writes
// and leaves a run that `-resume` completes.
func Run(ctx context.Context, opts Options) (*RunReport, error) {
	started := time.Now()
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.OutDir == "" {
		return nil, &ConfigError{errors.New("run: -out DIR is required")}
	}
	rs := &runState{opts: opts, progress: opts.Progress}
	defer func() { rs.corpus.Close() }() // the corpus file held by reference, once loaded
	if err := rs.preflight(ctx); err != nil {
		return nil, err
	}
	lock, err := lockOutDir(opts)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	dbCreated, err := rs.openStore(ctx)
	if err != nil {
		return nil, err
	}
	defer rs.store.Close()
	prev, err := rs.begin(ctx, lock)
	if err != nil {
		return nil, err
	}
	rs.intr = rs.watchInterrupts(ctx)
	defer rs.intr.close()

	runErr := rs.runVariants(ctx)
	if runErr != nil && prev == nil && ctx.Err() == nil && rs.discardEmpty(ctx, dbCreated) {
		return nil, fmt.Errorf("%w; nothing was measured, so no run was recorded in %s: fix it and run again", runErr, opts.OutDir)
	}
	sum, runErr := rs.finish(ctx, prev != nil, runErr)
	sum.Elapsed = time.Since(started)
	return sum, runErr
}

// runVariants measures each variant in turn. The errors are returned, and
// printed once by the caller; a variant that fails while others follow
// gets a line when it fails.
func (rs *runState) runVariants(ctx context.Context) error {
	var variantErrs []error
	for i := range rs.proto.Variants {
		v := &rs.proto.Variants[i]
		err := runVariant(ctx, rs, v)
		if re := new(corpus.ReadError); errors.As(err, &re) {
			// The corpus, not the variant, failed: nothing more can be
			// measured against it, and nothing measured is lost.
			err = fmt.Errorf("%s: %w; the run stopped with every answer so far recorded: %s, then extractbench run -resume %s", v.Name, err, re.Remedy(), rs.opts.OutDir)
			rs.event(context.WithoutCancel(ctx), "", results.EventCorpusReadFailed, 0, err.Error())
			variantErrs = append(variantErrs, err)
			break
		}
		if err != nil {
			// One variant's broken engine does not cost the others their
			// measurements: record it and go on; the run still fails.
			rs.event(context.WithoutCancel(ctx), v.Name, results.EventVariantFail, 0, err.Error())
			variantErrs = append(variantErrs, err)
			if i+1 < len(rs.proto.Variants) && ctx.Err() == nil {
				rs.logf("%s: failed, not measured further; the run goes on with the next variant (the error is printed when the run ends)", v.Name)
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	if len(variantErrs) == 1 {
		return variantErrs[0]
	}
	return errors.Join(variantErrs...)
}
