// Package jsonscan is the one small JSON scanner of the hot paths that
// decode a known shape without reflection: the corpus reading a record back
// (corpus) and the engine client decoding each SSE chunk (pipeline/client).
// Each builds its shape's decoder on a Scanner and leaves anything the
// scanner is not sure of to json.Unmarshal: a method returns false on an
// escaped key, invalid UTF-8, a surrogate escape or a syntax error, never
// guesses, so that a fast path and json.Unmarshal give the same value or the
// fast path gives way (the callers' fuzz tests hold the two equal).
package jsonscan

import (
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds nesting in skipped values; a deeper document is left to
// json.Unmarshal.
const MaxDepth = 64

// Scanner reads the JSON in B from I; each method consumes what it reads
// and returns false on anything its caller must leave to json.Unmarshal.
type Scanner struct {
	B []byte
	I int
}

// Done reports whether only whitespace is left.
func (s *Scanner) Done() bool {
	s.WS()
	return s.I == len(s.B)
}

// WS skips whitespace.
func (s *Scanner) WS() {
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case ' ', '\t', '\n', '\r':
			s.I++
		default:
			return
		}
	}
}

// Once marks bit in seen, failing on a duplicate key: json.Unmarshal merges
// duplicates in ways not worth copying.
func (s *Scanner) Once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// FoldsTo reports whether key is not plain ASCII or matches one of names
// case-insensitively: json.Unmarshal would match such a key to a field.
func FoldsTo(key []byte, names ...string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return true
		}
	}
	for _, n := range names {
		if len(key) == len(n) && strings.EqualFold(string(key), n) {
			return true
		}
	}
	return false
}

// Lit consumes the literal w.
func (s *Scanner) Lit(w string) bool {
	if len(s.B)-s.I >= len(w) && string(s.B[s.I:s.I+len(w)]) == w {
		s.I += len(w)
		return true
	}
	return false
}

// Null consumes a null literal if one is next.
func (s *Scanner) Null() bool {
	return s.I < len(s.B) && s.B[s.I] == 'n' && s.Lit("null")
}

// Object reads {"key": value, ...}, calling field with the key (escapes
// refused) positioned at the value; field must consume the value.
func (s *Scanner) Object(field func(key []byte) bool) bool {
	if s.I >= len(s.B) || s.B[s.I] != '{' {
		return false
	}
	s.I++
	s.WS()
	if s.I < len(s.B) && s.B[s.I] == '}' {
		s.I++
		return true
	}
	for {
		key, ok := s.RawString()
		if !ok {
			return false
		}
		s.WS()
		if s.I >= len(s.B) || s.B[s.I] != ':' {
			return false
		}
		s.I++
		s.WS()
		if !field(key) {
			return false
		}
		if end, ok := s.sep('}'); !ok || end {
			return ok
		}
	}
}

// Array reads [value, ...], calling elem positioned at each value.
func (s *Scanner) Array(elem func() bool) bool {
	if s.I >= len(s.B) || s.B[s.I] != '[' {
		return false
	}
	s.I++
	s.WS()
	if s.I < len(s.B) && s.B[s.I] == ']' {
		s.I++
		return true
	}
	for {
		if !elem() {
			return false
		}
		if end, ok := s.sep(']'); !ok || end {
			return ok
		}
	}
}

// sep consumes what follows a member or element: a comma (end false, then
// the next one's leading space) or the closing byte (end true); ok is false
// on anything else.
func (s *Scanner) sep(closing byte) (end, ok bool) {
	s.WS()
	if s.I >= len(s.B) {
		return false, false
	}
	switch s.B[s.I] {
	case ',':
		s.I++
		s.WS()
		return false, true
	case closing:
		s.I++
		return true, true
	}
	return false, false
}

