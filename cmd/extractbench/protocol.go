package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/protocol"
)

// defaultInitFile is where `extractbench init` writes when no FILE is given.
const defaultInitFile = "protocol.yaml"

type initCommand struct{ env }

func (c *initCommand) Synopsis() string {
	return "write a starter protocol file (only variants is required; every default written beside its key)"
}

func (c *initCommand) Run(ctx context.Context, args []string) error {
	fs := newFlags("init [-url URL -model NAME | -from-default] [-force] [FILE]", c.Synopsis()+
		"\n\nFILE defaults to "+defaultInitFile+". Without -url the variant is the built-in engine, so `extractbench run -protocol FILE` runs at once;"+
		" -from-default writes the protocol `extractbench run` measures when given none (bf16 and int4 on the built-in engine), to edit.", c.env)
	url := fs.String("url", "", "the engine's base URL (http://host:port; a /v1 suffix is dropped); default: the built-in engine")
	model := fs.String("model", "", "the model the engine serves (required with -url)")
	fromDefault := fs.Bool("from-default", false, "write the default run's protocol (pipeline/protocol/default-protocol.yaml: two variants, the tour's run) instead of the one-variant starter")
	force := fs.Bool("force", false, "overwrite FILE if it exists")
	if err := parseFlags(fs, reorder(args)); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return &usageError{msg: "init: at most one FILE"}
	}
	path := defaultInitFile
	if fs.NArg() == 1 {
		path = fs.Arg(0)
	}
	if *url != "" {
		if err := checkEngineURL("init", *url); err != nil {
			return err
		}
		*url = engineBase(*url, c.stderr)
	}
	text, err := starterProtocol("init", *url, *model)
	if *fromDefault {
		if *url != "" || *model != "" {
			return &usageError{msg: "init: -from-default writes the default run's protocol (built-in engine): drop -url and -model, or drop -from-default"}
		}
		text, err = "# Written by extractbench init -from-default: the protocol `extractbench run` measures when given none.\n"+
			"# Run it: extractbench run -protocol FILE -out DIR\n"+string(protocol.DefaultYAML), nil
	}
	if err != nil {
		return err
	}
	// What init writes must parse: the test of the template is this check.
	if _, err := protocol.Parse([]byte(text), path, "."); err != nil {
		return &usageError{msg: "init: " + err.Error()}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if *force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, os.ErrExist) {
		return &usageError{msg: fmt.Sprintf("init: %s exists; give another FILE or -force", path)}
	} else if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return fmt.Errorf("init: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("init: write %s: %w", path, err)
	}
	fmt.Fprintf(c.stdout, "wrote %s; check it with: extractbench print-protocol %s; run it with: extractbench run -protocol %s\n", path, path, path)
	return nil
}

// starterProtocol is init's template with its one variant: the engine at
// url serving model, with more engine keys ("kind: vllm"), or the built-in
// engine when url is "". cmd names the command in usage errors.
func starterProtocol(cmd, url, model string, more ...string) (string, error) {
	variant := "{name: sim-8b, engine: {url: builtin, model: sim-8b}}"
	switch {
	case url != "" && model == "":
		return "", &usageError{msg: cmd + ": -url needs -model (the name the engine's /v1/models lists)"}
	case url != "":
		if err := checkEngineURL(cmd, url); err != nil {
			return "", err
		}
		keys := append([]string{fmt.Sprintf("url: %q", strings.TrimSuffix(url, "/")), fmt.Sprintf("model: %q", model)}, more...)
		variant = fmt.Sprintf("{name: %s, engine: {%s}}", variantName(model), strings.Join(keys, ", "))
	case model != "":
		variant = fmt.Sprintf("{name: %s, engine: {url: builtin, model: %q}}", variantName(model), model)
	}
	return strings.Replace(initTemplate, "%VARIANT%", variant, 1), nil
}

// checkEngineURL refuses an -url that is not http(s).
func checkEngineURL(cmd, url string) error {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return &usageError{msg: fmt.Sprintf("%s: -url %q: want http://host:port or https://host:port", cmd, url)}
	}
	return nil
}

