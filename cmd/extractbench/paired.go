package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/compare"
)

// pairedVerdicts pairs every variant of the run in dir with its baseline
// variant (compare.PairedVerdicts); nil for a run of one variant. It also
// says whether the protocol makes the exit code depend on them
// (acceptance.require_equivalent).
func pairedVerdicts(ctx context.Context, dir string) (ps []compare.Paired, require bool, err error) {
	rd, err := results.OpenReadOnly(ctx, dir)
	if err != nil {
		return nil, false, err
	}
	defer rd.Close()
	run, err := rd.Load(ctx)
	if err != nil {
		return nil, false, err
	}
	ps, err = compare.PairedVerdicts(ctx, dir, run)
	return ps, run.Manifest.Acceptance.RequireEquivalent, err
}

// printPaired writes one line per variant paired with the baseline variant.
func printPaired(w io.Writer, ps []compare.Paired, require bool) {
	if len(ps) == 0 {
		return
	}
	gate := "information: the exit code does not depend on it (acceptance.require_equivalent: true makes it)"
	if require {
		gate = "acceptance.require_equivalent: a variant not equivalent fails the run"
	}
	fmt.Fprintf(w, "paired against the baseline variant %s on the same documents (%s):\n", ps[0].Baseline, gate)
	for _, p := range ps {
		fmt.Fprintf(w, "     %s: %s\n", p.Variant, p.Text())
	}
}

// notEquivalent lists the variants whose paired verdict is not EQUIVALENT.
func notEquivalent(ps []compare.Paired) string {
	var out []string
	for _, p := range ps {
		if !p.Equivalent {
			out = append(out, p.Variant+" "+p.Text())
		}
	}
	return strings.Join(out, "; ")
}
