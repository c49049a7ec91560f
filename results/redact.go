package results

import (
	"encoding/base64"
	"io"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf16"
	unicodeutf8 "unicode/utf8"

	"github.com/extractbench/extractbench"
)

// Redacted replaces a secret in everything a run writes.
const Redacted = "[redacted]"

// Secrets are the values a run must never write: the API keys of its
// variants and the credentials of their URLs. An engine may echo a key
// (in an error body, in its answer, in its own log), and not always as
// written: JSON escapes it (\u0073\u006b…), Basic auth and some logs
// base64 it. Redact finds each secret written plainly, base64-encoded (at
// any alignment, standard or URL alphabet), percent-encoded, and any of
// these with any of its characters JSON-escaped (\uXXXX, \/, a surrogate
// pair, or escaped again inside a JSON string), and replaces it with
// Redacted. The zero value and nil redact nothing.
type Secrets struct {
	forms []string  // every form looked for, longest first
	first [256]bool // bytes a literal match can begin with
}

// NewSecrets returns the secrets among values (empty ones are left out).
func NewSecrets(values ...string) *Secrets {
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
		add(url.QueryEscape(v))
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

// match results of one form at one position.
const (
	noMatch = iota
	fullMatch
	partialMatch // text ended while every byte so far matched
)

// scan redacts text. With final false a match that may continue past the
// end of text is held back: out covers text[:len(text)-held].
func (s *Secrets) scan(text string, final bool) (out string, held int) {
	if final && strings.IndexByte(text, '\\') < 0 && !s.anyLiteral(text) {
		return text, 0 // no form written plainly, and no escape
	}
	var b strings.Builder
	last := 0 // text[last:i] is not yet copied to b
	for i := 0; i < len(text); {
		c := text[i]
		if c != '\\' && !s.first[c] {
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
// as is or JSON-escaped; end is where a full match ends.
func matchForm(text string, i int, f string) (end, m int) {
	j := i
	for k := 0; k < len(f); {
		r, size := unicodeutf8.DecodeRuneInString(f[k:])
		if r == unicodeutf8.RuneError && size == 1 {
			r = -1 // an invalid byte of f matches only itself
		}
		lit := f[k : k+size]
		k += size
		switch rest := text[j:]; {
		case strings.HasPrefix(rest, lit):
			j += size
			continue
		case strings.HasPrefix(lit, rest):
			return 0, partialMatch
		case rest[0] != '\\' || r < 0:
			return 0, noMatch
		}
		n, m := matchEscape(text[j:], r)
		if m != fullMatch {
			return 0, m
		}
		j += n
	}
	return j, fullMatch
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

// RedactingWriter writes through to w with every secret replaced, even one
// split across writes: the bytes that may begin a secret are held until
// the next write shows whether they do, or until Close. It is safe for
// concurrent use.
type RedactingWriter struct {
	s       *Secrets
	w       io.Writer
	mu      sync.Mutex
	pending string
}

// Writer returns a RedactingWriter to w. Close writes what is held back;
// it does not close w.
func (s *Secrets) Writer(w io.Writer) *RedactingWriter { return &RedactingWriter{s: s, w: w} }

// Write redacts p and writes what can be told apart from a secret.
func (rw *RedactingWriter) Write(p []byte) (int, error) {
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
func (rw *RedactingWriter) Close() error {
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

// storeSecrets is the store's set, replaced as a whole (SetSecrets).
type storeSecrets struct{ p atomic.Pointer[Secrets] }

func (ss *storeSecrets) redact(text string) string { return ss.p.Load().Redact(text) }

// SetSecrets makes the store replace secrets (nil: none) in every text it
// writes from now on: a request's output, error body and details, event and
// decision details, run manifests. The client redacts what it can see;
// this is the last boundary before the disk, whatever path a secret took.
func (s *Store) SetSecrets(secrets *Secrets) { s.secrets.p.Store(secrets) }

// redactRecord is r with its texts redacted.
func (s *Store) redactRecord(r extractbench.Record) extractbench.Record {
	if s.secrets.p.Load().Empty() {
		return r
	}
	r.Output = s.secrets.redact(r.Output)
	r.ErrorBody = s.secrets.redact(r.ErrorBody)
	r.Detail = s.secrets.redact(r.Detail)
	r.FailureDetail = s.secrets.redact(r.FailureDetail)
	r.Endpoint = s.secrets.redact(r.Endpoint)
	for _, p := range []**string{&r.Prediction.Date, &r.Prediction.Amount, &r.Prediction.Category} {
		if *p != nil {
			v := s.secrets.redact(**p)
			*p = &v
		}
	}
	return r
}
