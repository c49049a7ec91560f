//go:build linux || darwin

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/creack/pty"
)

// TestRun_Terminal80 runs the CLI with stdout and stderr on two 80-column
// pseudo-terminals, as a user's terminal would have them, and reads them as
// a terminal draws them: no line may be wider than 80 columns (a wider one
// wraps, and each progress redraw then becomes a new screen line: 328 lines
// for 24 passes), the progress takes one screen line per pass, and the
// summary is the compact table. -wide gives every column back.
func TestRun_Terminal80(t *testing.T) {
	dir := t.TempDir()
	corpus := smallCorpus(t, dir)
	proto := writeFile(t, dir, "p.yaml", fmt.Sprintf(`name: cli
corpus: %s
prompt:
  user: "Extract date, amount and category.\n\n{{document}}"
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1, 2], repetitions: 2, warmup: 1}
variants:
  - name: llama-3.1-8b-instruct-bf16
    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0.05}}
  - name: llama-3.1-8b-instruct-int4
    engine: {url: builtin, model: sim-8b-int4, builtin: {time_scale: 0.05}}
`, corpus))
	const passes = 8 // 2 variants × 2 levels × 2 repetitions
	stdout, stderr := runOnTerminals(t, 80, "run", "-protocol", proto, "-out", filepath.Join(dir, "out"))
	out, progress := drawn(stdout, 80), drawn(stderr, 80)
	t.Logf("stdout: %d lines, widest %d, %d wrapped; stderr: %d lines, widest %d, %d wrapped", out.lines, out.widest, out.wraps, progress.lines, progress.widest, progress.wraps)
	if out.widest > 80 || out.wraps > 0 {
		t.Errorf("stdout: widest line %d columns, %d wrapped; want at most 80, none:\n%s", out.widest, out.wraps, stdout)
	}
	if progress.widest > 80 || progress.wraps > 0 {
		t.Errorf("progress: widest line %d columns, %d wrapped; want at most 80, none:\n%q", progress.widest, progress.wraps, stderr)
	}
	// A line per pass, the engine's start lines, and the run's log lines
	// (a NOT STEADY note on a loaded machine, say), each wrapped to fit.
	if logLines := logScreenLines(stderr, 80); progress.lines > passes+2+logLines {
		t.Errorf("progress takes %d screen lines for %d passes and %d of log:\n%q", progress.lines, passes, logLines, stderr)
	}
	if !strings.Contains(stdout, "(compact:") || strings.Contains(stdout, "TTFT p50") {
		t.Errorf("stdout at 80 columns is not the compact table:\n%s", stdout)
	}
	if !strings.Contains(stderr, "pass 8/8") && !strings.Contains(stderr, "8/8 llama") {
		t.Errorf("the progress never named the last pass:\n%q", stderr)
	}

	wide, _ := runOnTerminals(t, 80, "run", "-quiet", "-wide", "-protocol", proto, "-out", filepath.Join(dir, "wide"))
	if w := drawn(wide, 80); !strings.Contains(wide, "TTFT p50") || w.widest <= 80 {
		t.Errorf("-wide at 80 columns: widest %d, want the full table:\n%s", w.widest, wide)
	}
}

// runOnTerminals runs the CLI in-process with stdout and stderr on two
// pseudo-terminals of cols columns and returns what each received.
func runOnTerminals(t *testing.T, cols uint16, args ...string) (stdout, stderr string) {
	t.Helper()
	var got [2]bytes.Buffer
	var ttys [2]*os.File
	done := make(chan struct{}, 2)
	for i := range ttys {
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Skipf("no pseudo-terminal here: %v", err)
		}
		t.Cleanup(func() { ptmx.Close() })
		if err := pty.Setsize(tty, &pty.Winsize{Rows: 50, Cols: cols}); err != nil {
			t.Fatal(err)
		}
		ttys[i] = tty
		go func() {
			_, _ = io.Copy(&got[i], ptmx) // ends with EIO once tty is closed
			done <- struct{}{}
		}()
	}
	code := dispatch(context.Background(), args, env{stdout: ttys[0], stderr: ttys[1]})
	for _, tty := range ttys {
		tty.Close()
	}
	<-done
	<-done
	if code != exitOK {
		t.Fatalf("%v: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, got[0].String(), got[1].String())
	}
	return got[0].String(), got[1].String()
}

// screen is what a terminal of cols columns shows of a byte stream: the
// lines it took, the widest line written between two line starts (wider
// than cols: it wrapped) and the automatic wraps.
type screen struct{ lines, widest, wraps int }

// logScreenLines is how many screen lines of stderr are log lines, not a
// pass's progress bar (whose every redraw names its documents, "(4/6)").
func logScreenLines(stderr string, cols int) int {
	var log strings.Builder
	for _, line := range strings.SplitAfter(stderr, "\n") {
		if !barLine.MatchString(line) {
			log.WriteString(line)
		}
	}
	return drawn(log.String(), cols).lines
}

var barLine = regexp.MustCompile(`\(\d+/\d+\)`)

func drawn(s string, cols int) screen {
	var sc screen
	col, seg := 0, 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == '\x1b': // CSI: ESC [ parameters, then a final byte 0x40–0x7E
			if i < len(s) && s[i] == '[' {
				i++
				for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
					i++
				}
				i++
			}
		case r == '\r':
			col, seg = 0, 0
		case r == '\n':
			sc.lines++
			col, seg = 0, 0
		case r == '\b':
			col, seg = max(col-1, 0), max(seg-1, 0)
		case r < 0x20:
		default:
			if col == cols {
				sc.wraps++
				sc.lines++
				col = 0
			}
			col++
			seg++
			sc.widest = max(sc.widest, seg)
		}
	}
	if col > 0 {
		sc.lines++
	}
	return sc
}
