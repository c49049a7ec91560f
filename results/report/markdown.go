package report

import (
	"strings"
)

// mdEscaper makes text inert in Markdown: no emphasis, no links, no raw
// HTML, no table breaks. Document text and model output pass through it or
// through mdCode; a report must never carry markup from a document.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"<", "&lt;", ">", "&gt;", "&", "&amp;", "|", `\|`, "#", `\#`,
	"\r\n", " ", "\n", " ", "\r", " ", "\t", " ",
)

// mdText escapes one line of text for Markdown.
func mdText(s string) string { return mdEscaper.Replace(s) }

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
