package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline"
)

// passBar is one pass's progress: done/total, accepted, failures by class,
// rate and ETA. On a terminal it is a bar; elsewhere a line at the start,
// every Interval, and at the end.
type passBar struct {
	mu       sync.Mutex
	bar      *progressbar.ProgressBar
	plain    bool      // not a terminal: lines instead of a bar
	out      io.Writer // where the bar or the lines go
	total    int
	done     int
	already  int // documents recorded before this invocation (resume)
	start    time.Time
	lastLine time.Time
	label    string
	accepted int
	failures map[extractbench.Failure]int

	// short and maxDesc fit the bar to a narrow terminal (fit.go).
	short   shortLabel
	maxDesc int
}

// startBar draws the pass's bar on a terminal width columns wide.
func (b *passBar) startBar(width int, p pipeline.PassStart) {
	fit := fitBar(width, p.Total, b.label)
	b.maxDesc = fit.maxDesc
	b.short = shortLabel{place: fmt.Sprintf("%d/%d", p.Place, p.Planned), variant: p.Variant,
		where: fmt.Sprintf("%s r%d/%d", shortLevel(p.Mode, p.Phase, p.Level), p.Repetition, p.Repetitions)}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(b.out),
		progressbar.OptionSetDescription(b.barText()),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(fit.bar),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(b.out) }),
	}
	if fit.its {
		opts = append(opts, progressbar.OptionShowIts(), progressbar.OptionSetItsString("doc"))
	}
	b.bar = progressbar.NewOptions(p.Total, opts...)
	if p.Already > 0 {
		_ = b.bar.Set(p.Already)
	}
}

// Add counts one measured request of the pass.
func (b *passBar) Add(rec extractbench.Record) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rec.Accepted {
		b.accepted++
	} else {
		b.failures[rec.Failure]++
	}
	if b.start.IsZero() {
		b.start = time.Now()
	}
	b.done++
	if b.plain && time.Since(b.lastLine) >= Interval && b.done < b.total {
		b.lastLine = time.Now()
		fmt.Fprintf(b.out, "%s  %s\n", b.describe(), b.position())
	}
	if b.bar == nil {
		return
	}
	b.bar.Describe(b.barText())
	_ = b.bar.Add(1)
}

func (b *passBar) describe() string {
	desc := fmt.Sprintf("%s  accepted %d", b.label, b.accepted)
	for _, f := range extractbench.Failures {
		if n := b.failures[f]; n > 0 {
			desc += fmt.Sprintf(" %s %d", f, n)
		}
	}
	return desc
}

// position is done/total with the rate over this invocation and the time
// the rest of the pass needs at that rate.
func (b *passBar) position() string {
	el := time.Since(b.start)
	sent := b.done - b.already
	if sent <= 0 || el <= 0 {
		return fmt.Sprintf("%d/%d", b.done, b.total)
	}
	rate := float64(sent) / el.Seconds()
	eta := time.Duration(float64(b.total-b.done) / rate * float64(time.Second))
	return fmt.Sprintf("%d/%d  %.1f doc/s  elapsed %s  left ~%s", b.done, b.total, rate, eval.FormatDuration(el.Nanoseconds()), eval.FormatDuration(eta.Nanoseconds()))
}

// Finish ends the bar; complete says whether every document was sent (an
// interrupted pass leaves its bar where it stopped).
func (b *passBar) Finish(complete bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.bar != nil && complete:
		_ = b.bar.Finish()
	case b.bar != nil:
		_ = b.bar.Exit()
		fmt.Fprintln(b.out)
	case b.plain:
		state := "done"
		if !complete {
			state = "stopped"
		}
		rate := ""
		if el := time.Since(b.start); el > 0 && b.done > b.already {
			rate = fmt.Sprintf("  %.1f doc/s in %s", float64(b.done-b.already)/el.Seconds(), eval.FormatDuration(el.Nanoseconds()))
		}
		fmt.Fprintf(b.out, "%s  %s %d/%d%s\n", b.describe(), state, b.done, b.total, rate)
	}
}
