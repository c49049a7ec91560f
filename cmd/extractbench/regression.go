package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/compare"
)

// regression judges a finished run against a baseline run (nightly jobs):
// a verdict error when acceptance dropped more than margin or p95 E2E at the
// recommended level grew more than latencyRatio. Differences the user
// accepted are recorded in the current run as an event.
func regression(ctx context.Context, w io.Writer, baselineDir, currentDir string, margin, latencyRatio float64, acceptDiffs bool) error {
	v, err := compare.Regression(ctx, baselineDir, currentDir, margin, latencyRatio, acceptDiffs)
	if err != nil {
		return readError("regression", err)
	}
	if len(v.Differences) > 0 {
		if err := recordAccepted(ctx, currentDir, baselineDir, v.Differences); err != nil {
			return fmt.Errorf("regression: record the accepted differences: %w", err)
		}
	}
	fmt.Fprintln(w)
	if err := v.WriteText(w); err != nil {
		return fmt.Errorf("write regression verdict: %w", err)
	}
	if !v.Pass {
		return &verdictError{msg: "regression against " + baselineDir + ": " + strings.Join(v.Reasons, "; ")}
	}
	return nil
}

// recordAccepted stores a baseline_differences_accepted event in the
// current run, so that the accepted comparison stays on record.
func recordAccepted(ctx context.Context, dir, baselineDir string, diffs []string) error {
	st, err := results.Open(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	run, err := st.LatestRun(ctx)
	if err != nil || run == nil {
		return fmt.Errorf("no run in %s (%v)", dir, err)
	}
	return st.AddEvent(ctx, results.Event{RunID: run.RunID, AtMS: time.Now().UnixMilli(), Kind: results.EventBaselineDiffAccepted,
		Detail: "baseline " + baselineDir + ": " + strings.Join(diffs, "; ")})
}

// checkBaseline runs before any request: the baseline directory must hold a
// readable run. It returns the check the run makes of its own manifest once
// its protocol, corpus and schema are read, before anything is created or
// sent: the corpus must be the baseline's (always: results of different
// corpora are never compared), and a new run must measure what the baseline
// measured (prompt, output schema, parse rule, generation, the variants'
// models), unless acceptDiffs. A resumed run's other differences are
// checked after the run, as every run's are.
func checkBaseline(ctx context.Context, baselineDir string, resume, acceptDiffs bool) (func(*extractbench.Manifest) []string, error) {
	base, err := results.LoadRun(ctx, baselineDir)
	if err != nil {
		return nil, &usageError{msg: "run: -baseline: " + err.Error()}
	}
	return func(cur *extractbench.Manifest) []string {
		var problems []string
		if b, c := base.Manifest.Corpus, cur.Corpus; b.SHA256 == "" || b.SHA256 != c.SHA256 {
			problems = append(problems, fmt.Sprintf("-baseline %s ran corpus %.12s (%s, %d documents) and this run's corpus is %.12s (%s, %d documents): results of different corpora are never compared (-accept-baseline-diff does not change that); nothing was run",
				baselineDir, b.SHA256, b.Path, b.Count, c.SHA256, c.Path, c.Count))
		}
		if diffs := compare.ManifestDiffs(&base.Manifest, cur); len(diffs) > 0 && !acceptDiffs && !resume {
			problems = append(problems, fmt.Sprintf("-baseline %s measured something else; nothing was run:\n  %s\n(-accept-baseline-diff compares anyway and records it)",
				baselineDir, strings.Join(diffs, "\n  ")))
		}
		return problems
	}, nil
}
