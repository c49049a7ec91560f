package progress

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// barFit is how a pass's bar fits its terminal: the bar's width, whether
// the rate is shown, and the room left for the description (0: no limit).
// A bar line wider than the terminal wraps, and each redraw (a carriage
// return goes back to the start of the last screen line only) becomes a new
// line: 328 lines for 24 passes at 80 columns.
type barFit struct {
	bar     int
	its     bool
	maxDesc int
}

// Bar widths: the full bar, and the least kept on a narrow terminal.
const (
	fullBarWidth   = 20
	narrowBarWidth = 10
)

// fitBar chooses the widest layout whose line fits width columns with the
// description desc (the bar's longest until failures add to it); on a
// narrower terminal the shortest layout, its description cut to the room
// left (passBar.barText). width 0 (unknown) keeps the full layout.
func fitBar(width, total int, desc string) barFit {
	if width <= 0 {
		return barFit{bar: fullBarWidth, its: true}
	}
	// What the bar writes besides the description: "%4d%% |bar| (done/total,
	// 9999 doc/min) [elapsed:left]", the times up to 7 characters each
	// ("59m59s", "1h2m3s"; past that progressbar narrows the bar itself),
	// and a column spare so that the cursor never sits past the last one.
	reserve := func(bar int, its bool) int {
		n := 5 + 1 + bar + 2 + 1 + 2 + 2*len(fmt.Sprint(total)) + 1 + 2 + 7 + 1 + 7 + 1 + 1
		if its {
			n += len(", 9999 doc/min")
		}
		return n
	}
	want := utf8.RuneCountInString(desc) + len("  accepted ") + len(fmt.Sprint(total)) + len(" quality 0000 format 0000")
	for _, f := range []barFit{{bar: fullBarWidth, its: true}, {bar: narrowBarWidth, its: true}, {bar: narrowBarWidth}} {
		if width-reserve(f.bar, f.its) >= want {
			f.maxDesc = width - reserve(f.bar, f.its)
			return f
		}
	}
	return barFit{bar: narrowBarWidth, maxDesc: max(width-reserve(narrowBarWidth, false), 8)}
}

// shortLevel is a pass's level in a few characters, for a narrow bar:
// c16 (concurrency), b8 (batch), 4/s (rate), sync, and the length class of a
// context step.
func shortLevel(mode extractbench.Mode, phase string, level int) string {
	switch {
	case mode == extractbench.ModeBatch:
		return fmt.Sprintf("b%d", level)
	case mode == extractbench.ModeRate && level == extractbench.SyncLevel:
		return "sync"
	case mode == extractbench.ModeRate && phase == extractbench.PhaseProbe:
		return fmt.Sprintf("probe %d/s", level)
	case mode == extractbench.ModeRate:
		return fmt.Sprintf("%d/s", level)
	case mode == extractbench.ModeContext:
		return eval.LevelName(extractbench.ModeContext, level)
	}
	return fmt.Sprintf("c%d", level)
}

// shortLabel is a pass's label for a narrow bar: its place in the run,
// its variant (cut first when room is short) and its level and repetition.
type shortLabel struct{ place, variant, where string }

// barText is the bar's description within its room: the full one when it
// fits, else the short one ("3/8 bf16 c2 r1/2 ok 5 q1": the counts kept,
// the variant's name cut first), cut with an ellipsis if even that is too
// long.
func (b *passBar) barText() string {
	d := b.describe()
	if b.maxDesc <= 0 || utf8.RuneCountInString(d) <= b.maxDesc {
		return d
	}
	var tail strings.Builder
	fmt.Fprintf(&tail, " %s ok %d", b.short.where, b.accepted)
	for _, f := range extractbench.Failures {
		if n := b.failures[f]; n > 0 {
			fmt.Fprintf(&tail, " %s%d", string(f)[:1], n)
		}
	}
	room := b.maxDesc - 1 - utf8.RuneCountInString(b.short.place) - 1 - tail.Len()
	name := []rune(b.short.variant)
	if len(name) > room && room >= 4 {
		name = append(name[:room-1], '…')
	}
	d = b.short.place + " " + string(name) + tail.String()
	if r := []rune(d); len(r) > b.maxDesc-1 {
		d = string(r[:b.maxDesc-2]) + "…"
	}
	return d + " "
}
