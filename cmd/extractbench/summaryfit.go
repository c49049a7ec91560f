package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline/progress"
)

// tableWidth is the width writeTable's tabwriter gives the table: each
// column its widest cell plus the padding of 2.
func tableWidth(head []string, rows [][]string) int {
	n := 0
	for j := range head {
		n += columnWidth(head, rows, j) + 2
	}
	return n
}

func columnWidth(head []string, rows [][]string, j int) int {
	w := utf8.RuneCountInString(head[j])
	for _, r := range rows {
		if j < len(r) {
			w = max(w, utf8.RuneCountInString(r[j]))
		}
	}
	return w
}

// writeFitTable is writeTable within width columns: while the table is
// wider, the columns named by drop (indexes, first dropped first) are left
// out. width 0 keeps every column.
func writeFitTable(w io.Writer, width int, head []string, rows [][]string, drop ...int) {
	keep := make([]bool, len(head))
	for j := range keep {
		keep[j] = true
	}
	pick := func() ([]string, [][]string) {
		var h []string
		for j, k := range keep {
			if k {
				h = append(h, head[j])
			}
		}
		out := make([][]string, len(rows))
		for i, r := range rows {
			for j, k := range keep {
				if k && j < len(r) {
					out[i] = append(out[i], r[j])
				}
			}
		}
		return h, out
	}
	h, r := pick()
	for _, j := range drop {
		if width == 0 || tableWidth(h, r) <= width {
			break
		}
		keep[j] = false
		h, r = pick()
	}
	writeTable(w, h, r)
}

// failureCell is a level's failures in one cell, for the compact table:
// "0", or each class that occurred with its count ("3 mem 1 qual").
func failureCell(l eval.Level) string {
	var parts []string
	for _, f := range extractbench.Failures {
		if n := l.Failures.Of(f); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, f.Short()))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " ")
}

// fitWriter returns the writer the summary is printed to: out itself when
// width is 0; else a buffer whose lines, at done, are wrapped to width
// (tables are already fitted; a sentence breaks at a space, its
// continuation indented as it was plus two) and written to out.
func fitWriter(out io.Writer, width int) (io.Writer, func()) {
	if width <= 0 {
		return out, func() {}
	}
	var b bytes.Buffer
	return &b, func() { _, _ = io.WriteString(out, progress.WrapText(b.String(), width)) }
}

// addWideFlag is run's -wide: the summary with every column on a terminal
// of any width.
func addWideFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("wide", false, "print every column of the summary tables even when the terminal is narrower (off a terminal they always are)")
}

// summaryWidth is the width the summary fits: the terminal's, or none with -wide.
func summaryWidth(w io.Writer, wide bool) int {
	if wide {
		return 0
	}
	return progress.TerminalWidth(w)
}
