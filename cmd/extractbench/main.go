// Command extractbench measures whether a model + engine + GPU configuration
// does a document-extraction job well enough, and how hard it can be pushed.
//
// Usage: extractbench <command> [flags]; `extractbench help` lists the commands.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"syscall"

	"github.com/extractbench/extractbench"
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

// commit is the commit the binary was built from, set at link time
// (go build -ldflags "-X main.commit=$(git rev-parse --short=12 HEAD)",
// as scripts/build.sh and scripts/image.sh do): a build without VCS
// stamping (-buildvcs=false, a tarball, a container context without .git)
// records none in its build info.
var commit string

// versionLine is what `extractbench version` prints: the tool version, the
// commit it was built from (the linked-in commit, else the build's VCS
// stamp), and the toolchain.
func versionLine() string {
	v := "extractbench " + extractbench.ToolVersion
	if commit != "" {
		return fmt.Sprintf("%s (%s) %s %s/%s", v, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
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
