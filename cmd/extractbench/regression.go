package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/extractbench/extractbench/pipeline"
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
// readable run, and the protocol about to run must measure what it measured
// (prompt, parse rule, generation, the variants' models), unless
// acceptDiffs. A resumed run is checked after the run, as every run is.
func checkBaseline(ctx context.Context, baselineDir, protocolPath string, resume, acceptDiffs bool) error {
	base, err := results.LoadRun(ctx, baselineDir)
	if err != nil {
		return &usageError{msg: "run: -baseline: " + err.Error()}
	}
	if resume {
		return nil
	}
	p, err := pipeline.LoadProtocol(protocolPath)
	if err != nil {
		return nil // the run reports the protocol's own problems
	}
	cur := &results.Manifest{Prompt: p.Prompt, Generation: p.Generation, Parse: p.Parse}
	for _, v := range p.Variants {
		cur.Variants = append(cur.Variants, results.VariantManifest{Name: v.Name,
			Engine: results.EngineInfo{Model: v.Engine.Model, Revision: v.Engine.Revision, Weights: v.Engine.Weights, Kind: v.Engine.Kind}})
	}
	if diffs := compare.ManifestDiffs(&base.Manifest, cur); len(diffs) > 0 && !acceptDiffs {
		return &usageError{msg: fmt.Sprintf("run: -baseline %s measured something else; nothing was run:\n  %s\n(-accept-baseline-diff compares anyway and records it)",
			baselineDir, strings.Join(diffs, "\n  "))}
	}
	return nil
}