// RawString reads a string with no escapes, only valid UTF-8 and no
// control bytes, returning its bytes.
func (s *Scanner) RawString() ([]byte, bool) {
	if s.I >= len(s.B) || s.B[s.I] != '"' {
		return nil, false
	}
	start := s.I + 1
	for j := start; j < len(s.B); j++ {
		switch c := s.B[j]; {
		case c == '"':
			s.I = j + 1
			v := s.B[start:j]
			return v, utf8.Valid(v)
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// Str reads a string value, decoding its escapes into one allocation (a
// strings.Builder's, not copied again). Surrogate escapes, invalid UTF-8
// (which json.Unmarshal replaces with U+FFFD) and control bytes are refused.
func (s *Scanner) Str() (string, bool) {
	if s.I >= len(s.B) || s.B[s.I] != '"' {
		return "", false
	}
	start := s.I + 1
	j := start
	for j < len(s.B) && s.B[j] != '"' && s.B[j] != '\\' && s.B[j] >= 0x20 {
		j++
	}
	if j < len(s.B) && s.B[j] == '"' { // no escape: one copy
		v := s.B[start:j]
		if !utf8.Valid(v) {
			return "", false
		}
		s.I = j + 1
		return string(v), true
	}
	var out strings.Builder
	out.Grow(len(s.B) - start) // the rest of the input bounds the string
	out.Write(s.B[start:j])
	valid := utf8.Valid(s.B[start:j]) // an escape decodes to whole runes, so the runs between escapes are checked apart
	for j < len(s.B) {
		c := s.B[j]
		switch {
		case c == '"':
			if !valid {
				return "", false
			}
			s.I = j + 1
			return out.String(), true
		case c < 0x20:
			return "", false
		case c != '\\':
			k := j + 1
			for k < len(s.B) && s.B[k] != '"' && s.B[k] != '\\' && s.B[k] >= 0x20 {
				k++
			}
			valid = valid && utf8.Valid(s.B[j:k])
			out.Write(s.B[j:k])
			j = k
			continue
		}
		if j+1 >= len(s.B) {
			return "", false
		}
		switch e := s.B[j+1]; e {
		case '"', '\\', '/':
			out.WriteByte(e)
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		case 'n':
			out.WriteByte('\n')
		case 'r':
			out.WriteByte('\r')
		case 't':
			out.WriteByte('\t')
		case 'u':
			r, ok := hex4(s.B[j+2:])
			if !ok || utf16.IsSurrogate(r) {
				return "", false
			}
			out.WriteRune(r)
			j += 4
		default:
			return "", false
		}
		j += 2
	}
	return "", false
}

// OptStr reads a string or null (null true), as json.Unmarshal fills a
// *string: nil for null.
func (s *Scanner) OptStr() (v string, null, ok bool) {
	if s.Null() {
		return "", true, true
	}
	v, ok = s.Str()
	return v, false, ok
}

// skipString consumes a string, checking its escapes and that it has no
// control bytes, without decoding it (json.Unmarshal accepts invalid UTF-8
// in a value it discards).
func (s *Scanner) skipString() bool {
	for j := s.I + 1; j < len(s.B); j++ {
		switch c := s.B[j]; {
		case c == '"':
			s.I = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if j+1 >= len(s.B) {
				return false
			}
			switch s.B[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if _, ok := hex4(s.B[j+2:]); !ok {
					return false
				}
				j += 5
			default:
				return false
			}
		}
	}
	return false
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Integer reads a JSON integer that fits an int; fractions, exponents and
// null are refused.
func (s *Scanner) Integer(p *int) bool {
	j, neg := s.I, false
	if j < len(s.B) && s.B[j] == '-' {
		neg, j = true, j+1
	}
	start := j
	n := 0
	for j < len(s.B) && '0' <= s.B[j] && s.B[j] <= '9' {
		n = n*10 + int(s.B[j]-'0')
		j++
	}
	digits := j - start
	if digits == 0 || digits > 15 || (digits > 1 && s.B[start] == '0') {
		return false
	}
	if j < len(s.B) && (s.B[j] == '.' || s.B[j] == 'e' || s.B[j] == 'E') {
		return false
	}
	if neg {
		n = -n
	}
	*p, s.I = n, j
	return true
}

// number skips a JSON number, checking its grammar.
func (s *Scanner) number() bool {
	j := s.I
	if j < len(s.B) && s.B[j] == '-' {
		j++
	}
	digits := func() int {
		k := j
		for j < len(s.B) && '0' <= s.B[j] && s.B[j] <= '9' {
			j++
		}
		return j - k
	}
	if j < len(s.B) && s.B[j] == '0' {
		j++
	} else if digits() == 0 {
		return false
	}
	if j < len(s.B) && s.B[j] == '.' {
		j++
		if digits() == 0 {
			return false
		}
	}
	if j < len(s.B) && (s.B[j] == 'e' || s.B[j] == 'E') {
		j++
		if j < len(s.B) && (s.B[j] == '+' || s.B[j] == '-') {
			j++
		}
		if digits() == 0 {
			return false
		}
	}
	s.I = j
	return true
}

// Raw consumes any JSON value into *p as its bytes, as json.Unmarshal
// fills a json.RawMessage (null included). depth is the value's nesting.
func (s *Scanner) Raw(p *json.RawMessage, depth int) bool {
	start := s.I
	if !s.Skip(depth) {
		return false
	}
	*p = json.RawMessage(s.B[start:s.I])
	return true
}

// Skip consumes any JSON value, checking its syntax; depth is the value's
// nesting, at most MaxDepth.
func (s *Scanner) Skip(depth int) bool {
	if s.I >= len(s.B) || depth > MaxDepth {
		return false
	}
	switch c := s.B[s.I]; {
	case c == '{':
		return s.Object(func(key []byte) bool { return s.Skip(depth + 1) })
	case c == '[':
		return s.Array(func() bool { return s.Skip(depth + 1) })
	case c == '"':
		return s.skipString()
	case c == 't':
		return s.Lit("true")
	case c == 'f':
		return s.Lit("false")
	case c == 'n':
		return s.Lit("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return false
}
