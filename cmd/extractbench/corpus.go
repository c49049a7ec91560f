package main

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"

	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/corpus/generate"
	"github.com/extractbench/extractbench/corpus/generate/purchaseorders"
)

type corpusCommand struct{ env }

func (c *corpusCommand) Synopsis() string {
	return "check a corpus (counts, duplicates, every error with file:line) or generate the default one"
}

// corpusUsage lists corpus's subcommands.
const corpusUsage = `Usage: extractbench corpus check PATH | generate -seed N -out DIR

Subcommands:
  check     validate a corpus directory or .jsonl file: counts, duplicates, every error with file:line (exit 2 on one)
  generate  write the deterministic default corpus (documents.jsonl, manifest.json), or -n N documents in its proportions

extractbench corpus SUBCOMMAND -h lists its flags.
`

func (c *corpusCommand) Run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return &usageError{msg: "corpus: want a subcommand: check PATH | generate -seed N -out DIR"}
	}
	switch args[0] {
	case "check":
		return c.check(args[1:])
	case "generate":
		return c.generate(args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprint(c.stdout, corpusUsage)
		return nil
	default:
		return &usageError{msg: fmt.Sprintf("corpus: unknown subcommand %q%s (want check or generate)", args[0], didYouMean(args[0], []string{"check", "generate"}))}
	}
}

func (c *corpusCommand) check(args []string) error {
	fs := newFlags("corpus check PATH", "Validate a corpus directory (documents.jsonl + manifest.json) or a .jsonl file.", c.env)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{msg: "corpus check: want exactly one PATH"}
	}
	rep, err := corpus.Check(fs.Arg(0))
	if errors.Is(err, iofs.ErrNotExist) {
		return &usageError{msg: "corpus check: " + err.Error()}
	} else if err != nil {
		return fmt.Errorf("corpus check: %w", err)
	}
	if err := rep.WriteText(c.stdout); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	if !rep.OK() {
		return &usageError{msg: fmt.Sprintf("corpus %s has %d problem(s)", fs.Arg(0), len(rep.Problems))}
	}
	return nil
}

// purchaseOrders names the purchase-order example (examples/purchase-orders).
const purchaseOrders = "purchase-orders"

func (c *corpusCommand) generate(args []string) error {
	fs := newFlags("corpus generate [-example NAME] [-seed N] [-n N] -out DIR", "Write the deterministic default corpus (documents.jsonl, manifest.json), or a corpus of -n documents in its proportions, or an example's corpus.", c.env)
	example := fs.String("example", "", "write the corpus of an example instead of the default one: "+purchaseOrders+" (examples/purchase-orders/corpus, with the default seed)")
	seed := fs.Int64("seed", generate.DefaultSeed, "generator seed (the committed corpus/default uses the default)")
	n := fs.Int("n", generate.DefaultCount, fmt.Sprintf("documents to write, 1 to %d, in the default corpus's proportions of length classes, categories and missing fields; ids doc-0001...", generate.MaxCount))
	out := fs.String("out", "", "output `DIR`")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return &usageError{msg: "corpus generate: -out DIR is required"}
	}
	switch *example {
	case "":
	case purchaseOrders:
		if flagSet(fs, "n") {
			return &usageError{msg: fmt.Sprintf("corpus generate: -n with -example %s: the example has %d documents", purchaseOrders, purchaseorders.Count)}
		}
		if !flagSet(fs, "seed") {
			*seed = purchaseorders.DefaultSeed
		}
		if err := purchaseorders.WriteDir(*out, *seed); err != nil {
			return fmt.Errorf("generate corpus: %w", err)
		}
		fmt.Fprintf(c.stdout, "wrote %s (example %s, seed %d)\n", *out, purchaseOrders, *seed)
		return nil
	default:
		return &usageError{msg: fmt.Sprintf("corpus generate: -example %q: want %s%s", *example, purchaseOrders, didYouMean(*example, []string{purchaseOrders}))}
	}
	if *n < 1 || *n > generate.MaxCount {
		return &usageError{msg: fmt.Sprintf("corpus generate: -n %d: want 1 to %d documents", *n, generate.MaxCount)}
	}
	if err := generate.WriteDirN(*out, *seed, *n); err != nil {
		return fmt.Errorf("generate corpus: %w", err)
	}
	if *n == generate.DefaultCount {
		fmt.Fprintf(c.stdout, "wrote %s (seed %d)\n", *out, *seed)
	} else {
		fmt.Fprintf(c.stdout, "wrote %s (seed %d, %d documents)\n", *out, *seed, *n)
	}
	return nil
}
