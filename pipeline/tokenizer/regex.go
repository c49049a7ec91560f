package tokenizer

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// A tokenizer.json's Split pattern is an Oniguruma/fancy-regex pattern:
// Go's regexp has no lookaround, and its \s is ASCII while theirs is
// Unicode White_Space. matcher runs such a pattern as tokenizers does, one
// top-level alternative at a time in order (leftmost-first, as a
// backtracking engine tries them): an alternative without lookaround runs
// on Go's regexp, anchored; the lookaround forms byte-level tokenizers use
// are hand-coded (lookahead below), and any other is refused by name.

// white is Unicode White_Space as a class body (what \s means to
// Oniguruma and Rust's regex): ASCII controls, U+0085, and Z (Zs, Zl, Zp).
const white = `\t\n\v\f\r\x{85}\p{Z}`

type matcher struct {
	alts  []alternative
	whole *regexp.Regexp // the whole pattern, when no alternative has lookaround
}

// alternative is one top-level branch: a Go regexp anchored at the
// position, or a hand-coded lookahead form.
type alternative struct {
	src string
	re  *regexp.Regexp
	la  func(s string, i int) int // length matched at i, or -1
}

// matchAt is the length of the pattern's match starting at byte i of s, -1
// when none does. An empty match counts as none (tokenizers skips them).
func (m *matcher) matchAt(s string, i int) int {
	for _, a := range m.alts {
		n := -1
		if a.re != nil {
			n = prefixMatch(a.re, s, i)
		} else {
			n = a.la(s, i)
		}
		if n > 0 {
			return n
		}
	}
	return -1
}

func compileSplit(pattern string) (*matcher, error) {
	m := &matcher{}
	lookaround := false
	for _, src := range topLevelAlternatives(pattern) {
		if strings.Contains(src, "(?=") || strings.Contains(src, "(?!") || strings.Contains(src, "(?<") {
			la, err := lookahead(src)
			if err != nil {
				return nil, err
			}
			m.alts = append(m.alts, alternative{src: src, la: la})
			lookaround = true
			continue
		}
		re, err := regexp.Compile(`\A(?:` + translate(src) + `)`)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", src, err)
		}
		m.alts = append(m.alts, alternative{src: src, re: re})
	}
	if !lookaround {
		re, err := regexp.Compile(translate(pattern))
		if err != nil {
			return nil, fmt.Errorf("%q: %w", pattern, err)
		}
		m.whole = re
	}
	return m, nil
}

// topLevelAlternatives splits a pattern at the | outside groups and classes.
func topLevelAlternatives(p string) []string {
	var out []string
	depth, class, start := 0, false, 0
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++
		case class:
			if c == ']' {
				class = false
			}
		case c == '[':
			class = true
			if i+1 < len(p) && p[i+1] == ']' { // a ] first in a class is a literal
				i++
			}
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '|' && depth == 0:
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

// translate rewrites \s and \S (outside and inside classes) to Unicode
// White_Space, so that Go's regexp means what Oniguruma does.
func translate(p string) string {
	var b strings.Builder
	class := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' && i+1 < len(p) {
			switch n := p[i+1]; {
			case n == 's' && class:
				b.WriteString(white)
			case n == 's':
				b.WriteString("[" + white + "]")
			case n == 'S' && !class:
				b.WriteString("[^" + white + "]")
			default:
				b.WriteByte(c)
				b.WriteByte(n)
			}
			i++
			continue
		}
		switch {
		case class && c == ']':
			class = false
		case !class && c == '[':
			class = true
			b.WriteByte(c)
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// digitGroups matches `C{1,3}(?=(?:C{3})*(?!C))` for a class C: digits in
// groups of three aligned on the right (12345 → 12, 345).
var digitGroups = regexp.MustCompile(`^(\\p\{[A-Za-z]+\}|\[[^\]]+\])\{1,3\}\(\?=\(\?:(\\p\{[A-Za-z]+\}|\[[^\]]+\])\{3\}\)\*\(\?!(\\p\{[A-Za-z]+\}|\[[^\]]+\])\)\)$`)

// lookahead hand-codes the lookaround alternatives of byte-level
// tokenizers' patterns (GPT-2, Llama 3, Qwen, extract-llama-15m):
//
//	\s+(?!\S)                        whitespace not followed by a non-space: a run
//	                                 before a word leaves its last character to it
//	C{1,3}(?=(?:C{3})*(?!C))         right-aligned groups of three of class C
//
// Any other is refused.
func lookahead(src string) (func(string, int) int, error) {
	if src == `\s+(?!\S)` {
		ws := regexp.MustCompile(`\A[` + white + `]+`)
		return func(s string, i int) int {
			run := prefixMatch(ws, s, i)
			if run <= 0 {
				return -1
			}
			if i+run == len(s) {
				return run // nothing follows: the whole run
			}
			// Backtrack one character: what follows the shorter run is
			// the run's last character, a space.
			_, last := utf8.DecodeLastRuneInString(s[i : i+run])
			if run-last == 0 {
				return -1
			}
			return run - last
		}, nil
	}
	if g := digitGroups.FindStringSubmatch(src); g != nil && g[1] == g[2] && g[2] == g[3] {
		one := regexp.MustCompile(`\A` + translate(g[1]))
		return func(s string, i int) int {
			var widths []int
			for j := i; j < len(s); {
				w := prefixMatch(one, s, j)
				if w <= 0 {
					break
				}
				widths = append(widths, w)
				j += w
			}
			if len(widths) == 0 {
				return -1
			}
			take := len(widths) % 3
			if take == 0 {
				take = 3
			}
			n := 0
			for _, w := range widths[:take] {
				n += w
			}
			return n
		}, nil
	}
	return nil, fmt.Errorf("the alternative %q uses lookaround this counter does not implement (only %s and %s)", src, `\s+(?!\S)`, `C{1,3}(?=(?:C{3})*(?!C))`)
}

func runeLen(s string, i int) int {
	_, w := utf8.DecodeRuneInString(s[i:])
	return w
}

// window is how much of the text an anchored match first looks at. Go's
// backtracker clears a bitmap the size of its input on every call, so a
// match tried at each position of a long prompt on the whole rest of it is
// quadratic (40 ms for corpus/default's longest prompt; 0.3 ms windowed).
const window = 256

// prefixMatch is the length of re's match (anchored with \A) at byte i of
// s, -1 when none. It matches within a window and widens it while the
// match reaches the window's end: exact for the patterns byte-level
// tokenizers use, whose alternatives are runs of one class (a longer text
// can only extend a match that reached the window's end, never make
// another one preferred).
func prefixMatch(re *regexp.Regexp, s string, i int) int {
	for w := window; ; w *= 2 {
		end := min(len(s), i+w)
		loc := re.FindStringIndex(s[i:end])
		switch {
		case loc == nil:
			return -1 // the alternatives' matches start with one character of their class: none in the window, none at all
		case loc[1] < end-i || end == len(s):
			return loc[1]
		}
	}
}
