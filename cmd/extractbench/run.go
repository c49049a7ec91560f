package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/engines/process"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/pipeline/progress"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/compare"
)

// defaultOutDir is where `extractbench run` writes when -out is not given.
const defaultOutDir = "extractbench-results"

type runCommand struct{ env }

func (c *runCommand) Synopsis() string {
	return "run a protocol (default: the embedded corpus on the built-in engine): baseline, sweep, SQLite, Parquet"
}

func (c *runCommand) Run(ctx context.Context, args []string) error {
	fs := newFlags("run [-protocol FILE | -url URL [-model NAME]] [-out DIR] [-resume DIR]", c.Synopsis(), c.env)
	protocol := fs.String("protocol", "", "protocol file (YAML or JSON); default: the embedded default protocol")
	out := fs.String("out", defaultOutDir, "results directory (results.db, Parquet, raw_table.csv)")
	resume := fs.String("resume", "", "complete the interrupted run in `DIR` (refuses a different fingerprint)")
	appendRun := fs.Bool("append", false, "add a new run to an -out directory that holds runs of the same fingerprint (refused otherwise)")
	quiet := fs.Bool("quiet", false, "no progress bars")
	asJSON := fs.Bool("json", false, "print a machine-readable summary on stdout instead of the table")
	baseline := fs.String("baseline", "", "nightly regression: compare against the run in `DIR` and fail on a drop")
	margin := fs.Float64("margin", 0.02, "with -baseline: largest allowed drop in accepted share")
	latencyRatio := fs.Float64("latency-ratio", 1.25, "with -baseline: largest allowed growth of p95 E2E at the recommended level")
	acceptDiffs := fs.Bool("accept-baseline-diff", false, "with -baseline: compare even when the baseline measured another prompt, schema, parse rule, generation or model (recorded as an event)")
	shardSpec := fs.String("shard", "", "measure only shard `I/N` of the corpus: the documents whose id hashes to I (FNV-1a 64 mod N); default: $JOB_COMPLETION_INDEX of $"+envShardCount+" when set")
	urlRun := addURLFlags(fs)
	ciOut := addCIFlags(fs)
	wide := addWideFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := ciOut.check(fs, "run"); err != nil {
		return err // before the arguments: an unquoted unset variable leaves one behind
	}
	if fs.NArg() > 0 {
		return &usageError{msg: fmt.Sprintf("run: unexpected argument %q", fs.Arg(0))}
	}
	shard, err := shardOf(*shardSpec, flagSet(fs, "shard"), os.Getenv)
	if err != nil {
		return err
	}
	opts := pipeline.Options{ProtocolPath: *protocol, OutDir: *out, Quiet: *quiet, Progress: c.stderr, Display: progress.New(c.stderr),
		Starters: starter.Starters(), Process: process.Starter{}, Append: *appendRun, Abandon: c.abandon, Shard: shard}
	if *resume != "" {
		if flagSet(fs, "out") && filepath.Clean(*out) != filepath.Clean(*resume) {
			return &usageError{msg: fmt.Sprintf("run: -resume %s resumes into its own directory; -out %s would be ignored: give one of them", *resume, *out)}
		}
		opts.OutDir, opts.Resume = *resume, true
	}
	if err := urlRun.apply(ctx, fs, &opts, c.stderr); err != nil {
		return err
	}
	if *baseline != "" {
		check, err := checkBaseline(ctx, *baseline, opts.Resume, *acceptDiffs)
		if err != nil {
			return err
		}
		opts.CheckManifest = check
	}
	sum, err := pipeline.Run(ctx, opts)
	if used := (*pipeline.OutDirUsedError)(nil); errors.As(err, &used) && ciOut.asked() {
		err = &pipeline.ConfigError{Err: fmt.Errorf("%w%s", err, ciOut.usedDirHint(used.Dir))}
	}
	var paired []compare.Paired
	requireEq := false
	if sum != nil && len(sum.Variants) > 1 && len(sum.Passes) > 0 {
		var perr error
		if paired, requireEq, perr = pairedVerdicts(ctx, opts.OutDir); perr != nil && err == nil {
			err = fmt.Errorf("pair the variants: %w", perr)
		}
	}
	if sum != nil && (err == nil || len(sum.Passes) > 0) { // a run that measured nothing has no table
		if *asJSON {
			enc := json.NewEncoder(c.stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(struct {
				*pipeline.RunReport
				Paired []compare.Paired `json:"paired,omitempty"` // each variant against the baseline variant
			}{sum, paired})
		} else {
			printSummaryFit(c.stdout, sum, summaryWidth(c.stdout, *wide), func(w io.Writer) { printPaired(w, paired, requireEq) })
		}
	}
	// CI's files whenever a run was created, even one that failed or was
	// interrupted: a failed night must show as one.
	if sum != nil && sum.RunID != "" {
		if werr := ciOut.write(ctx, opts.OutDir, c.stderr); werr != nil && err == nil {
			return werr
		} else if werr != nil {
			fmt.Fprintln(c.stderr, "extractbench:", werr)
		}
	}
	if err != nil {
		return err
	}
	if sum.Interrupted {
		return &interruptedError{dir: opts.OutDir}
	}
	if *baseline != "" {
		if err := regression(ctx, c.stdout, *baseline, opts.OutDir, *margin, *latencyRatio, *acceptDiffs); err != nil {
			return err
		}
	}
	if bad := notEquivalent(paired); requireEq && bad != "" && !sum.Interrupted {
		return &verdictError{msg: "acceptance.require_equivalent: " + bad}
	}
	if !sum.Passed {
		return outcomesError(sum.Variants)
	}
	return nil
}

// outcomesError is the error of variants that did not all pass: a failed
// verdict (exit 1) when one of them is the model's FAIL, else the
// infrastructure's (exit 3: ERROR, INCONCLUSIVE, NOT RUN), no finding.
func outcomesError(outcomes []results.Outcome) error {
	var failed []string
	fail := false
	for _, v := range outcomes {
		if !v.Passed() {
			failed = append(failed, fmt.Sprintf("%s %s: %s", v.Variant, v.State, v.Reason))
			fail = fail || v.Failed()
		}
	}
	if fail {
		return &verdictError{msg: strings.Join(failed, "; ")}
	}
	return &infraOutcomeError{msg: strings.Join(failed, "; ")}
}

// printSummary writes the final table: one line per level as eval's
// aggregator made it (the report, compare and -json show the same figures),
// then each variant's state and verdict. On a terminal it fits the
// terminal's width (summaryfit.go); elsewhere it has every column.
func printSummary(w io.Writer, s *pipeline.RunReport, verdicts ...func(io.Writer)) {
	printSummaryFit(w, s, progress.TerminalWidth(w), verdicts...)
}

// printSummaryFit is printSummary within width columns (0: no limit, every
// column: a log, a pipe, -wide).
func printSummaryFit(out io.Writer, s *pipeline.RunReport, width int, verdicts ...func(io.Writer)) {
	w, done := fitWriter(out, width)
	defer done()
	if s.Simulated {
		fmt.Fprintln(w, "SIMULATED: the built-in engine models a GPU; its times and memory are not measurements of hardware.")
	}
	fmt.Fprintf(w, "run %s  protocol %s  fingerprint %.12s  results %s  (%s)\n", s.RunID, s.Protocol, s.Fingerprint, s.OutDir, s.Elapsed.Round(time.Millisecond))
	if s.Shard != nil {
		fmt.Fprintf(w, "shard %s: %d documents of the corpus (%s); merge the shards with: extractbench merge -out DIR SHARD_DIR...\n", s.Shard, s.Shard.Documents, s.Shard.Hash)
	}
	// What the engine was sent comes before what it answered: a prompt it
	// tokenised otherwise is not the prompt its accuracy is about.
	for _, o := range s.Variants {
		if line := o.Tokenization.Sentence(); line != "" {
			fmt.Fprintf(w, "TOKENIZER DRIFT %s: %s\n", o.Variant, line)
		}
		if line := o.TokenCountSentence(); line != "" {
			fmt.Fprintf(w, "TOKEN COUNTS %s: %s\n", o.Variant, line)
		}
	}
	fmt.Fprintln(w, "accepted and failures: pooled over repetitions; latency, tok/s and docs/h: median over repetitions; max run: highest.")
	fmt.Fprintln(w)
	head := []string{"variant", "level", "reps", "accepted"}
	for _, f := range extractbench.Failures {
		head = append(head, string(f))
	}
	head = append(head, "TTFT p50", "TTFT p95", "E2E p50", "E2E p95", "tok/s", "accepted/h", "max run", "verdict")
	var rows, compact [][]string
	for _, o := range s.Variants {
		for _, sr := range o.Series {
			for _, l := range sr.Levels {
				row := []string{o.Variant, levelLabel(l), fmt.Sprint(l.Repetitions), eval.FormatShare(l.Share())}
				for _, f := range extractbench.Failures {
					row = append(row, fmt.Sprint(l.Failures.Of(f)))
				}
				row = append(row, spreadNS(l.TTFTP50NS), spreadNS(l.TTFTP95NS), spreadNS(l.E2EP50NS), spreadNS(l.E2EP95NS),
					spreadRate(l.OutputTokensPerS), spreadRate(l.DocsPerHour), intOr(l.MaxRunning, "n/a"), l.Verdict.Word())
				rows = append(rows, row)
				compact = append(compact, []string{o.Variant, levelLabel(l), eval.FormatShare(l.Share()), failureCell(l), spreadNS(l.E2EP95NS), spreadRate(l.DocsPerHour), l.Verdict.Word()})
			}
		}
	}
	if width == 0 || tableWidth(head, rows) <= width {
		writeTable(w, head, rows)
	} else {
		// The compact table: what a verdict rests on; -wide or -json has the rest.
		fmt.Fprintln(w, "(compact: a wider terminal or run -wide shows every column; -json every figure)")
		writeFitTable(w, width, []string{"variant", "level", "accepted", "failures", "E2E p95", "accepted/h", "verdict"}, compact, 5, 4, 3)
	}
	printRateTable(w, s, width)
	printContextTable(w, s, width)
	for _, o := range s.Variants {
		for _, sr := range o.Series {
			var at []string
			for _, l := range sr.Levels {
				if l.EngineCaptures != nil && *l.EngineCaptures > 0 {
					at = append(at, fmt.Sprintf("%s (%d)", levelLabel(l), *l.EngineCaptures))
				}
			}
			if len(at) > 0 {
				fmt.Fprintf(w, "NOT STEADY %s: the engine captured graphs or compiled kernels during measured passes at level (captures) %s\n", o.Variant, strings.Join(at, ", "))
			}
			for _, l := range sr.Levels { // the client's own check (eval/steady.go), for any engine
				if f := eval.NotSteadyFinding(&l); f != "" { // the evidence, once; verdicts name it (eval.NotSteadyRef)
					fmt.Fprintf(w, "%s: %s\n", o.Variant, f)
				}
				if l.CacheNote != "" { // eval/cacheshare.go: compared, but not on equal terms
					fmt.Fprintf(w, "CACHE %s at level %s: %s\n", o.Variant, levelLabel(l), l.CacheNote)
				}
			}
		}
	}
	if s.Interrupted {
		done, planned := 0, 0
		for _, o := range s.Variants {
			done, planned = done+o.PassesDone, planned+o.PassesPlanned
		}
		fmt.Fprintf(w, "INTERRUPTED: %d of %d planned passes measured; resume with: extractbench run -resume %s\n", done, planned, s.OutDir)
	}
	for _, o := range s.Variants {
		fmt.Fprintf(w, "%s %s (%s)", o.State, o.Variant, o.Model)
		if o.BaselineShare != nil {
			fmt.Fprintf(w, ": baseline accepted %s", eval.FormatShare(*o.BaselineShare))
		}
		fmt.Fprintln(w)
		reason := o.Reason
		if o.State == results.OutcomePass && len(o.Series) > 0 {
			// A pass's reason is its recommendation, printed below by objective;
			// what follows it (an interruption) is printed here.
			reason = strings.TrimSpace(strings.TrimPrefix(reason, o.Series[0].Recommendation.Headline()))
		}
		if reason != "" {
			fmt.Fprintf(w, "     %s\n", reason)
		}
		if o.State == results.OutcomePass || o.State == results.OutcomeFail {
			for _, sr := range o.Series {
				fmt.Fprintf(w, "     interactive: %s\n", sr.Recommendation.Interactive())
				fmt.Fprintf(w, "     offline: %s\n", sr.Recommendation.Offline.Why)
			}
		}
	}
	for _, f := range verdicts { // more verdicts, beside the variants' (the paired ones)
		f(w)
	}
	if len(s.Exports) > 0 {
		fmt.Fprintf(w, "\nwrote %s/results.db and %s\n", s.OutDir, strings.Join(s.Exports, ", "))
	}
}

// printRateTable writes, for rate sweeps, the load as it arrived and as it
// was sent: offered and achieved rate, lateness, the client's queue, E2E
// from the scheduled instant, waiting requests, on-time documents and
// goodput, and whether the client kept the schedule.
func printRateTable(w io.Writer, s *pipeline.RunReport, width int) {
	var rows [][]string
	for _, o := range s.Variants {
		for _, sr := range o.Series {
			if sr.Mode != extractbench.ModeRate {
				continue
			}
			for _, l := range sr.Levels {
				client := "ok"
				if l.ClientBound > 0 {
					client = fmt.Sprintf("BOUND %d/%d", l.ClientBound, l.Repetitions)
				}
				rows = append(rows, []string{o.Variant, levelLabel(l), spreadRate(l.OfferedRate), spreadRate(l.AchievedRate),
					spreadNS(l.LatenessP50NS), spreadNS(l.LatenessP99NS), spreadNS(l.ClientQueueP95NS), spreadNS(l.E2ESchedP95NS),
					intOr(l.MaxWaiting, "n/a"), eval.FormatShare(float64(l.OnTime) / float64(max(l.Docs, 1))),
					eval.FormatShare(l.GoodShare()), spreadRate(l.Goodput), client})
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "rate sweep: offered = planned arrivals/s, achieved = sends/s; lateness = send − scheduled; E2E sched = done − scheduled;")
	fmt.Fprintln(w, "on time = every latency objective met; goodput = accepted and on time, per second; client BOUND = the client could not keep the schedule.")
	fmt.Fprintln(w)
	// Dropped first on a narrow terminal: queue p95, late p50, max wait, E2E sched p95, on time, late p99.
	writeFitTable(w, width, []string{"variant", "level", "offered/s", "achieved/s", "late p50", "late p99", "queue p95", "E2E sched p95", "max wait", "on time", "good share", "goodput/s", "client"}, rows,
		6, 4, 8, 7, 9, 5)
}

// writeTable writes a right-aligned text table and a blank line after it.
func writeTable(w io.Writer, head []string, rows [][]string) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// printContextTable writes, for context sweeps, memory against document
// length: per length class, its documents, the peaks of memory and KV
// cache, and E2E.
func printContextTable(w io.Writer, s *pipeline.RunReport, width int) {
	var rows [][]string
	gib := func(v *int64) string {
		if v == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.2f", float64(*v)/(1<<30))
	}
	for _, o := range s.Variants {
		for _, sr := range o.Series {
			if sr.Mode != extractbench.ModeContext {
				continue
			}
			for _, l := range sr.Levels {
				kv := "n/a"
				if l.PeakKVUsage != nil {
					kv = eval.FormatShare(*l.PeakKVUsage)
				}
				rows = append(rows, []string{o.Variant, levelLabel(l), fmt.Sprint(l.Docs / int64(max(l.Repetitions, 1))),
					gib(l.PeakGPUMemBytes), gib(l.PeakTorchAllocatedBytes), kv, spreadNS(l.E2EP95NS), intOr(l.MaxRunning, "n/a")})
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "context sweep: each step sends one length class of the corpus at the fixed concurrency; memory peaks (GiB = 2^30 B) are the highest over repetitions.")
	fmt.Fprintln(w)
	// Dropped first on a narrow terminal: torch alloc, max run, docs.
	writeFitTable(w, width, []string{"variant", "class", "docs", "GPU mem GiB", "torch alloc GiB", "KV peak", "E2E p95", "max run"}, rows, 4, 7, 2)
}

// levelLabel is the level as the pages name it (eval.LevelName), marked
// when it was a retry below a failed one.
func levelLabel(l eval.Level) string {
	if l.Phase == extractbench.PhaseRetry {
		return eval.LevelName(l.Mode, l.Level) + " (retry)"
	}
	if l.Phase == extractbench.PhaseProbe {
		return eval.LevelName(l.Mode, l.Level) + " (probe)"
	}
	return eval.LevelName(l.Mode, l.Level)
}

// spreadRate and spreadNS print a level's median over repetitions with the
// digits its range supports (eval's printer of figures).
func spreadRate(s eval.Spread) string { return s.Rate() }

func spreadNS(s eval.Spread) string { return s.Duration() }

func intOr(v *int64, none string) string {
	if v == nil {
		return none
	}
	return fmt.Sprint(*v)
}
