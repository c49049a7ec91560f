package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/extractbench/extractbench"
)

// LevelName writes a level as the pages show it: the number, or in rate
// mode "40/s" (requests per second) and "sync" for the synchronous baseline,
// in context mode the length class ("long"). ParseLevel reads it back.
func LevelName(mode extractbench.Mode, level int) string {
	switch {
	case mode == extractbench.ModeRate && level == extractbench.SyncLevel:
		return "sync"
	case mode == extractbench.ModeRate:
		return strconv.Itoa(level) + "/s"
	case mode == extractbench.ModeContext && extractbench.LengthClassOf(level) != "":
		return extractbench.LengthClassOf(level)
	}
	return strconv.Itoa(level)
}

// LevelLabel is a level with its mode, as a sentence names it: "rate sync",
// "rate 40/s", "concurrency 8", "batch 16", "context long". Every page that
// names a level in prose writes it so.
func LevelLabel(mode extractbench.Mode, level int) string {
	if mode == "" {
		return "level " + LevelName(mode, level)
	}
	return string(mode) + " " + LevelName(mode, level)
}

// ParseLevel reads a level as a user writes it for mode: what LevelName
// writes ("sync", "40/s", "long") or the bare number ("40"). A rate sweep's
// sync baseline is also "0", its stored level.
func ParseLevel(mode extractbench.Mode, text string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(text))
	switch {
	case mode == extractbench.ModeRate && t == "sync":
		return extractbench.SyncLevel, nil
	case mode == extractbench.ModeRate:
		t = strings.TrimSuffix(t, "/s")
	case mode == extractbench.ModeContext:
		for i, c := range extractbench.LengthClasses {
			if t == c {
				return i + 1, nil
			}
		}
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("level %q: %s", text, levelSyntax(mode))
	}
	return n, nil
}

// levelSyntax says how mode's levels are written.
func levelSyntax(mode extractbench.Mode) string {
	switch mode {
	case extractbench.ModeRate:
		return "want sync or a rate (10 or 10/s)"
	case extractbench.ModeContext:
		return "want a length class (" + strings.Join(extractbench.LengthClasses, ", ") + ")"
	case extractbench.ModeBatch:
		return "want a batch size (1, 8, …)"
	}
	return "want a number of requests in flight (1, 8, …)"
}

// LevelNames writes levels as LevelName does, joined by commas: the list a
// refusal offers.
func LevelNames(mode extractbench.Mode, levels []int) string {
	out := make([]string, len(levels))
	for i, l := range levels {
		out[i] = LevelName(mode, l)
	}
	return strings.Join(out, ", ")
}
