package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

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
