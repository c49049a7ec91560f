package pipeline

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xeipuuv/gojsonschema"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline/passrow"
	"github.com/extractbench/extractbench/pipeline/protocol"
	"github.com/extractbench/extractbench/pipeline/tokenizer"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/schemas"
)

// Options configure one `extractbench run`.
type Options struct {
	ProtocolPath string    // "" = the embedded default (or, on resume, the run's own protocol)
	OutDir       string    // results directory
	Resume       bool      // complete the latest run in OutDir
	Append       bool      // add a new run to an OutDir holding runs of the same fingerprint
	Quiet        bool      // no progress bars
	Progress     io.Writer // progress bars and log lines (stderr)
	TTY          bool      // Progress is a terminal: draw bars; else one line per pass
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

// runState is one run in progress.
type runState struct {
	proto       *protocol.Protocol
	store       *results.Store
	resumes     []int64 // run-clock instants at which this run was resumed (segment starts)
	opts        Options
	corpus      *corpus.Corpus
	readFailure docFault // the first document that could not be read back: the run stops
	schema      *gojsonschema.Schema
	evalOpts    eval.Options
	manifest    *extractbench.Manifest
	runID       string
	clock       extractbench.Clock
	progress    io.Writer
	passNo      int // passes started so far by this invocation, for the progress line
	simulated   bool
	intr        *interrupts         // the requests' context and the count in flight
	shard       *extractbench.Shard // the corpus's part this run measures; nil = all of it
	appendedTo  string              // the runs already in the directory, when -append added this one
	// responseFormat is the OpenAI response_format sent with every request
	// when the protocol asks for guided decoding; nil otherwise.
	responseFormat json.RawMessage
	// refusedUsage: the usages refused in each pass, for its event.
	refusedUsage refusedUsage

	secrets *results.Secrets // what the run never writes (protocol.Protocol.Secrets)
	// prompts count each variant's prompts with its tokenizer.json, for
	// the tokenizer drift (promptdrift.go); a variant without one is absent.
	prompts       map[string]*tokenizer.Prompt
	promptCounts  sync.Map     // variant + "\x00" + document id → its expected count (expectPromptTokens)
	promptCounted atomic.Int64 // entries stored in promptCounts
}

// account is what builds the run's pass rows (passrow): its protocol, its
// store and the segments its resumes cut.
func (rs *runState) account() *passrow.Account {
	return &passrow.Account{Proto: rs.proto, Store: rs.store, Resumes: rs.resumes}
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
	var checked *results.Run // the run to resume, checked before anything is written
	if opts.Resume {
		var err error
		if checked, err = rs.checkResume(ctx); err != nil {
			return nil, err
		}
	} else if err := rs.prepare(nil); err != nil {
		// A bad protocol, corpus, schema or variant leaves no results directory behind.
		return nil, err
	}
	lock, err := lockOutDir(opts)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	if !opts.Resume {
		if err := rs.checkFresh(ctx); err != nil {
			return nil, err
		}
	}
	dbPath := filepath.Join(opts.OutDir, results.DBName)
	_, statErr := os.Lstat(dbPath)
	dbCreated := errors.Is(statErr, fs.ErrNotExist) // this run creates results.db
	store, err := results.Open(ctx, opts.OutDir)
	if err != nil {
		return nil, fmt.Errorf("open results in %s: %w", opts.OutDir, err)
	}
	defer store.Close()
	rs.store = store

	var prev *results.Run
	if opts.Resume {
		prev, err = store.LatestRun(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the run to resume: %w", err)
		}
		if prev == nil || prev.RunID != checked.RunID {
			return nil, &ConfigError{fmt.Errorf("resume: the latest run in %s changed while it was checked; resume again", opts.OutDir)}
		}
	}
	store.SetSecrets(rs.secrets)
	if prev != nil {
		if err := rs.resume(ctx, prev); err != nil {
			return nil, err
		}
	} else {
		if err := rs.create(ctx); err != nil {
			return nil, err
		}
	}
	if lock.Stale != nil {
		rs.event(ctx, "", results.EventLockStale, 0, "the lock of "+lock.Stale.String()+" was left by a process that ended without releasing it (killed or crashed); taken over")
	}
	if rs.appendedTo != "" {
		rs.event(ctx, "", results.EventAppended, 0, "appended (-append) to a directory holding runs of the same fingerprint: "+rs.appendedTo)
	}

	rs.intr = rs.watchInterrupts(ctx)
	defer rs.intr.close()

	sum := &RunReport{RunID: rs.runID, Fingerprint: rs.manifest.Fingerprint, OutDir: opts.OutDir,
		Protocol: rs.proto.Name, Simulated: rs.simulated, Resumed: prev != nil, Shard: rs.shard}
	// The errors are returned, and printed once by the caller; a variant
	// that fails while others follow gets a line when it fails.
	var variantErrs []error
	for i := range rs.proto.Variants {
		v := &rs.proto.Variants[i]
		err := rs.runVariant(ctx, v)
		var re *corpus.ReadError
		if errors.As(err, &re) {
			// The corpus, not the variant, failed: nothing more can be
			// measured against it, and nothing measured is lost.
			err = fmt.Errorf("%s: %w; the run stopped with every answer so far recorded: %s, then extractbench run -resume %s", v.Name, err, re.Remedy(), opts.OutDir)
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
	runErr := errors.Join(variantErrs...)
	if len(variantErrs) == 1 {
		runErr = variantErrs[0]
	}
	if runErr != nil && prev == nil && ctx.Err() == nil {
		// A run that measured nothing (its engine failed its pre-flight:
		// not started, the model not served) leaves nothing behind that
		// would block the directory.
		discarded, left, err := store.DiscardRun(context.WithoutCancel(ctx), rs.runID)
		if err == nil && discarded {
			if left == 0 && dbCreated {
				err = store.Close()
				for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
					if rerr := os.Remove(dbPath + suffix); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
						err = rerr
					}
				}
			}
			if err == nil {
				return nil, fmt.Errorf("%w; nothing was measured, so no run was recorded in %s: fix it and run again", runErr, opts.OutDir)
			}
		}
		if err != nil {
			rs.logf("warning: remove the run that measured nothing: %v", err)
		}
	}
	if err := store.Flush(context.WithoutCancel(ctx)); err != nil && runErr == nil {
		runErr = fmt.Errorf("write results: %w", err)
	}
	sum.Interrupted = ctx.Err() != nil
	status := "complete"
	switch {
	case runErr != nil:
		status = "failed"
	case sum.Interrupted:
		status = "interrupted"
		rs.event(context.WithoutCancel(ctx), "", results.EventInterrupted, 0, "signal received; resume with: extractbench run -resume "+opts.OutDir)
	}
	bg := context.WithoutCancel(ctx)
	if rs.shard != nil { // merge checks a shard's rows against what it left
		if err := store.SealRun(bg, rs.runID); err != nil && runErr == nil {
			runErr = fmt.Errorf("record the digests of the shard's rows: %w", err)
		}
	}
	if err := store.SetRunStatus(bg, rs.runID, status, time.Now().UnixMilli()); err != nil && runErr == nil {
		runErr = fmt.Errorf("record run status: %w", err)
	}
	sum.Status = status
	sum.Simulated = rs.simulated // known once the engines said what they are
	if data, err := store.LoadRun(bg, opts.OutDir, rs.runID); err == nil {
		sum.Passes, sum.Variants = data.Passes, data.Outcomes()
	} else if runErr == nil {
		runErr = fmt.Errorf("read the run back: %w", err)
	}
	files, err := results.Export(bg, opts.OutDir)
	if err != nil && runErr == nil {
		runErr = fmt.Errorf("export results: %w", err)
	}
	sum.Exports = files
	sum.Passed = runErr == nil && !sum.Interrupted && len(sum.Variants) == len(rs.proto.Variants)
	for _, v := range sum.Variants {
		sum.Passed = sum.Passed && v.Passed()
	}
	sum.Elapsed = time.Since(started)
	return sum, runErr
}

// prepare loads the protocol (the resumed run's own when resuming without
// -protocol), the corpus and the output schema, and builds the manifest.
func (rs *runState) prepare(prev *results.Run) error {
	var err error
	switch {
	case prev != nil && rs.opts.ProtocolPath == "":
		var m extractbench.Manifest
		if err := json.Unmarshal(prev.Manifest, &m); err != nil {
			return fmt.Errorf("read the manifest of run %s: %w", prev.RunID, err)
		}
		rs.proto, err = protocol.Parse(m.Protocol, m.ProtocolSource+" (from run "+prev.RunID+")", protocol.ManifestDir(&m))
		if err == nil {
			if fields := rs.proto.RemovedCredentials(); len(fields) > 0 {
				return &ConfigError{fmt.Errorf("resume: the protocol of run %s has credentials in %s, which its manifest does not keep: resume with -protocol FILE, the protocol file that has them", prev.RunID, strings.Join(fields, ", "))}
			}
		}
	case rs.opts.ProtocolText != nil:
		wd, _ := os.Getwd()
		rs.proto, err = protocol.Parse(rs.opts.ProtocolText, rs.opts.ProtocolSource, wd)
	default:
		rs.proto, err = protocol.Load(rs.opts.ProtocolPath)
	}
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return &ValidationError{Problems: pe.Problems}
	}
	if err != nil {
		return &ConfigError{err}
	}
	// Everything else is checked before the first request, and every
	// problem is reported at once (ValidationError).
	var problems []string
	rs.corpus, err = loadCorpus(rs.proto)
	if err != nil {
		problems = append(problems, problemsOf(err)...)
	}
	rs.printCorpusWarnings()
	var full extractbench.CorpusInfo
	if rs.corpus != nil {
		full = extractbench.CorpusInfo{Path: rs.corpus.Path, SHA256: rs.corpus.Manifest.SHA256, Count: rs.corpus.Len(), Classes: classCounts(rs.corpus)}
		if err := rs.selectShard(prev); err != nil {
			problems = append(problems, err.Error())
		}
	}
	schemaSrc, schemaRaw := "default", schemas.Raw(schemas.ExtractionFile)
	rs.schema = schemas.Extraction()
	if rs.proto.OutputSchema != "default" {
		path := rs.proto.ResolvePath(rs.proto.OutputSchema)
		rs.schema, schemaRaw, err = schemas.Load(path)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", rs.proto.At("output_schema"), err))
		}
		schemaSrc = path
	}
	problems = append(problems, rs.checkVariants()...)
	problems = append(problems, rs.loadTokenizers()...)
	problems = append(problems, rs.checkLevels()...)
	if prev == nil {
		problems = append(problems, checkOutDir(rs.opts.OutDir)...)
	}
	if len(problems) > 0 {
		return &ValidationError{Problems: problems}
	}
	if rs.proto.GuidedDecoding {
		rs.responseFormat = responseFormat(schemaRaw)
	}
	rs.evalOpts = eval.Options{Rule: extractbench.ParseRule(rs.proto.Parse), Schema: rs.schema, Categories: rs.corpus.Manifest.Categories}
	m := &extractbench.Manifest{
		Tool:           extractbench.ToolInfo{Name: "extractbench", Version: extractbench.ToolVersion, ScorerVersion: extractbench.ScorerVersion},
		ProtocolName:   rs.proto.Name,
		ProtocolSource: rs.proto.Source,
		Protocol:       rs.proto.Canonical(),
		Corpus:         full, // the whole corpus's, also for a shard: shards of one run share the fingerprint
		Shard:          rs.shard,
		OutputSchema:   extractbench.SchemaInfo{Source: schemaSrc, SHA256: sha256Hex(schemaRaw)},
		Prompt:         rs.proto.Prompt,
		Generation:     rs.proto.Generation,
		Parse:          rs.proto.Parse,
		Acceptance:     rs.proto.Acceptance,
		Sweep:          rs.proto.Sweep,
		Cache:          rs.proto.Cache,
		Host:           hostInfo(),
	}
	for _, v := range rs.proto.Variants {
		// Simulated is what an engine says of itself once it is up
		// (pinEngine), not what its URL suggests.
		tokSHA := ""
		if p := rs.prompts[v.Name]; p != nil {
			tokSHA = p.Tokenizer.SHA256
		}
		m.Variants = append(m.Variants, extractbench.VariantManifest{Name: v.Name, Engine: extractbench.EngineInfo{TokenizerSHA256: tokSHA,
			URL: redactURL(v.Engine.URL), Endpoints: replicaNames(v.Engine), Kind: v.Engine.Kind, Model: v.Engine.Model, Revision: v.Engine.Revision,
			Tokenizer: v.Engine.Tokenizer, ChatTemplate: v.Engine.ChatTemplate, ContextWindow: v.Engine.ContextWindow,
			Weights: v.Engine.Weights, Quantization: v.Engine.Quantization, Params: v.Engine.Params,
			Started: v.Engine.Start != "", RandomWeights: v.Engine.RandomWeights}})
	}
	m.Model, m.Engine = m.Variants[0].Engine.Model, m.Variants[0].Engine
	m.Fingerprint = extractbench.Fingerprint(m)
	if rs.opts.CheckManifest != nil {
		if problems := rs.opts.CheckManifest(m); len(problems) > 0 {
			return &ValidationError{Problems: problems}
		}
	}
	rs.secrets = results.NewSecrets(rs.proto.Secrets()...)
	rs.progress = rs.secrets.Writer(rs.opts.Progress) // a line ends with no part of a secret: nothing is held back
	rs.manifest, rs.simulated = m, m.Simulated
	return nil
}

