package report

import (
	"strings"
)

// mdEscaper makes text inert in Markdown: no emphasis, no links, no table
// breaks, one line. '<', '>' and '&' are handled by mdText, in context.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"|", `\|`, "#", `\#`,
	"\r\n", " ", "\n", " ", "\r", " ", "\t", " ",
)

// mdText escapes one line of text for Markdown, so that it shows as
// written and carries no markup, and reads as plain text in the .md file
// too: no HTML entities. A '<' is escaped (\<) only where it could open
// raw HTML or an autolink (before a letter, '/', '!' or '?'), an '&' only
// where it could start an entity (before a letter or '#'), a '>' only at
// the start of the line (a block quote); "accepted 87.8% < threshold 90%"
// stays as it is.
func mdText(s string) string {
	s = mdEscaper.Replace(s)
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		next := byte(0)
		if i+1 < len(s) {
			next = s[i+1]
		}
		switch {
		case c == '<' && (isASCIILetter(next) || next == '/' || next == '!' || next == '?'),
			c == '&' && (isASCIILetter(next) || next == '#'),
			c == '>' && strings.TrimLeft(s[:i], " ") == "":
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// mdCode puts text in a code span: shown literally, never a link. Backticks
// inside become quotes (a span cannot hold its own fence reliably across
// renderers) and pipes are escaped, which GitHub's tables honour inside
// spans.
func mdCode(s string) string {
	if s == "" {
		return ""
	}
	s = strings.NewReplacer("`", "'", "|", `\|`, "\r", " ", "\n", " ").Replace(s)
	return "`" + s + "`"
}

// mdTable renders a table as a GitHub-flavoured Markdown table.
func mdTable(t table) string {
	if len(t.Rows) == 0 {
		return "_none_\n"
	}
	var b strings.Builder
	b.WriteString("|")
	for _, h := range t.Head {
		b.WriteString(" " + mdText(h) + " |")
	}
	b.WriteString("\n|")
	for range t.Head {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, row := range t.Rows {
		b.WriteString("|")
		for i, c := range row {
			if i < len(t.Code) && t.Code[i] {
				c = mdCode(c)
			} else {
				c = mdText(c)
			}
			b.WriteString(" " + c + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}
