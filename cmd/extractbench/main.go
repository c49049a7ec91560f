// Command extractbench measures whether a model + engine + GPU configuration
// does a document-extraction job well enough, and how hard it can be pushed.
//
// Usage: extractbench <command> [flags]; `extractbench help` lists the commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/pipeline"
)

// Exit codes: nightly jobs rely on them.
const (
	exitOK       = 0 // every verdict passed
	exitVerdict  = 1 // a verdict failed (acceptance, equivalence, regression)
	exitUsage    = 2 // usage or configuration error
	exitInfra    = 3 // infrastructure error (engine unreachable, disk, ...) or an interrupted run
	exitInternal = exitInfra
)

// command is one subcommand: it parses its own flags and calls packages.
type command interface {
	Run(ctx context.Context, args []string) error
	Synopsis() string
}

// env is what every command writes to.
type env struct {
	stdout, stderr io.Writer
}

func commands(e env) map[string]command {
	return map[string]command{
		"run":     &runCommand{env: e},
		"corpus":  &corpusCommand{env: e},
		"engine":  &engineCommand{env: e},
		"export":  &exportCommand{env: e},
		"report":  &reportCommand{env: e},
		"compare": &compareCommand{env: e},
		"memory":  &memoryCommand{env: e},
		"plan":    &planCommand{env: e},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills at once; the run stays resumable even then
	}()
	os.Exit(dispatch(ctx, os.Args[1:], env{stdout: os.Stdout, stderr: os.Stderr}))
}

func dispatch(ctx context.Context, args []string, e env) int {
	cmds := commands(e)
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		usage(e.stderr, cmds)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "extractbench: unknown command %q\n\n", args[0])
		usage(e.stderr, cmds)
		return exitUsage
	}
	return exitCode(e.stderr, cmd.Run(ctx, args[1:]))
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "extractbench measures a model + engine + GPU on a document-extraction corpus.")
	fmt.Fprintln(w, "\nUsage: extractbench <command> [flags]   (extractbench <command> -h for its flags)")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, cmds[n].Synopsis())
	}
	fmt.Fprintln(w, "\nExit codes: 0 every verdict passed, 1 a verdict failed, 2 usage or configuration error, 3 infrastructure error or interrupted run.")
}

// verdictError is a measured result that failed its criteria: exit 1.
type verdictError struct{ msg string }

func (e *verdictError) Error() string { return e.msg }

// usageError is a bad command line: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// interruptedError is a run stopped by a signal: exit 3, resumable.
type interruptedError struct{ dir string }

func (e *interruptedError) Error() string {
	return "interrupted: every finished request is recorded; resume with: extractbench run -resume " + e.dir
}

func exitCode(w io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	var (
		ve *verdictError
		ue *usageError
		ce *pipeline.ConfigError
		pe *pipeline.ProtocolError
		va *pipeline.ValidationError
		le *corpus.LoadError
		ie *interruptedError
	)
	switch {
	case errors.As(err, &ve):
		fmt.Fprintln(w, "extractbench: verdict failed:", err)
		return exitVerdict
	case errors.As(err, &ue), errors.As(err, &ce), errors.As(err, &pe), errors.As(err, &le), errors.As(err, &va):
		fmt.Fprintln(w, "extractbench:", err)
		return exitUsage
	case errors.As(err, &ie):
		fmt.Fprintln(w, "extractbench:", err)
		return exitInfra
	default:
		fmt.Fprintln(w, "extractbench:", err)
		return exitInternal
	}
}

// newFlags makes a FlagSet that reports errors instead of exiting.
func newFlags(name, synopsis string, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		fmt.Fprintf(w, "Usage: extractbench %s\n\n%s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and turns a flag error into a usage error.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{msg: err.Error()}
	}
	return nil
}
