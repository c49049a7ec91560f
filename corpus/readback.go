package corpus

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeIndexed decodes a record read back into d as json.Unmarshal does,
// for the shape every indexed record has (Open validated it): one object
// with the keys id, text, length_class and expected, the last holding
// date, amount and category as strings or null. It returns false on
// anything else (another key or a key given twice, an escape it does not
// decode, invalid UTF-8, a syntax error), and json.Unmarshal decides: the
// reflection and the validating pass json.Unmarshal makes were half of what
// reading a document back cost. FuzzDecodeIndexed holds the two equal.
func decodeIndexed(rec []byte, d *Document) bool {
	s := recordScanner{b: rec}
	var seen uint8
	s.ws()
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return s.once(&seen, 1) && s.str(&d.ID)
		case "text":
			return s.once(&seen, 2) && s.str(&d.Text)
		case "length_class":
			var c string
			ok := s.once(&seen, 4) && s.str(&c)
			d.LengthClass = LengthClass(c)
			return ok
		case "expected":
			return s.once(&seen, 8) && s.expected(&d.Expected)
		}
		return false
	})
	s.ws()
	return ok && s.i == len(s.b)
}

// recordScanner reads the JSON of one record from b at i; its methods
// return false on anything decodeIndexed leaves to json.Unmarshal.
type recordScanner struct {
	b []byte
	i int
}

func (s *recordScanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *recordScanner) once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// object reads {"key": value, ...}; field, positioned at the value, must
// consume it. A key with an escape is refused.
func (s *recordScanner) object(field func(key []byte) bool) bool {
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		start := s.i + 1
		end := start
		for end < len(s.b) && s.b[end] != '"' && s.b[end] != '\\' && s.b[end] >= 0x20 {
			end++
		}
		if end >= len(s.b) || s.b[end] != '"' {
			return false
		}
		key := s.b[start:end]
		s.i = end + 1
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		if !field(key) {
			return false
		}
		s.ws()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

func (s *recordScanner) expected(e *Expected) bool {
	var seen uint8
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "date":
			return s.once(&seen, 1) && s.optStr(&e.Date)
		case "amount":
			return s.once(&seen, 2) && s.optStr(&e.Amount)
		case "category":
			return s.once(&seen, 4) && s.optStr(&e.Category)
		}
		return false
	})
}

// optStr reads a string or null (nil), as json.Unmarshal fills a *string.
func (s *recordScanner) optStr(p **string) bool {
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		*p = nil
		return true
	}
	var v string
	if !s.str(&v) {
		return false
	}
	*p = &v
	return true
}

// str reads a string, decoding its escapes into one allocation (a
// strings.Builder's, not copied again); a surrogate escape, invalid UTF-8
// (which json.Unmarshal replaces) or a control byte is refused.
func (s *recordScanner) str(p *string) bool {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	start := s.i + 1
	j := start
	for j < len(s.b) && s.b[j] != '"' && s.b[j] != '\\' && s.b[j] >= 0x20 {
		j++
	}
	if j < len(s.b) && s.b[j] == '"' { // no escape: one copy
		if !utf8.Valid(s.b[start:j]) {
			return false
		}
		*p, s.i = string(s.b[start:j]), j+1
		return true
	}
	var out strings.Builder
	out.Grow(len(s.b) - start) // the rest of the record bounds the string
	out.Write(s.b[start:j])
	valid := utf8.Valid(s.b[start:j])
	for j < len(s.b) {
		c := s.b[j]
		switch {
		case c == '"':
			if !valid {
				return false
			}
			*p, s.i = out.String(), j+1
			return true
		case c < 0x20:
			return false
		case c != '\\':
			k := j + 1
			for k < len(s.b) && s.b[k] != '"' && s.b[k] != '\\' && s.b[k] >= 0x20 {
				k++
			}
			valid = valid && utf8.Valid(s.b[j:k])
			out.Write(s.b[j:k])
			j = k
			continue
		}
		if j+1 >= len(s.b) {
			return false
		}
		switch e := s.b[j+1]; e {
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
			r, ok := hex4(s.b[j+2:])
			if !ok || utf16.IsSurrogate(r) {
				return false
			}
			out.WriteRune(r)
			j += 4
		default:
			return false
		}
		j += 2
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
