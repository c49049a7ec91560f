package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/extractbench/extractbench/pipeline/progress"
)

// Exit codes: nightly jobs rely on them.
const (
	exitOK       = 0 // every verdict passed
	exitVerdict  = 1 // a verdict failed (acceptance, equivalence, regression)
	exitUsage    = 2 // usage or configuration error
	exitInfra    = 3 // infrastructure error (engine unreachable, disk, ...) or an interrupted run
	exitInternal = exitInfra
	// exitInconclusive: compare could not decide, too few documents for
	// the margin (no answers could have shown equivalence); measure more.
	exitInconclusive = 4
)

// verdictError is a measured result that failed its criteria: exit 1.
type verdictError struct{ msg string }

func (e *verdictError) Error() string { return e.msg }

// ExitCode is the exit status of a failed verdict.
func (e *verdictError) ExitCode() int { return exitVerdict }

// infraOutcomeError is a run whose variants did not all pass for reasons
// of the infrastructure, not the model (ERROR, INCONCLUSIVE): exit 3.
type infraOutcomeError struct{ msg string }

func (e *infraOutcomeError) Error() string { return e.msg }

// ExitCode is the exit status of an infrastructure outcome.
func (e *infraOutcomeError) ExitCode() int { return exitInfra }

// inconclusiveError is a comparison on too few documents to decide: exit 4.
type inconclusiveError struct{ msg string }

func (e *inconclusiveError) Error() string { return e.msg }

// ExitCode is the exit status of a comparison that could not decide.
func (e *inconclusiveError) ExitCode() int { return exitInconclusive }

// usageError is a bad command line: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// ExitCode is the exit status of a bad command line.
func (e *usageError) ExitCode() int { return exitUsage }

// interruptedError is a run stopped by a signal: exit 3, resumable.
type interruptedError struct{ dir string }

// ExitCode is the exit status of an interrupted, resumable run.
func (e *interruptedError) ExitCode() int { return exitInfra }

func (e *interruptedError) Error() string {
	return "interrupted: every finished request is recorded; resume with: extractbench run -resume " + e.dir
}

// exitCoder is an error that says its exit status: the CLI's own errors,
// and pipeline's and corpus's configuration errors (ExitCode 2).
type exitCoder interface{ ExitCode() int }

// exitPrecedence is the order in which a status found anywhere in an
// error's chain wins: an inconclusive comparison, a failed verdict, then a usage or configuration
// error, then an infrastructure one.
var exitPrecedence = []int{exitInconclusive, exitVerdict, exitUsage, exitInfra}

// exitCode prints err and returns its exit status: the highest in
// exitPrecedence that an error of its chain reports, else exitInternal.
func exitCode(w io.Writer, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	found := map[int]bool{}
	chainCodes(err, found)
	for _, code := range exitPrecedence {
		if found[code] {
			switch code {
			case exitInconclusive:
				printError(w, "extractbench: verdict inconclusive: "+err.Error())
			case exitVerdict:
				printError(w, "extractbench: verdict failed: "+err.Error())
			default:
				printError(w, "extractbench: "+err.Error())
			}
			return code
		}
	}
	printError(w, "extractbench: "+err.Error())
	return exitInternal
}

// printError writes the final error line, wrapped to w's width when w is a
// terminal (a file or a pipe gets it whole, one line as scripts grep it).
func printError(w io.Writer, line string) {
	if width := progress.TerminalWidth(w); width > 0 {
		line = progress.WrapText(line, width)
	}
	fmt.Fprintln(w, line)
}

// chainCodes records the exit status of every error in err's chain (both
// Unwrap forms), as errors.As would visit them.
func chainCodes(err error, found map[int]bool) {
	if err == nil {
		return
	}
	if c, ok := err.(exitCoder); ok {
		found[c.ExitCode()] = true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		chainCodes(u.Unwrap(), found)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			chainCodes(e, found)
		}
	}
}
