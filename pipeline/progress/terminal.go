// Package progress draws a run as it goes (pipeline.Progress): a bar per
// pass on a terminal, a line at a pass's start, every Interval and at its
// end elsewhere (a log, CI), and the run's log lines wrapped to the
// terminal's width. cmd/extractbench wires it into pipeline.Options.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline"
)

// Interval is how often a pass that is not drawn on a terminal prints a
// progress line between its start and its end, so that a long pass is
// never silent.
var Interval = 30 * time.Second

// Terminal is the run's display on the screen it is given: bars when that
// screen is a terminal, lines otherwise.
type Terminal struct {
	screen io.Writer // what the run's writer ends in: its width is the terminal's
	bars   bool      // screen is a terminal: draw bars
}

// New shows a run on screen, the writer the run's Options.Progress
// redacts into.
func New(screen io.Writer) *Terminal {
	f, ok := screen.(*os.File)
	return &Terminal{screen: screen, bars: ok && term.IsTerminal(int(f.Fd()))}
}

var _ pipeline.Progress = (*Terminal)(nil)

// Log writes one log line to w, wrapped to the terminal's width when there
// is one: a wider line would break the bars' redraw into extra screen lines.
func (t *Terminal) Log(w io.Writer, line string) {
	if width := TerminalWidth(t.screen); width > 0 {
		line = WrapText(line, width)
	}
	_, _ = io.WriteString(w, line)
}

// Pass starts showing pass p on w: a bar on a terminal, else its start line.
func (t *Terminal) Pass(w io.Writer, p pipeline.PassStart) pipeline.PassProgress {
	b := &passBar{label: label(p), out: w, total: p.Total, done: p.Already, already: p.Already,
		failures: map[extractbench.Failure]int{}}
	if t.bars {
		b.startBar(TerminalWidth(t.screen), p)
		return b
	}
	b.plain = true
	b.start, b.lastLine = time.Now(), time.Now()
	fmt.Fprintf(w, "%s  started: %d documents", b.label, p.Total)
	if p.Already > 0 {
		fmt.Fprintf(w, " (%d already recorded)", p.Already)
	}
	fmt.Fprintln(w)
	return b
}

// label names a pass: its place in the run, variant, level and repetition.
func label(p pipeline.PassStart) string {
	var what string
	switch {
	case p.Mode == extractbench.ModeBatch:
		what = fmt.Sprintf("batch %d", p.Level)
	case p.Mode == extractbench.ModeRate && p.Level == extractbench.SyncLevel:
		what = "rate sync"
	case p.Mode == extractbench.ModeContext:
		what = fmt.Sprintf("context %s (concurrency %d)", eval.LevelName(extractbench.ModeContext, p.Level), p.Concurrency)
	case p.Phase == extractbench.PhaseProbe:
		what = fmt.Sprintf("rate %d/s (saturation probe)", p.Level)
	case p.Mode == extractbench.ModeRate:
		what = fmt.Sprintf("rate %d/s", p.Level)
	default:
		what = fmt.Sprintf("concurrency %d", p.Level)
	}
	return fmt.Sprintf("pass %d/%d  %s  %s  rep %d/%d", p.Place, p.Planned, p.Variant, strings.TrimSpace(what), p.Repetition, p.Repetitions)
}