// variantName makes a variant name from a model name: its last path part.
func variantName(model string) string {
	name := model[strings.LastIndex(model, "/")+1:]
	if name == "" {
		return "v"
	}
	return fmt.Sprintf("%q", name)
}

// initTemplate is the starter protocol: every optional key commented out
// with the value a protocol that leaves it out gets.
const initTemplate = `# extractbench protocol. Run it: extractbench run -protocol FILE -out DIR
# Only variants is required. Each commented key shows the value used when it is left out
# (the embedded default protocol's); extractbench print-protocol FILE prints them all.
# Keys and values: schemas/protocol.schema.json; what they mean: README.md, "A protocol".

#name: <this file's name>
#corpus: default                # "default" (the embedded 300 documents), a corpus directory or a .jsonl file
#prompt:
#  system: "You extract fields from business documents. Answer with JSON only."
#  user: "... {{document}}"     # must contain {{document}}; see extractbench print-protocol for the default's text
#output_schema: default         # or a path to a JSON Schema
#guided_decoding: false         # true: send the schema as response_format (json_schema)
#parse: strict                  # strict | lenient
#generation: {max_tokens: 128, temperature: 0, seed: 7}
#acceptance: {min_accepted: 0.95}     # written before the run; add latency_p95_ms: 5000 for a p95 E2E objective
#sweep: {mode: concurrency, levels: [1, 2, 4, 8, 16, 32, 64], repetitions: 3, warmup: 8, on_memory_failure: retry_lower}
#request_timeout: 120s

variants:
  - %VARIANT%
  # An engine extractbench starts, times and stops (vLLM shown; see README for SGLang, llama.cpp, TGI, Ollama):
  #- name: bf16
  #  engine: {url: "http://127.0.0.1:8000", model: meta-llama/Llama-3.1-8B-Instruct,
  #           start: "vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8000", ready_timeout: 600s}
`

type printProtocolCommand struct{ env }

func (c *printProtocolCommand) Synopsis() string {
	return "print the default protocol, or FILE as a run would use it (every default filled in)"
}

func (c *printProtocolCommand) Run(ctx context.Context, args []string) error {
	fs := newFlags("print-protocol [FILE]", c.Synopsis()+
		"\n\nWithout FILE: the embedded default protocol, as written (a starting point: extractbench print-protocol > p.yaml).", c.env)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch fs.NArg() {
	case 0:
		_, err := c.stdout.Write(protocol.DefaultYAML)
		return err
	case 1:
	default:
		return &usageError{msg: "print-protocol: at most one FILE"}
	}
	p, err := protocol.Load(fs.Arg(0))
	if err != nil {
		return err // a *ProtocolError: every problem, exit 2
	}
	// The canonical JSON, re-encoded as block YAML in the same key order.
	var node yaml.Node
	if err := yaml.Unmarshal(p.Canonical(), &node); err != nil {
		return fmt.Errorf("print-protocol: %w", err)
	}
	blockStyle(&node)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&node); err != nil {
		return fmt.Errorf("print-protocol: %w", err)
	}
	fmt.Fprintf(c.stdout, "# %s with every default filled in (extractbench %s)\n", fs.Arg(0), extractbench.ToolVersion)
	_, err = c.stdout.Write(b.Bytes())
	return err
}

// blockStyle turns JSON's flow style into YAML's block style, except for
// lists of numbers ([1, 2, 4]), which read better on one line.
func blockStyle(n *yaml.Node) {
	n.Style &^= yaml.FlowStyle
	if n.Kind == yaml.SequenceNode && len(n.Content) > 0 && n.Content[0].Tag == "!!int" {
		n.Style |= yaml.FlowStyle
	}
	if n.Kind == yaml.ScalarNode && n.Style&yaml.DoubleQuotedStyle != 0 && !strings.ContainsAny(n.Value, "\n:#{}[],&*!|>'\"%@`") && n.Value != "" && n.Tag == "!!str" {
		n.Style &^= yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}
