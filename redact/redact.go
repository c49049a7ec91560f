// Package redact is the one matcher of secrets: the API keys and URL
// credentials a run must never store, print or log, in every form an
// engine may echo them. The engine client (pipeline/client) redacts what
// it receives, the store (results) what it writes and the engine's log;
// both ask this package, so that a form one of them finds the other finds
// too.
package redact

import (
	"encoding/base64"
	"io"
	"sort"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// Redacted is what replaces a secret.
const Redacted = "[redacted]"

// Secrets is a set of secrets and the forms they are looked for in: an
// engine may echo a key escaped (JSON, percent-encoding, HTML references,
// base64 at any alignment), each character on its own. Redact replaces each
// form with Redacted. The zero value and nil redact nothing; it is safe for
// concurrent use.
type Secrets struct {
	forms []string  // every form looked for, longest first
	first [256]bool // bytes a literal match can begin with
}

// New returns the secrets among values (empty ones are left out).
func New(values ...string) *Secrets {
	s := &Secrets{}
	seen := map[string]bool{}
	add := func(f string) {
		if f != "" && !seen[f] {
			seen[f] = true
			s.forms = append(s.forms, f)
			s.first[f[0]] = true
		}
	}
	for _, v := range values {
		if v == "" {
			continue
		}
		add(v)
		for _, f := range base64Forms(v) {
			add(f)
		}
	}
	sort.SliceStable(s.forms, func(i, j int) bool { return len(s.forms[i]) > len(s.forms[j]) })
	return s
}

// minBase64Form is the shortest base64 fragment looked for: a shorter one
// (of a short secret) would be found by chance in ordinary text.
const minBase64Form = 8

// base64Forms are the characters that encode v whatever precedes it in
// the encoded text: for each of the three alignments of v within 3-byte
// groups and each alphabet, the characters that depend on v's bytes alone.
func base64Forms(v string) []string {
	var out []string
	for k := 0; k < 3; k++ {
		in := strings.Repeat("\x00", k) + v
		skip := (8*k + 5) / 6  // characters that carry bits of what precedes v
		end := 8 * len(in) / 6 // the last, partial character carries bits of what follows
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			if f := enc.EncodeToString([]byte(in)); end-skip >= minBase64Form {
				out = append(out, f[skip:end])
			}
		}
	}
	return out
}

// Empty reports whether there is nothing to redact.
func (s *Secrets) Empty() bool { return s == nil || len(s.forms) == 0 }

// Redact returns text with every secret replaced by Redacted.
func (s *Secrets) Redact(text string) string {
	if s.Empty() {
		return text
	}
	out, _ := s.scan(text, true)
	return out
}

// escapes are the bytes an encoded character begins with: a JSON escape,
// a percent-encoded byte, an HTML character reference, a space as +.
const escapes = `\%&+`

// isEscape is escapes as a table.
var isEscape = func() (t [256]bool) {
	for i := range len(escapes) {
		t[escapes[i]] = true
	}
	return t
}()

// match results of one form at one position.
const (
	noMatch = iota
	fullMatch
	partialMatch // text ended while every byte so far matched
)

// scan redacts text. With final false a match that may continue past the
// end of text is held back: out covers text[:len(text)-held].
func (s *Secrets) scan(text string, final bool) (out string, held int) {
	if final && !strings.ContainsAny(text, escapes) && !s.anyLiteral(text) {
		return text, 0 // no form written plainly, and no escape
	}
	var b strings.Builder
	last := 0 // text[last:i] is not yet copied to b
	for i := 0; i < len(text); {
		c := text[i]
		if !isEscape[c] && !s.first[c] {
			i++
			continue
		}
		best, partial := 0, false
		for _, f := range s.forms {
			end, m := matchForm(text, i, f)
			switch {
			case m == partialMatch:
				partial = true
			case m == fullMatch && end > best:
				best = end
			}
		}
		if partial && !final {
			b.WriteString(text[last:i])
			return b.String(), len(text) - i
		}
		if best == 0 {
			i++
			continue
		}
		b.WriteString(text[last:i])
		b.WriteString(Redacted)
		i, last = best, best
	}
	if last == 0 {
		return text, 0
	}
	b.WriteString(text[last:])
	return b.String(), 0
}

// anyLiteral reports whether some form occurs in text as written.
func (s *Secrets) anyLiteral(text string) bool {
	for _, f := range s.forms {
		if strings.Contains(text, f) {
			return true
		}
	}
	return false
}

// matchForm matches form f at text[i:], each of its characters written
// as is or encoded (encodedChar); end is where a full match ends.
func matchForm(text string, i int, f string) (end, m int) {
	j := i
	for k := 0; k < len(f); {
		r, size := utf8.DecodeRuneInString(f[k:])
		if r == utf8.RuneError && size == 1 {
			r = -1 // an invalid byte of f matches only itself
		}
		lit := f[k : k+size]
		k += size
		rest := text[j:]
		switch {
		case strings.HasPrefix(rest, lit) && !isEscape[lit[0]]:
			j += size
			continue
		case strings.HasPrefix(rest, lit):
			// A character that begins an escape itself ('&', '%', '+',
			// '\'): written as is, or encoded, the rest decides.
			end, m := matchForm(text, j+size, f[k:])
			if m == fullMatch {
				return end, m
			}
			if n, m2 := encodedChar(rest, r); m2 == fullMatch {
				if end2, m3 := matchForm(text, j+n, f[k:]); m3 != noMatch {
					return end2, m3
				}
			} else if m2 == partialMatch {
				m = partialMatch
			}
			return 0, m
		case strings.HasPrefix(lit, rest):
			return 0, partialMatch
		case !isEscape[rest[0]] || r < 0:
			return 0, noMatch
		}
		n, m := encodedChar(rest, r)
		if m != fullMatch {
			return 0, m
		}
		j += n
	}
	return j, fullMatch
}

