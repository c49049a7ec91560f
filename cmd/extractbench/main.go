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
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/extractbench/extractbench"
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

// env is what every command writes to, and the second signal.
type env struct {
	stdout, stderr io.Writer
	// abandon is closed at the second SIGINT/SIGTERM: a run cancels its
	// requests in flight at once. Nil in tests: never.
	abandon <-chan struct{}
}

func commands(e env) map[string]command {
	return map[string]command{
		"run":            &runCommand{env: e},
		"corpus":         &corpusCommand{env: e},
		"engine":         &engineCommand{env: e},
		"export":         &exportCommand{env: e},
		"merge":          &mergeCommand{env: e},
		"report":         &reportCommand{env: e},
		"compare":        &compareCommand{env: e},
		"memory":         &memoryCommand{env: e},
		"plan":           &planCommand{env: e},
		"select":         &selectCommand{env: e},
		"init":           &initCommand{env: e},
		"print-protocol": &printProtocolCommand{env: e},
	}
}

func main() {
	ctx, abandon := signals()
	os.Exit(dispatch(ctx, os.Args[1:], env{stdout: os.Stdout, stderr: os.Stderr, abandon: abandon}))
}

// signals turns SIGINT and SIGTERM into the run's two steps: the first
// cancels ctx (stop dispatching, let the requests in flight finish within
// the grace period), the second closes abandon (cancel them now; the run is
// still recorded as interrupted, its engine stopped, exit 3). A third
// signal gets the default action: the process ends at once, and -resume
// still completes the run.
func signals() (context.Context, <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	abandon := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel()
		<-sigs
		signal.Stop(sigs)
		close(abandon)
	}()
	return ctx, abandon
}

func dispatch(ctx context.Context, args []string, e env) int {
	cmds := commands(e)
	if len(args) == 0 {
		usage(e.stderr, cmds)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" {
			// help CMD [SUB] is CMD [SUB] -h.
			if _, ok := cmds[args[1]]; ok {
				return dispatch(ctx, append(slices.Clone(args[1:]), "-h"), e)
			}
			return exitCode(e.stderr, unknownCommand(args[1], cmds))
		}
		usage(e.stdout, cmds)
		return exitOK
	case "version", "-version", "--version":
		fmt.Fprintln(e.stdout, versionLine())
		return exitOK
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		return exitCode(e.stderr, unknownCommand(args[0], cmds))
	}
	return exitCode(e.stderr, cmd.Run(ctx, args[1:]))
}

// unknownCommand is the usage error of a command name that is not one,
// with the nearest name when one is close.
func unknownCommand(name string, cmds map[string]command) error {
	names := []string{"help", "version"}
	for n := range cmds {
		names = append(names, n)
	}
	return &usageError{msg: fmt.Sprintf("unknown command %q%s; extractbench help lists the commands", name, didYouMean(name, names))}
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "extractbench measures a model + engine + GPU on a document-extraction corpus.")
	fmt.Fprintln(w, "\nUsage: extractbench <command> [flags]   (extractbench help <command>, or <command> -h, for its flags)")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, cmds[n].Synopsis())
	}
	fmt.Fprintf(w, "  %-8s %s\n", "help", "this list; help COMMAND: that command's flags")
	fmt.Fprintf(w, "  %-8s %s\n", "version", "the version of extractbench and of the Go toolchain that built it")
	fmt.Fprintln(w, "\nExit codes: 0 every verdict passed, 1 a verdict failed, 2 usage or configuration error, 3 infrastructure (I/O, engine) error or interrupted run.")
}

// versionLine is what `extractbench version` prints: the tool version, the
// commit it was built from when the build recorded one, and the toolchain.
func versionLine() string {
	v := "extractbench " + extractbench.ToolVersion
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			v += " (" + rev + dirty + ")"
		}
	}
	return fmt.Sprintf("%s %s %s/%s", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
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
		me *incompleteError
	)
	switch {
	case errors.As(err, &ve):
		fmt.Fprintln(w, "extractbench: verdict failed:", err)
		return exitVerdict
	case errors.As(err, &ue), errors.As(err, &ce), errors.As(err, &pe), errors.As(err, &le), errors.As(err, &va):
		fmt.Fprintln(w, "extractbench:", err)
		return exitUsage
	case errors.As(err, &ie), errors.As(err, &me):
		fmt.Fprintln(w, "extractbench:", err)
		return exitInfra
	default:
		fmt.Fprintln(w, "extractbench:", err)
		return exitInternal
	}
}

// newFlags makes a FlagSet that reports errors instead of exiting. name is
// the usage line after "extractbench" ("run [-protocol FILE] ..."); its
// leading lower-case words are the command ("corpus check"). -h prints the
// usage on stdout; a bad flag is a usage error on stderr (parseFlags).
func newFlags(name, synopsis string, e env) *flag.FlagSet {
	fs := flag.NewFlagSet(commandName(name), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(e.stdout, "Usage: extractbench %s\n\n%s\n\nFlags:\n", name, synopsis)
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// commandName is the leading lower-case words of a usage line.
func commandName(usageLine string) string {
	var words []string
	for _, w := range strings.Fields(usageLine) {
		if strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") != "" {
			break
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// parseFlags parses args: -h prints the usage on stdout (flag.ErrHelp,
// exit 0); a bad flag is a usage error that names the command, suggests the
// nearest flag and says where the flags are listed.
func parseFlags(fs *flag.FlagSet, args []string) error {
	printUsage := fs.Usage
	fs.Usage = func() {} // the flag package calls it on every error; only -h prints it
	err := fs.Parse(args)
	fs.Usage = printUsage
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		printUsage()
		return err
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if near := nearest(name, names); near != "" {
			msg += fmt.Sprintf(" (did you mean -%s?)", near)
		}
	}
	return &usageError{msg: fmt.Sprintf("%s: %s; extractbench %s -h lists its flags", fs.Name(), msg, fs.Name())}
}