// maxCorpusWarnings is how many of the corpus loader's warnings run prints;
// `extractbench corpus check` lists them all.
const maxCorpusWarnings = 10

// printCorpusWarnings prints what the corpus loader found that does not stop
// a run (no manifest.json, a duplicate text, a class that disagrees with
// the length).
func (rs *runState) printCorpusWarnings() {
	if rs.corpus == nil {
		return // it did not load: its problems are reported
	}
	w := rs.corpus.Warnings
	for _, msg := range w[:min(len(w), maxCorpusWarnings)] {
		rs.logf("corpus: warning: %s", msg)
	}
	if len(w) > maxCorpusWarnings {
		rs.logf("corpus: %d more warnings; extractbench corpus check %s lists them all", len(w)-maxCorpusWarnings, rs.corpus.Path)
	}
}

func (rs *runState) create(ctx context.Context) error {
	rs.runID = newRunID()
	rs.clock = rs.onEngineClock(extractbench.NewClock())
	if rs.clock.Engine() != nil {
		rs.manifest.Clock = extractbench.ClockEngine
	}
	b, _ := json.Marshal(rs.manifest)
	err := rs.store.CreateRun(ctx, results.Run{RunID: rs.runID, Fingerprint: rs.manifest.Fingerprint,
		ProtocolName: rs.proto.Name, Manifest: b, StartedAt: time.Now().UnixMilli(), Status: "running",
		Simulated: rs.simulated, ClockOriginNS: rs.clock.OriginUnixNano()})
	if err != nil {
		return fmt.Errorf("record the run: %w", err)
	}
	return nil
}

