package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin"
)

type engineCommand struct{ env }

func (c *engineCommand) Synopsis() string {
	return "serve the built-in simulated engine alone (OpenAI-compatible), for curl, vLLM's bench or GuideLLM"
}

func (c *engineCommand) Run(ctx context.Context, args []string) error {
	switch {
	case len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help"):
		fmt.Fprint(c.stdout, "Usage: extractbench engine serve [-addr HOST:PORT] [-model NAME]\n\nSubcommands:\n  serve  "+c.Synopsis()+"\n\nextractbench engine serve -h lists its flags.\n")
		return nil
	case len(args) == 0:
		return &usageError{msg: "engine: want the subcommand serve: extractbench engine serve -addr 127.0.0.1:8000 -model sim-8b"}
	case args[0] != "serve":
		return &usageError{msg: fmt.Sprintf("engine: unknown subcommand %q%s (want serve: extractbench engine serve -addr 127.0.0.1:8000 -model sim-8b)", args[0], didYouMean(args[0], []string{"serve"}))}
	}
	fs := newFlags("engine serve [-addr HOST:PORT] [-model NAME]", c.Synopsis(), c.env)
	addr := fs.String("addr", "127.0.0.1:8000", "listen address (keep it on loopback: the engine has no authentication)")
	model := fs.String("model", "sim-8b", "served model, one of: "+strings.Join(builtin.Presets(), ", "))
	timeScale := fs.Float64("time-scale", -1, "multiply every modelled duration (1 = an L4's real pace; default: the preset's)")
	onKVFull := fs.String("on-kv-full", "", "queue | preempt | fail (default: the preset's)")
	faults := fs.String("faults", "", "inject faults, e.g. garbage=0.05,oom=0.01 (kinds: "+faultList()+")")
	seed := fs.Int64("seed", 7, "seed of the fault draws")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	p, err := builtin.LookupProfile(*model)
	if err != nil {
		return &usageError{msg: err.Error()}
	}
	if *timeScale >= 0 {
		p.TimeScale = *timeScale
	}
	if *onKVFull != "" {
		p.OnKVFull = *onKVFull
	}
	_, variant := builtin.SplitVariant(*model)
	cfg := builtin.Config{Profile: p, Models: []string{*model}, Variant: variant, Seed: *seed, Version: extractbench.ToolVersion}
	if *faults != "" {
		cfg.FaultRates, err = builtin.ParseFaults(*faults)
		if err != nil {
			return &usageError{msg: err.Error()}
		}
	}
	s, err := builtin.NewServer(cfg)
	if err != nil {
		return &usageError{msg: err.Error()}
	}
	defer s.Close()
	ln, err := net.Listen("tcp", *addr)
	var ae *net.AddrError
	if errors.As(err, &ae) {
		return &usageError{msg: fmt.Sprintf("engine serve: -addr %s: %v", *addr, ae)}
	} else if err != nil {
		return fmt.Errorf("engine serve: listen on %s: %w", *addr, err)
	}
	// Said once the socket listens, with the port it got (-addr :0).
	fmt.Fprintf(c.stderr, "built-in engine (simulated %s on %s, time scale %g) listening on http://%s — Ctrl-C stops it\n",
		p.Name, p.GPUName, p.TimeScale, ln.Addr())
	return s.Serve(ctx, ln)
}

func faultList() string {
	var n []string
	for _, f := range builtin.FaultKinds {
		n = append(n, string(f))
	}
	return strings.Join(n, ", ")
}
