// Package redact is the one matcher of secrets: the API keys and URL
// credentials a run must never store, print or log, in every form an
// engine may echo them. The engine client (pipeline/client) redacts what
// it receives, the store (results) what it writes and the engine's log;
// both ask this package, so that a form one of them finds the other finds
// too.
package redact

import (
	"encoding/base64"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"unicode"
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
	forms []form    // every form looked for, longest first
	first [256]bool // bytes a literal match can begin with
}

// form is one written form of a secret. A key echoed in an error message
// may have changed case (an engine upper-cases it in "INVALID KEY …"), so
// the secret itself is matched in any case; its base64 forms are not, as
// base64 is case-sensitive and a folded fragment would match ordinary text.
type form struct {
	s    string
	fold bool
}

// New returns the secrets among values. Empty values, and values Plain
// says ordinary text may contain, are left out: redacting a dummy key such
// as "ollama" or "0" would rewrite answers, names and numbers.
func New(values ...string) *Secrets {
	s := &Secrets{}
	seen := map[string]bool{}
	add := func(f string, fold bool) {
		if f != "" && !seen[f] {
			seen[f] = true
			s.forms = append(s.forms, form{f, fold})
			s.first[f[0]] = true
			if fold {
				s.first[upper(f[0])], s.first[lower(f[0])] = true, true
			}
		}
	}
	for _, v := range values {
		if Plain(v) != "" {
			continue
		}
		add(v, true)
		for _, f := range base64Forms(v) {
			add(f, false)
		}
	}
	sort.SliceStable(s.forms, func(i, j int) bool { return len(s.forms[i].s) > len(s.forms[j].s) })
	return s
}

// MinSecretLen is the shortest value treated as a secret; a longer one of
// a single kind of character (a word, a number) must reach PlainLen.
const (
	MinSecretLen = 8
	PlainLen     = 16
)

// Plain says why v is not treated as a secret ("" when it is): it is
// empty, shorter than MinSecretLen, or shorter than PlainLen and made of
// one kind of character only (letters of one case, digits), as the dummy
// keys local servers document are ("ollama", "EMPTY", "0", "2024"). Such a
// value is sent to the engine but never redacted: it would match ordinary
// text, and the answer, a variant's name or a URL's host would be rewritten.
func Plain(v string) string {
	n := utf8.RuneCountInString(v)
	switch {
	case v == "":
		return "it is empty"
	case n < MinSecretLen:
		return fmt.Sprintf("it has %d characters, fewer than %d", n, MinSecretLen)
	case n < PlainLen && kinds(v) < 2:
		return fmt.Sprintf("it has %d characters of one kind only (a word or a number), fewer than %d", n, PlainLen)
	}
	return ""
}

// kinds counts the kinds of character in v: lower case, upper case,
// digits, anything else.
func kinds(v string) int {
	var seen [4]bool
	for _, r := range v {
		switch {
		case unicode.IsLower(r):
			seen[0] = true
		case unicode.IsUpper(r):
			seen[1] = true
		case unicode.IsDigit(r):
			seen[2] = true
		default:
			seen[3] = true
		}
	}
	n := 0
	for _, b := range seen {
		if b {
			n++
		}
	}
	return n
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c - 'A' + 'a'
	}
	return c
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
			end, m := matchForm(text, i, f.s, f.fold)
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

// anyLiteral reports whether some form occurs in text as written (in any
// case for a folded form).
func (s *Secrets) anyLiteral(text string) bool {
	for _, f := range s.forms {
		if strings.Contains(text, f.s) || f.fold && containsFold(text, f.s) {
			return true
		}
	}
	return false
}

// containsFold is strings.Contains ignoring ASCII case, without a copy.
func containsFold(text, f string) bool {
	a, b := lower(f[0]), upper(f[0])
	for i := 0; i+len(f) <= len(text); i++ {
		if c := text[i]; (c == a || c == b) && hasPrefix(text[i:], f, true) {
			return true
		}
	}
	return false
}

// hasPrefix is strings.HasPrefix, ignoring case when fold is set.
func hasPrefix(s, prefix string, fold bool) bool {
	if !fold {
		return strings.HasPrefix(s, prefix)
	}
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// matchForm matches form f at text[i:], each of its characters written
// as is or encoded (encodedChar), in any case when fold is set; end is
// where a full match ends.
func matchForm(text string, i int, f string, fold bool) (end, m int) {
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
		case hasPrefix(rest, lit, fold) && !isEscape[lit[0]]:
			j += size
			continue
		case strings.HasPrefix(rest, lit):
			// A character that begins an escape itself ('&', '%', '+',
			// '\'): written as is, or encoded, the rest decides.
			end, m := matchForm(text, j+size, f[k:], fold)
			if m == fullMatch {
				return end, m
			}
			if n, m2 := encodedChar(rest, r, fold); m2 == fullMatch {
				if end2, m3 := matchForm(text, j+n, f[k:], fold); m3 != noMatch {
					return end2, m3
				}
			} else if m2 == partialMatch {
				m = partialMatch
			}
			return 0, m
		case hasPrefix(lit, rest, fold):
			return 0, partialMatch
		case !isEscape[rest[0]] || r < 0:
			return 0, noMatch
		}
		n, m := encodedChar(rest, r, fold)
		if m != fullMatch {
			return 0, m
		}
		j += n
	}
	return j, fullMatch
}

// encodedChar matches r encoded at the start of t: as a JSON escape, its
// UTF-8 bytes percent-encoded, an HTML character reference, or + for a
// space; with fold, r's other ASCII case too.
func encodedChar(t string, r rune, fold bool) (n, m int) {
	if fold && r < utf8.RuneSelf && upper(byte(r)) != lower(byte(r)) {
		n, m = encodedChar(t, rune(lower(byte(r))), false)
		if m == fullMatch {
			return n, m
		}
		n2, m2 := encodedChar(t, rune(upper(byte(r))), false)
		if m2 == fullMatch || m2 == partialMatch {
			return n2, m2
		}
		return n, m
	}
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