// resume checks the fingerprint again, keeps the run's clock origin (so instants
// stay comparable across the interruption) and records the resumption.
func (rs *runState) resume(ctx context.Context, prev *results.Run) error {
	var old extractbench.Manifest
	if err := rs.sameFingerprint(prev); err != nil { // checked by checkResume too, before the store opened
		return err
	}
	if json.Unmarshal(prev.Manifest, &old) == nil {
		rs.manifest.Variants = old.Variants // engine facts pinned by the first attempt; checked again per variant
		rs.manifest.Simulated = old.Simulated
		rs.simulated = old.Simulated
	}
	rs.runID = prev.RunID
	rs.clock = rs.onEngineClock(extractbench.NewClockAt(prev.ClockOriginNS))
	events, err := rs.store.Events(ctx, rs.runID)
	if err != nil {
		return fmt.Errorf("read the run's events: %w", err)
	}
	for _, e := range events {
		if e.Kind == results.EventResumed {
			rs.resumes = append(rs.resumes, e.ValueNS)
		}
	}
	now := rs.clock.Now()
	rs.resumes = append(rs.resumes, now)
	rs.event(ctx, "", results.EventResumed, now, fmt.Sprintf("previous status %q", prev.Status))
	if err := rs.store.SetRunStatus(ctx, rs.runID, "running", 0); err != nil {
		return fmt.Errorf("mark run %s running: %w", rs.runID, err)
	}
	return nil
}

