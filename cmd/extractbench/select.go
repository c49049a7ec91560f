package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/extractbench/extractbench/numfmt"
	"github.com/extractbench/extractbench/results/plan"
	"github.com/extractbench/extractbench/sizing"
)

type selectCommand struct{ env }

func (c *selectCommand) Synopsis() string {
	return "selection sheet across runs: environment, memory, concurrency, quality, throughput, cost and 3/7/30-day plans, ranked"
}

func (c *selectCommand) Run(ctx context.Context, args []string) error {
	fs := newFlags("select [flags] RUN_DIR...", c.Synopsis(), c.env)
	docs := fs.Int("docs", 100000, "documents in the corpus to plan for")
	days := fs.String("days", "3,7,30", "rental lengths in days")
	deadline := fs.Float64("deadline-days", 0, "the cards that finish -docs within this many days (and their cost with -prices)")
	maxCards := fs.Int("max-cards", 0, "with -deadline-days: a configuration needing more cards does not meet the criteria (0 = any)")
	minAcc := fs.Float64("min-accepted", 0, "quality floor over each run's own: the baseline's accepted share (0.95 = 95%)")
	prices := fs.String("prices", "", "price file (YAML, card → price per card-hour; see prices.example.yaml)")
	out := fs.String("out", "", "also write select.md and select.html into this directory")
	asJSON := fs.Bool("json", false, "machine-readable output")
	if err := parseFlags(fs, reorder(args)); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return &usageError{msg: "select: want at least one results directory"}
	}
	crit := plan.SelectCriteria{Docs: *docs, DeadlineDays: *deadline, MaxCards: *maxCards, MinAccepted: *minAcc}
	for _, d := range strings.Split(*days, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(d))
		if err != nil || n <= 0 {
			return &usageError{msg: fmt.Sprintf("select: -days: %q is not a positive number of days", d)}
		}
		crit.Days = append(crit.Days, n)
	}
	if *docs <= 0 {
		return &usageError{msg: "select: -docs: want at least 1 document"}
	}
	var p *sizing.Prices
	if *prices != "" {
		var err error
		if p, err = sizing.LoadPrices(*prices); err != nil {
			return &usageError{msg: "select: -prices: " + err.Error()}
		}
	}
	rows, err := plan.Select(ctx, fs.Args(), crit, p)
	if err != nil {
		return &usageError{msg: err.Error()}
	}
	sheet := tellApart(rows)
	// Runs of emulated cards (an engine with a memory cap) get their own section: the calculator
	// beside the measured boundary. Runs without one leave the sheet as it was.
	margins, err := plan.Margins(ctx, fs.Args())
	if err != nil {
		return &usageError{msg: err.Error()}
	}
	if *out != "" {
		if err := writeSheets(*out, sheet, crit, margins); err != nil {
			return err
		}
	}
	if *asJSON {
		return numfmt.WriteJSON(c.stdout, rows) // each row has its dir
	}
	if err := plan.WriteSelectMarkdown(c.stdout, sheet, crit); err != nil {
		return err
	}
	return plan.WriteMarginMarkdown(c.stdout, margins)
}

// tellApart names the results directory beside the variant of every row
// whose configuration (variant, model, weights, card) another row also
// has: two nights of one protocol would otherwise read as one
// configuration listed twice. The rows are copied; the JSON keeps the
// variant as recorded, beside its dir.
func tellApart(rows []plan.SelectRow) []plan.SelectRow {
	type config struct{ variant, model, weights, gpu string }
	key := func(r plan.SelectRow) config { return config{r.Variant, r.Model, string(r.Weights), r.GPU} }
	n := map[config]int{}
	for _, r := range rows {
		n[key(r)]++
	}
	out := slices.Clone(rows)
	for i, r := range out {
		if n[key(r)] > 1 {
			out[i].Variant = fmt.Sprintf("%s (%s)", r.Variant, r.Dir)
		}
	}
	return out
}

func writeSheets(dir string, rows []plan.SelectRow, crit plan.SelectCriteria, margins []plan.MarginRow) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("select: create %s: %w", dir, err)
	}
	files := map[string]func(f *os.File) error{
		"select.md": func(f *os.File) error {
			if err := plan.WriteSelectMarkdown(f, rows, crit); err != nil {
				return err
			}
			return plan.WriteMarginMarkdown(f, margins)
		},
		"select.html": func(f *os.File) error { return plan.WriteSelectHTML(f, rows, crit) },
	}
	if len(margins) > 0 {
		files["margins.json"] = func(f *os.File) error { return numfmt.WriteJSON(f, margins) }
	}
	for name, write := range files {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("select: %w", err)
		}
		if err := write(f); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("select: close %s: %w", name, err)
		}
	}
	return nil
}
