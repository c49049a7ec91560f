package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/creack/pty"
)

// TestExitCode_WrapsOnTerminal: the final error line fits an 80-column
// terminal (compare's "not equivalent" line named two result paths in 105
// columns), and a pipe still gets it whole on one line for scripts.
func TestExitCode_WrapsOnTerminal(t *testing.T) {
	err := &verdictError{msg: "/some/long/results/path/po-run:int4 is not equivalent to /some/long/results/path/po-run:bf16 within ±2.0 points"}
	ptmx, tty, perr := pty.Open()
	if perr != nil {
		t.Skipf("no pseudo-terminal here: %v", perr)
	}
	defer ptmx.Close()
	if e := pty.Setsize(tty, &pty.Winsize{Rows: 50, Cols: 80}); e != nil {
		t.Fatal(e)
	}
	var got bytes.Buffer
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&got, ptmx); close(done) }()
	if code := exitCode(tty, err); code != exitVerdict {
		t.Errorf("exit %d, want %d", code, exitVerdict)
	}
	tty.Close()
	<-done
	text := strings.ReplaceAll(got.String(), "\r", "")
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) < 2 {
		t.Errorf("on an 80-column terminal the error was not wrapped:\n%s", text)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("line of %d columns on an 80-column terminal: %q", n, l)
		}
	}
	var pipe bytes.Buffer
	exitCode(&pipe, err)
	if strings.Count(pipe.String(), "\n") != 1 || !strings.Contains(pipe.String(), "bf16 within ±2.0 points") {
		t.Errorf("off a terminal the error should stay one whole line: %q", pipe.String())
	}
}