// onEngineClock returns c read from an engine clock when the run measures
// only simulated engines that can keep one (MEASUREMENT.md section 3): every
// variant on the in-process built-in engine, one replica each, its clock
// not set to wall, in a closed-loop sweep (a rate sweep's arrivals are
// planned on the wall clock). Otherwise c as it is.
func (rs *runState) onEngineClock(c extractbench.Clock) extractbench.Clock {
	if rs.proto.Sweep.Mode == extractbench.ModeRate || len(rs.proto.Variants) == 0 {
		return c
	}
	for _, v := range rs.proto.Variants {
		if !v.Engine.IsBuiltin() || replicaNames(v.Engine) != nil || (v.Engine.Builtin != nil && v.Engine.Builtin.Clock == extractbench.ClockWall) {
			return c
		}
	}
	return c.WithEngineClock()
}

func (rs *runState) event(ctx context.Context, variant, kind string, valueNS int64, detail string) {
	if rs.store == nil {
		return // checkResume's engine check, which writes nothing
	}
	_ = rs.store.AddEvent(ctx, results.Event{RunID: rs.runID, Variant: variant, AtMS: time.Now().UnixMilli(), Kind: kind, ValueNS: valueNS, Detail: detail})
}

// logf writes one log line to the progress writer, wrapped to the
// terminal's width when it is one (a wider line would break the bars'
// redraw into extra screen lines).
func (rs *runState) logf(format string, args ...any) {
	line := fmt.Sprintf(format+"\n", args...)
	if width := TerminalWidth(rs.opts.Progress); width > 0 {
		line = WrapText(line, width)
	}
	_, _ = io.WriteString(rs.progress, line)
}

