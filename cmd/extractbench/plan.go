package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/extractbench/extractbench/numfmt"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/plan"
	"github.com/extractbench/extractbench/sizing"
)

type planCommand struct{ env }

func (c *planCommand) Synopsis() string {
	return "documents per hour/day at the recommended level, the time N documents need, and 3/7/30-day rentals"
}

func (c *planCommand) Run(ctx context.Context, args []string) error {
	fs := newFlags("plan [-docs N] DIR", c.Synopsis(), c.env)
	docs := fs.Int("docs", 100000, "documents in the corpus to plan for")
	days := fs.String("days", "3,7,30", "rental lengths in days")
	prices := fs.String("prices", "", "price file (YAML, card → price per card-hour; see prices.example.yaml): adds cost per 1,000 accepted documents and per rental")
	deadline := fs.Float64("deadline-days", 0, "with -prices: the cards that finish -docs within this many days, and their cost")
	retryShare := fs.Float64("retry-share", 0, "assume this share of the documents (0 to 1) sent again, each once: the run measures no retry, so none is planned unless set")
	asJSON := fs.Bool("json", false, "machine-readable output")
	if err := parseFlags(fs, reorder(args)); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{msg: "plan: want exactly one results directory"}
	}
	var ds []int
	for _, d := range strings.Split(*days, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(d))
		if err != nil || n <= 0 {
			return &usageError{msg: fmt.Sprintf("plan: -days: %q is not a positive number of days", d)}
		}
		ds = append(ds, n)
	}
	run, err := results.LoadRun(ctx, fs.Arg(0))
	if err != nil {
		return readError("plan", err)
	}
	o := plan.PlanOptions{CorpusDocs: *docs, Days: ds}
	if flagSet(fs, "retry-share") {
		if *retryShare < 0 || *retryShare > 1 {
			return &usageError{msg: fmt.Sprintf("plan: -retry-share %g: want a share of the documents, 0 to 1", *retryShare)}
		}
		o.RetryShare = retryShare
	}
	plans, err := plan.PlanRunWith(run, o)
	if err != nil {
		return &usageError{msg: "plan: " + err.Error()}
	}
	if err := plan.MarkPlans(ctx, run, plans); err != nil {
		return readError("plan", err)
	}
	if *prices != "" {
		p, err := sizing.LoadPrices(*prices)
		if err != nil {
			return &usageError{msg: "plan: -prices: " + err.Error()}
		}
		for i := range plans {
			if plans[i].DocsPerHour == 0 {
				continue
			}
			price, err := p.For(plans[i].GPU)
			if err != nil {
				return &usageError{msg: "plan: -prices: variant " + plans[i].Variant + ": " + err.Error()}
			}
			plans[i].AddCost(p, price, *deadline)
		}
	}
	if *asJSON {
		return numfmt.WriteJSON(c.stdout, plans)
	}
	for _, p := range plans {
		if err := p.WriteText(c.stdout); err != nil {
			return fmt.Errorf("write plan: %w", err)
		}
		fmt.Fprintln(c.stdout)
	}
	return nil
}
