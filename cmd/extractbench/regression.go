package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/extractbench/extractbench/results/compare"
)

// regression judges a finished run against a baseline run (nightly jobs):
// a verdict error when acceptance dropped more than margin or p95 E2E at the
// recommended level grew more than latencyRatio.
func regression(ctx context.Context, w io.Writer, baselineDir, currentDir string, margin, latencyRatio float64) error {
	v, err := compare.Regression(ctx, baselineDir, currentDir, margin, latencyRatio)
	if err != nil {
		return readError("regression", err)
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