func loadCorpus(p *protocol.Protocol) (*corpus.Corpus, error) {
	if p.Corpus == "default" {
		return corpus.LoadDefault()
	}
	path := p.ResolvePath(p.Corpus)
	if _, err := os.Stat(path); err != nil {
		if p.Corpus == "corpus/default" {
			return corpus.LoadDefault() // the embedded copy of the same files
		}
		return nil, fmt.Errorf("%s: %s does not exist (want a corpus directory, a .jsonl file, or default for the embedded corpus)", p.At("corpus"), path)
	}
	c, err := corpus.Open(path) // by reference: texts are read when sent
	var le *corpus.LoadError
	if err != nil && !errors.As(err, &le) {
		return nil, fmt.Errorf("%s: %w", p.At("corpus"), err) // a LoadError names the corpus's own lines
	}
	return c, err
}

// responseFormat wraps the output schema as OpenAI's json_schema response
// format, which vLLM, SGLang and llama.cpp use for guided decoding.
func responseFormat(schema []byte) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"type":        "json_schema",
		"json_schema": map[string]any{"name": "extraction", "strict": true, "schema": json.RawMessage(schema)},
	})
	return b
}

func classCounts(c *corpus.Corpus) map[string]int {
	m := map[string]int{}
	for i := range c.Len() {
		m[string(c.Doc(i).LengthClass)]++
	}
	return m
}

func newRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
