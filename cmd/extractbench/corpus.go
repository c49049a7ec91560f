package main

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"

	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/corpus/generate"
	"github.com/extractbench/extractbench/corpus/generate/purchaseorders"
	"github.com/extractbench/extractbench/pipeline/protocol"
)

type corpusCommand struct{ env }

func (c *corpusCommand) Synopsis() string {
	return "check a corpus (counts, duplicates, every error with file:line), generate the default one, or import one"
}

// corpusUsage lists corpus's subcommands.
const corpusUsage = `Usage: extractbench corpus check [-protocol FILE] PATH | generate -seed N -out DIR | import -out DIR SOURCE

Subcommands:
  check     validate a corpus directory or .jsonl file (-protocol FILE: by its declared fields): counts, duplicates, every error with file:line (exit 2 on one)
  generate  write the deterministic default corpus (documents.jsonl, manifest.json), or -n N documents in its proportions
  import    write a corpus directory from a .jsonl of records, or a .csv of expectations beside a folder of ID.txt texts

extractbench corpus SUBCOMMAND -h lists its flags.
`

func (c *corpusCommand) Run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return &usageError{msg: "corpus: want a subcommand: check PATH | generate -seed N -out DIR | import -out DIR SOURCE"}
	}
	switch args[0] {
	case "check":
		return c.check(args[1:])
	case "generate":
		return c.generate(args[1:])
	case "import":
		return c.importCorpus(args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprint(c.stdout, corpusUsage)
		return nil
	default:
		return &usageError{msg: fmt.Sprintf("corpus: unknown subcommand %q%s (want check, generate or import)", args[0], didYouMean(args[0], []string{"check", "generate", "import"}))}
	}
}

func (c *corpusCommand) check(args []string) error {
	fs := newFlags("corpus check [-protocol FILE] [PATH]", "Validate a corpus directory (documents.jsonl + manifest.json) or a .jsonl file."+
		"\n\nWith -protocol, every expectation is judged by the protocol's declared fields (its fields:, or the default date, amount, category):"+
		"\nevery problem is printed as FILE:LINE: FIELD: WHY (exit 2), else one summary line. PATH defaults to the protocol's corpus.", c.env)
	protoPath := fs.String("protocol", "", "judge every expectation by this protocol `FILE`'s fields; PATH defaults to its corpus")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 || (fs.NArg() == 0 && *protoPath == "") {
		return &usageError{msg: "corpus check: want exactly one PATH (or -protocol FILE, whose corpus is checked)"}
	}
	if *protoPath == "" {
		rep, err := corpus.Check(fs.Arg(0))
		if err := checkReadError(err); err != nil {
			return err
		}
		if err := rep.WriteText(c.stdout); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		if !rep.OK() {
			return &usageError{msg: fmt.Sprintf("corpus %s has %d problem(s)", fs.Arg(0), len(rep.Problems))}
		}
		return nil
	}
	p, err := protocol.Load(*protoPath)
	if err != nil {
		return err // every problem of the protocol, exit 2
	}
	rep, err := checkByProtocol(p, fs.Arg(0))
	if err := checkReadError(err); err != nil {
		return err
	}
	if rep.OK() {
		fmt.Fprintln(c.stdout, rep.Summary())
		return nil
	}
	for _, pr := range rep.Problems {
		fmt.Fprintln(c.stdout, pr)
	}
	return &usageError{msg: fmt.Sprintf("corpus %s has %d problem(s) under %s", rep.Path, len(rep.Problems), *protoPath)}
}

// checkByProtocol checks path (the protocol's corpus when "") by the
// protocol's fields.
func checkByProtocol(p *protocol.Protocol, path string) (*corpus.CheckReport, error) {
	exp, declared := p.Expectations()
	if path == "" {
		path = p.ResolvePath(p.Corpus)
		if _, err := os.Stat(path); p.Corpus == corpus.DefaultName || (p.Corpus == "corpus/default" && err != nil) {
			if declared {
				return corpus.CheckDefaultFields(exp)
			}
			return corpus.CheckDefault()
		}
	}
	if declared {
		return corpus.CheckFields(path, exp)
	}
	return corpus.Check(path)
}

// checkReadError is a corpus that cannot be read at all: a usage error
// when it does not exist.
func checkReadError(err error) error {
	if errors.Is(err, iofs.ErrNotExist) {
		return &usageError{msg: "corpus check: " + err.Error()}
	} else if err != nil {
		return fmt.Errorf("corpus check: %w", err)
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
