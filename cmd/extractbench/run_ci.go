package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/extractbench/extractbench/results/ci"
)

// ciFlags are run's -junit and -summary-md: the run's verdicts in the
// formats CI systems show natively.
type ciFlags struct {
	junit, summary *string
}

func addCIFlags(fs *flag.FlagSet) ciFlags {
	return ciFlags{
		junit:   fs.String("junit", "", "write the verdicts as JUnit XML to `FILE`: a testsuite per variant, a testcase for its verdict, each level judged and its paired verdict against the first variant"),
		summary: fs.String("summary-md", "", "append a Markdown summary of the verdicts to `FILE` (give $GITHUB_STEP_SUMMARY in a GitHub Actions step)"),
	}
}

// check refuses -junit or -summary-md given an empty path (an unset
// variable: -summary-md "$GITHUB_STEP_SUMMARY" outside GitHub Actions) or
// a flag (the same variable unquoted), before anything runs: the run would
// otherwise measure for hours and write no CI file, saying nothing.
func (f ciFlags) check(fs *flag.FlagSet, cmd string) error {
	for _, name := range []string{"junit", "summary-md"} {
		v := fs.Lookup(name).Value.String()
		switch {
		case flagSet(fs, name) && strings.TrimSpace(v) == "":
			return &usageError{msg: fmt.Sprintf("%s: -%s was given an empty path (an unset variable? $GITHUB_STEP_SUMMARY is set only inside a GitHub Actions step): give a FILE, or leave -%s out", cmd, name, name)}
		case strings.HasPrefix(v, "-"):
			return &usageError{msg: fmt.Sprintf("%s: -%s %s: that is a flag, not a FILE (an unset variable left unquoted?): give a FILE, or leave -%s out", cmd, name, v, name)}
		}
	}
	return nil
}

// asked reports whether a CI file was asked for.
func (f ciFlags) asked() bool { return *f.junit != "" || *f.summary != "" }

// usedDirHint is what a run refused for a results directory that already
// holds a run can do with the CI flags: write the files from that run.
func (f ciFlags) usedDirHint(dir string) string {
	args := ""
	if *f.junit != "" {
		args += " -junit " + *f.junit
	}
	if *f.summary != "" {
		args += " -summary-md " + *f.summary
	}
	return fmt.Sprintf("; for the CI files of the run already there: extractbench report%s %s; for a new run: a fresh -out per run (e.g. -out nightly/$(date +%%F)-$GITHUB_RUN_ID)", args, dir)
}

// write reads the run in dir back and writes the files asked for.
func (f ciFlags) write(ctx context.Context, dir string, stderr io.Writer) error {
	if *f.junit == "" && *f.summary == "" {
		return nil
	}
	run, err := ci.Load(context.WithoutCancel(ctx), dir, ci.Options{})
	if err != nil {
		return fmt.Errorf("read the run back for -junit/-summary-md: %w", err)
	}
	var errs []error
	if *f.junit != "" {
		errs = append(errs, writeCIFile(*f.junit, os.O_TRUNC, run.WriteJUnit))
	}
	if *f.summary != "" {
		errs = append(errs, writeCIFile(*f.summary, os.O_APPEND, run.WriteMarkdown))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, p := range []string{*f.junit, *f.summary} {
		if p != "" {
			fmt.Fprintf(stderr, "wrote %s\n", p)
		}
	}
	return nil
}

// writeCIFile writes one file: mode is os.O_TRUNC (JUnit: the file is the
// run's) or os.O_APPEND (a step summary collects every step's).
func writeCIFile(path string, mode int, write func(io.Writer) error) error {
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|mode, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := write(fh); err != nil {
		fh.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
