package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/extractbench/extractbench/results/report"
)

type reportCommand struct{ env }

func (c *reportCommand) Synopsis() string {
	return "write report.html (self-contained, offline) and report.md for a results directory"
}

func (c *reportCommand) Run(ctx context.Context, args []string) error {
	fs := newFlags("report DIR", c.Synopsis(), c.env)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{msg: "report: want exactly one results directory"}
	}
	dir := fs.Arg(0)
	if err := requireResults("report", dir); err != nil {
		return err
	}
	if err := report.Write(ctx, dir); err != nil {
		return readError("report", err)
	}
	fmt.Fprintf(c.stdout, "%s\n%s\n", filepath.Join(dir, "report.html"), filepath.Join(dir, "report.md"))
	return nil
}
