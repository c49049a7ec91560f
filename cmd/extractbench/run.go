package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
)

// defaultOutDir is where `extractbench run` writes when -out is not given.
const defaultOutDir = "extractbench-results"

type runCommand struct{ env }

func (c *runCommand) Synopsis() string {
	return "run a protocol (default: the embedded corpus on the built-in engine): baseline, sweep, SQLite, Parquet"
}

func (c *runCommand) Run(ctx context.Context, args []string) error {
	fs := newFlags("run [-protocol FILE] [-out DIR] [-resume DIR]", c.Synopsis(), c.stderr)
	protocol := fs.String("protocol", "", "protocol file (YAML or JSON); default: the embedded default protocol")
	out := fs.String("out", defaultOutDir, "results directory (results.db, Parquet, raw_table.csv)")
	resume := fs.String("resume", "", "complete the interrupted run in `DIR` (refuses a different fingerprint)")
	quiet := fs.Bool("quiet", false, "no progress bars")
	asJSON := fs.Bool("json", false, "print a machine-readable summary on stdout instead of the table")
	baseline := fs.String("baseline", "", "nightly regression: compare against the run in `DIR` and fail on a drop")
	margin := fs.Float64("margin", 0.02, "with -baseline: largest allowed drop in accepted share")
	latencyRatio := fs.Float64("latency-ratio", 1.25, "with -baseline: largest allowed growth of p95 E2E at the recommended level")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &usageError{msg: fmt.Sprintf("run: unexpected argument %q", fs.Arg(0))}
	}
	opts := pipeline.Options{ProtocolPath: *protocol, OutDir: *out, Quiet: *quiet, Progress: c.stderr, TTY: isTerminal(c.stderr),
		Starters: starter.Starters()}
	if *resume != "" {
		opts.OutDir, opts.Resume = *resume, true
	}
	sum, err := pipeline.Run(ctx, opts)
	if sum != nil && (err == nil || len(sum.Passes) > 0) { // a run that measured nothing has no table
		if *asJSON {
			enc := json.NewEncoder(c.stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(sum)
		} else {
			printSummary(c.stdout, sum)
		}
	}
	if err != nil {
		return err
	}
	if sum.Interrupted {
		return &interruptedError{dir: opts.OutDir}
	}
	if *baseline != "" {
		if err := regression(ctx, c.stdout, *baseline, opts.OutDir, *margin, *latencyRatio); err != nil {
			return err
		}
	}
	if !sum.Passed {
		var failed []string
		for _, v := range sum.Variants {
			if !v.Passed {
				failed = append(failed, fmt.Sprintf("%s: %s", v.Name, v.Reason))
			}
		}
		return &verdictError{msg: strings.Join(failed, "; ")}
	}
	return nil
}

// printSummary writes the final table: one line per level (median over
// repetitions of each figure), then the verdict per variant.
func printSummary(w io.Writer, s *pipeline.Summary) {
	if s.Simulated {
		fmt.Fprintln(w, "SIMULATED: the built-in engine models a GPU; its times and memory are not measurements of hardware.")
	}
	fmt.Fprintf(w, "run %s  protocol %s  fingerprint %.12s  results %s  (%s)\n\n", s.RunID, s.Protocol, s.Fingerprint, s.OutDir, s.Elapsed.Round(time.Millisecond))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "variant\tlevel\treps\taccepted\tmem\ttrunc\tformat\tquality\terror\tTTFT p50\tTTFT p95\tE2E p50\tE2E p95\ttok/s\tdocs/h\tmax run\tverdict\t")
	for _, g := range groupPasses(s.Passes) {
		p := g[0]
		var acc, docs, fm, ft, ff, fq, fe int64
		for _, x := range g {
			acc, docs = acc+x.Accepted, docs+x.Docs
			fm, ft, ff, fq, fe = fm+x.FailuresMemory, ft+x.FailuresTruncation, ff+x.FailuresFormat, fq+x.FailuresQuality, fe+x.FailuresError
		}
		verdict := "usable"
		for _, x := range g {
			if x.Verdict != "usable" {
				verdict = x.Verdict
			}
		}
		level := fmt.Sprint(p.Level)
		if p.Phase == "retry" {
			level += " (retry)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			p.Variant, level, len(g), pct(acc, docs), fm, ft, ff, fq, fe,
			medianNS(g, func(x results.Pass) *int64 { return x.TTFTP50NS }), medianNS(g, func(x results.Pass) *int64 { return x.TTFTP95NS }),
			medianNS(g, func(x results.Pass) *int64 { return x.E2EP50NS }), medianNS(g, func(x results.Pass) *int64 { return x.E2EP95NS }),
			medianF(g, func(x results.Pass) *float64 { return x.OutputTokensPerS }, "%.0f"), medianF(g, func(x results.Pass) *float64 { return x.DocsPerHour }, "%.0f"),
			medianI(g, func(x results.Pass) *int64 { return x.ObservedMaxRunning }), verdict)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, v := range s.Variants {
		status := "PASS"
		if !v.Passed {
			status = "FAIL"
		}
		fmt.Fprintf(w, "%s %s (%s): baseline accepted %.1f%%", status, v.Name, v.Model, 100*v.BaselineShare)
		if v.Reason != "" {
			fmt.Fprintf(w, " — %s", v.Reason)
		}
		fmt.Fprintf(w, "\n     %s\n", v.Recommendation.Why)
	}
	if len(s.Exports) > 0 {
		fmt.Fprintf(w, "\nwrote %s/results.db and %s\n", s.OutDir, strings.Join(s.Exports, ", "))
	}
}

// groupPasses groups repetitions of the same (variant, mode, level, phase), in run order.
func groupPasses(ps []results.Pass) [][]results.Pass {
	var out [][]results.Pass
	idx := map[string]int{}
	for _, p := range ps {
		k := fmt.Sprintf("%s|%s|%d|%s", p.Variant, p.Mode, p.Level, p.Phase)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], p)
	}
	return out
}

func pct(a, n int64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(n))
}

func medianNS(g []results.Pass, f func(results.Pass) *int64) string {
	v, ok := medianOf(g, f)
	if !ok {
		return "-"
	}
	return time.Duration(v).Round(durationRounding(time.Duration(v))).String()
}

func medianI(g []results.Pass, f func(results.Pass) *int64) string {
	v, ok := medianOf(g, f)
	if !ok {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", v)
}

func medianF(g []results.Pass, f func(results.Pass) *float64, format string) string {
	v, ok := medianOf(g, f)
	if !ok {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// medianOf is the median over repetitions of a nullable figure (the lower
// middle for an even count, so that the figure is one that was measured);
// false when no repetition has it.
func medianOf[T int64 | float64](g []results.Pass, f func(results.Pass) *T) (float64, bool) {
	var vs []float64
	for _, p := range g {
		if v := f(p); v != nil {
			vs = append(vs, float64(*v))
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	slices.Sort(vs)
	return vs[(len(vs)-1)/2], true
}

func durationRounding(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return 100 * time.Millisecond
	case d >= time.Second:
		return 10 * time.Millisecond
	case d >= time.Millisecond:
		return 10 * time.Microsecond
	default:
		return time.Microsecond
	}
}

// isTerminal reports whether w is a terminal (progress bars need one).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
