package progress

import (
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

// TerminalWidth is w's terminal width in columns, 0 when w is no terminal
// (a file, a pipe, a test's buffer): the progress bar and the CLI's summary
// then have no limit.
func TerminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil || width <= 0 {
		return 0
	}
	return width
}

// WrapText breaks every line of s longer than width runes at a space
// (else at width), its continuation indented as it was plus two: the CLI's
// summary and the run's log lines on a terminal.
func WrapText(s string, width int) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, line := range lines {
		body := strings.TrimSuffix(line, "\n")
		nl := line[len(body):]
		indent := body[:len(body)-len(strings.TrimLeft(body, " "))]
		first := true
		for utf8.RuneCountInString(body) > width {
			cut := breakAt(body, width, len(indent))
			b.WriteString(strings.TrimRight(body[:cut], " ") + "\n")
			body = strings.TrimLeft(body[cut:], " ")
			if first {
				indent += "  "
				first = false
			}
			body = indent + body
			if len(indent) >= width/2 { // a deep indent would loop on one word a line
				indent = ""
			}
		}
		b.WriteString(body + nl)
	}
	return b.String()
}

// breakAt is the byte offset where a line longer than width breaks: after
// the last space within width (past the indent), else at width runes.
func breakAt(line string, width, indent int) int {
	runes := 0
	last := -1
	for i, r := range line {
		if runes == width {
			if last > indent {
				return last
			}
			return i
		}
		if r == ' ' && i > indent {
			last = i
		}
		runes++
	}
	return len(line)
}
