package tokenizer

import (
	"fmt"
	"regexp"
	"strings"
)

// replaceRE is one `| replace('old', 'new')` filter with Jinja string
// literals in single or double quotes.
var replaceRE = regexp.MustCompile(`^replace\(\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\s*,\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\s*\)$`)

// replaceFilters splits an expression into its value and its replace
// filters; any other filter is refused by name.
func replaceFilters(expr string) (string, [][2]string, error) {
	parts := splitOutsideQuotes(expr, '|')
	var out [][2]string
	for _, f := range parts[1:] {
		f = strings.TrimSpace(f)
		g := replaceRE.FindStringSubmatch(f)
		if g == nil {
			return "", nil, fmt.Errorf("filter %q: not implemented (only replace('old', 'new'))", f)
		}
		old, err := jinjaString(g[1])
		if err != nil {
			return "", nil, err
		}
		repl, err := jinjaString(g[2])
		if err != nil {
			return "", nil, err
		}
		out = append(out, [2]string{old, repl})
	}
	return strings.TrimSpace(parts[0]), out, nil
}

// splitOutsideQuotes cuts s at each sep outside a quoted literal.
func splitOutsideQuotes(s string, sep byte) []string {
	var out []string
	var quote byte
	at := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case quote == 0 && c == sep:
			out = append(out, s[at:i])
			at = i + 1
		}
	}
	return append(out, s[at:])
}

// jinjaString is a quoted Jinja literal's value: Python's escapes \t, \n,
// \r, \\ and the quotes; any other is refused.
func jinjaString(q string) (string, error) {
	body := q[1 : len(q)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			b.WriteByte(body[i])
			continue
		}
		i++
		switch body[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case '\\', '\'', '"':
			b.WriteByte(body[i])
		default:
			return "", fmt.Errorf("string %s: escape \\%c not implemented", q, body[i])
		}
	}
	return b.String(), nil
}

// applyReplace applies Jinja's replace filters in order: each replaces
// every non-overlapping occurrence, left to right, as Python's str.replace.
func applyReplace(s string, repl [][2]string) string {
	for _, r := range repl {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return s
}