// encodedChar matches r encoded at the start of t: as a JSON escape, its
// UTF-8 bytes percent-encoded, an HTML character reference, or + for a
// space.
func encodedChar(t string, r rune) (n, m int) {
	switch t[0] {
	case '\\':
		return matchEscape(t, r)
	case '%':
		return matchPercent(t, r)
	case '&':
		return matchReference(t, r)
	case '+':
		if r == ' ' {
			return 1, fullMatch
		}
	}
	return 0, noMatch
}

// matchPercent matches %XX of each UTF-8 byte of r, hex digits in either case.
func matchPercent(t string, r rune) (n, m int) {
	var buf [utf8.UTFMax]byte
	j := 0
	for _, x := range buf[:utf8.EncodeRune(buf[:], r)] {
		for d, want := range [3]int{'%', int(x >> 4), int(x & 0xF)} {
			if j == len(t) {
				return 0, partialMatch
			}
			if d == 0 && t[j] != '%' || d > 0 && hexValue(t[j]) != want {
				return 0, noMatch
			}
			j++
		}
	}
	return j, fullMatch
}

// matchReference matches an HTML character reference of r: &#DDD; or
// &#xHHH; (x and the digits in either case), with any leading zeros.
func matchReference(t string, r rune) (n, m int) {
	const prefix = "&#"
	if len(t) < len(prefix) {
		if strings.HasPrefix(prefix, t) {
			return 0, partialMatch
		}
		return 0, noMatch
	}
	if !strings.HasPrefix(t, prefix) {
		return 0, noMatch
	}
	j, base := len(prefix), 10
	if j < len(t) && (t[j] == 'x' || t[j] == 'X') {
		j, base = j+1, 16
	}
	v, digits := 0, 0
	for ; j < len(t); j++ {
		d := hexValue(t[j])
		if d < 0 || d >= base {
			break
		}
		if v = v*base + d; v > utf8.MaxRune {
			return 0, noMatch
		}
		digits++
	}
	switch {
	case j == len(t):
		return 0, partialMatch
	case digits == 0 || t[j] != ';' || rune(v) != r:
		return 0, noMatch
	}
	return j + 1, fullMatch
}

// matchEscape matches a JSON escape of r at the start of t: \uXXXX (a
// surrogate pair beyond the BMP), a short escape (\/, \n, …), each
// possibly escaped again (\\u0073, as a JSON string inside a JSON string).
func matchEscape(t string, r rune) (n, m int) {
	bs := 0
	for bs < len(t) && t[bs] == '\\' {
		bs++
	}
	if bs == len(t) {
		return 0, partialMatch
	}
	if bs&(bs-1) != 0 { // 1, 2, 4 … backslashes: one escape, escaped again and again
		return 0, noMatch
	}
	prefix := t[:bs]
	if short, ok := shortEscapes[t[bs]]; ok {
		if short == r {
			return bs + 1, fullMatch
		}
		return 0, noMatch
	}
	if t[bs] != 'u' {
		return 0, noMatch
	}
	units := []rune{r}
	if r > 0xFFFF {
		hi, lo := utf16.EncodeRune(r)
		units = []rune{hi, lo}
	}
	j := bs
	for ui, u := range units {
		if ui > 0 {
			if !strings.HasPrefix(t[j:], prefix) {
				if strings.HasPrefix(prefix, t[j:]) {
					return 0, partialMatch
				}
				return 0, noMatch
			}
			j += bs
		}
		if j == len(t) {
			return 0, partialMatch
		}
		if t[j] != 'u' {
			return 0, noMatch
		}
		j++
		v := rune(0)
		for d := 0; d < 4; d++ {
			if j == len(t) {
				return 0, partialMatch
			}
			h := hexValue(t[j])
			if h < 0 {
				return 0, noMatch
			}
			v = v<<4 | rune(h)
			j++
		}
		if v != u {
			return 0, noMatch
		}
	}
	return j, fullMatch
}

// shortEscapes are JSON's two-character escapes and what they stand for.
var shortEscapes = map[byte]rune{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func hexValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// Writer writes through to an io.Writer with every secret replaced, even
// one split across writes: the bytes that may begin a secret are held
// until the next write shows whether they do, or until Close. It is safe
// for concurrent use.
type Writer struct {
	s       *Secrets
	w       io.Writer
	mu      sync.Mutex
	pending string
}

// Writer returns a Writer to w. Close writes what is held back; it does
// not close w.
func (s *Secrets) Writer(w io.Writer) *Writer { return &Writer{s: s, w: w} }

// Write redacts p and writes what can be told apart from a secret.
func (rw *Writer) Write(p []byte) (int, error) {
	if rw.s.Empty() {
		return rw.w.Write(p)
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	text := rw.pending + string(p)
	out, held := rw.s.scan(text, false)
	rw.pending = text[len(text)-held:]
	if _, err := io.WriteString(rw.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close writes what was held back.
func (rw *Writer) Close() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.pending == "" {
		return nil
	}
	out := rw.s.Redact(rw.pending)
	rw.pending = ""
	_, err := io.WriteString(rw.w, out)
	return err
}
