package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/extractbench/extractbench/results/report"
	"github.com/extractbench/extractbench/sizing"
)

type reportCommand struct{ env }

func (c *reportCommand) Synopsis() string {
	return "write report.html (self-contained, offline) and report.md for a results directory"
}

func (c *reportCommand) Run(ctx context.Context, args []string) error {
	fs := newFlags("report [-prices FILE] [-junit FILE] [-summary-md FILE] DIR", c.Synopsis(), c.env)
	pricesPath := fs.String("prices", "", "price file (YAML: card → price per hour; see prices.example.yaml): cost per 1,000 accepted documents in each selection sheet")
	ciOut := addCIFlags(fs) // a merged night's CI files: run_ci.go
	if err := parseFlags(fs, reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{msg: "report: want exactly one results directory"}
	}
	if err := ciOut.check(fs, "report"); err != nil {
		return err
	}
	dir := fs.Arg(0)
	if err := requireResults("report", dir, true); err != nil {
		return err
	}
	var opts report.Options
	if *pricesPath != "" {
		p, err := sizing.LoadPrices(*pricesPath)
		if err != nil {
			return &usageError{msg: "report: -prices: " + err.Error()}
		}
		opts.Prices = p
	}
	if err := report.WriteWith(ctx, dir, opts); err != nil {
		return readError("report", err)
	}
	fmt.Fprintf(c.stdout, "%s\n%s\n", filepath.Join(dir, "report.html"), filepath.Join(dir, "report.md"))
	return ciOut.write(ctx, dir, c.stderr)
}
