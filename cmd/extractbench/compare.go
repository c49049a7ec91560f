package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results/compare"
)

type compareCommand struct{ env }

func (c *compareCommand) Synopsis() string {
	return "paired equivalence of two variants (DIR:variant or two results directories); exit 1 when not equivalent"
}

func (c *compareCommand) Run(ctx context.Context, args []string) error {
	fs := newFlags("compare [flags] A B", c.Synopsis()+"\n\nA and B are DIR or DIR:variant (the latest run in DIR). B is judged against A, the reference. Exit 4 (INCONCLUSIVE): too few documents to show equivalence at the margin, whatever the answers; the output says how many would do.", c.env)
	margin := fs.Float64("margin", compare.DefaultMargin, "equivalence margin δ on the accepted share, written before the run (0.02 = 2 points)")
	level := fs.String("level", "", "level whose documents are paired, as the tables name it: 8, or in a rate sweep sync or 10/s (default: the baseline, 1 or sync); a level not measured by both is refused with the ones that were")
	rep := fs.Int("repetition", 1, "repetition whose documents are paired")
	mode := fs.String("mode", "", "concurrency | batch | rate | context (default: the mode A ran)")
	asJSON := fs.Bool("json", false, "machine-readable output")
	wide := fs.Bool("wide", false, "print every column and whole output excerpts even when the terminal is narrower (off a terminal they always are)")
	if err := parseFlags(fs, reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return &usageError{msg: "compare: want two sides, A and B (DIR or DIR:variant)"}
	}
	a, err := compare.ParseSide(fs.Arg(0))
	if err != nil {
		return &usageError{msg: "compare: A: " + err.Error()}
	}
	b, err := compare.ParseSide(fs.Arg(1))
	if err != nil {
		return &usageError{msg: "compare: B: " + err.Error()}
	}
	res, err := compare.Run(ctx, compare.Options{A: a, B: b, Mode: extractbench.Mode(*mode), Level: *level, Repetition: *rep, Margin: *margin})
	if err != nil {
		return readError("compare", err)
	}
	if *asJSON {
		err = res.WriteJSON(c.stdout)
	} else {
		width := summaryWidth(c.stdout, *wide)
		w, done := fitWriter(c.stdout, width)
		err = res.WriteTextFit(w, width)
		done()
	}
	if err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	if res.Inconclusive {
		return &inconclusiveError{msg: fmt.Sprintf("%d documents are too few to show %s equivalent to %s within ±%.1f points; %s would do",
			res.Equivalence.N, b, a, 100*res.Margin, res.Equivalence.Needed())}
	}
	if !res.Equivalent {
		return &verdictError{msg: fmt.Sprintf("%s is not equivalent to %s within ±%.1f points", b, a, 100*res.Margin)}
	}
	return nil
}

// reorder moves flags after positional arguments to the front, so that
// `compare A B -margin 0.01` works as well as `compare -margin 0.01 A B`.
func reorder(args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) > 1 && a[0] == '-' {
			flags = append(flags, a)
			if !containsEq(a) && i+1 < len(args) && !isBoolFlag(a) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		pos = append(pos, a)
	}
	return append(flags, pos...)
}

func containsEq(s string) bool {
	for _, r := range s {
		if r == '=' {
			return true
		}
	}
	return false
}

func isBoolFlag(s string) bool {
	switch strings.TrimLeft(s, "-") {
	case "json", "h", "help", "partitioned", "force", "from-default", "quiet", "append", "wide", "checkpointing", "accept-baseline-diff":
		return true
	}
	return false
}
