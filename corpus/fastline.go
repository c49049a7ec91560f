package corpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math/bits"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/extractbench/extractbench/jsonscan"
)

// fastLine is a record of the default fields decoded in one pass over its
// line, with the spans of its strings as written (quotes included; nil for
// a null expectation), from which its record hash is taken when canonical.
type fastLine struct {
	doc                              Document
	id, text, date, amount, category []byte
	canonical                        bool   // every span is as encoding/json writes its string (HashRule)
	buf                              []byte // a borrowed text, decoded (parseFast)
}

// parseFast decodes a line of a corpus of the default fields when it is a
// record without a problem in the shape writers give it: one object of id,
// text, length_class, expected (date, amount, category, each a string or
// null) and optionally lang, no key twice, no key escaped, valid UTF-8, no
// surrogate escape. It checks everything parseLine checks (the
// corpus-record schema, the category enum, the amount's digits, the
// calendar day), so that a line it accepts is one parseLine accepts
// without a problem, decoded to the same document; anything else (a
// problem to name, or a shape it does not read) returns false and
// parseLine decides. parseLine costs about ten times as much: it validates
// the line, decodes it to maps, validates those by the schema and copies
// the text more than once (FuzzParseFast holds the two equal).
//
// With borrow, the document's text is decoded into f's buffer and only
// borrowed: it is valid until the next call, for a caller that keeps no
// text (Check, Open by reference), so that reading a corpus allocates no
// text. A text with a \u escape is then refused: decode it without.
func parseFast(rec []byte, enum map[string]bool, f *fastLine, borrow bool) bool {
	*f = fastLine{canonical: true, buf: f.buf[:0]}
	s := jsonscan.Scanner{B: rec}
	var seen uint8
	str := func(span *[]byte, p *string) bool {
		start := s.I
		v, ok := s.Str()
		*span, *p = rec[start:s.I], v
		f.canonical = f.canonical && ok && canonicalString(*span)
		return ok
	}
	s.WS()
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return s.Once(&seen, 1) && str(&f.id, &f.doc.ID) && validID(f.doc.ID)
		case "text":
			if !s.Once(&seen, 2) {
				return false
			}
			if borrow {
				return f.borrowText(&s) && strings.TrimSpace(f.doc.Text) != ""
			}
			return str(&f.text, &f.doc.Text) && strings.TrimSpace(f.doc.Text) != ""
		case "length_class":
			var c string
			if !s.Once(&seen, 4) || !readStr(&s, &c) {
				return false
			}
			f.doc.LengthClass = internClass(LengthClass(c))
			return f.doc.LengthClass == Short || f.doc.LengthClass == Usual || f.doc.LengthClass == Long
		case "expected":
			return s.Once(&seen, 8) && f.expected(&s, enum)
		case "lang":
			return s.Once(&seen, 16) && readStr(&s, &f.doc.Lang) && validLang(f.doc.Lang)
		}
		return false
	})
	return ok && seen&15 == 15 && s.Done()
}

// borrowText decodes the string at s into f.buf, as jsonscan's Str does
// but refusing \u escapes, and lends it as f.doc.Text. It reads the runs
// between escapes eight bytes at a time (stringStopAt), and notes on the
// way what canonicalString would say of the span: a text is the most of
// a line, so it is read once.
func (f *fastLine) borrowText(s *jsonscan.Scanner) bool {
	b, start := s.B, s.I
	if start >= len(b) || b[start] != '"' {
		return false
	}
	buf := f.buf[:0]
	if cap(buf) < len(b)-start {
		buf = make([]byte, 0, len(b)-start) // the rest of the line bounds the text: grown once
	}
	canonical := true
	for j := start + 1; j < len(b); {
		k, valid := stringStopAt(b, j)
		if !valid {
			return false // invalid UTF-8
		}
		buf = append(buf, b[j:k]...)
		if k+1 >= len(b) || b[k] != '\\' {
			if k >= len(b) || b[k] != '"' {
				return false // a control byte or no end
			}
			s.I, f.buf, f.text = k+1, buf, b[start:k+1]
			f.doc.Text = borrowed(buf)
			f.canonical = f.canonical && canonical && !hasLineSeparator(f.text)
			return true
		}
		switch e := b[k+1]; e {
		case '"', '\\':
			buf = append(buf, e)
		case '/':
			buf = append(buf, e)
			canonical = false // encoding/json writes a slash as it is
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		default:
			return false
		}
		j = k + 2
	}
	return false
}

// stringStopAt returns the index of the first byte of b from j that
// stringStop holds, or len(b), and whether the bytes before it are valid
// UTF-8 (escapes are ASCII, so the runs between them are valid when the
// whole string is). It reads a word of eight bytes at a time, each byte
// tested for a quote, a backslash or a control byte, and decodes only the
// runes that are not ASCII. The tests borrow across bytes, so a byte above
// a stop may be marked too; the lowest mark is always a stop, and only it
// is read.
func stringStopAt(b []byte, j int) (int, bool) {
	for j+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[j:])
		quote, backslash := w^'"'*eachByte, w^'\\'*eachByte
		stops := ((quote-eachByte)&^quote | (backslash-eachByte)&^backslash | (w-0x20*eachByte)&^w) & highBits
		marks := stops | w&highBits
		if marks == 0 {
			j += 8
			continue
		}
		first := bits.TrailingZeros64(marks)
		if stops&(1<<first) != 0 {
			return j + first/8, true
		}
		size, ok := validRune(b, j+first/8)
		if !ok {
			return j + first/8, false
		}
		j += first/8 + size
	}
	for j < len(b) && !stringStop[b[j]] {
		if b[j] < utf8.RuneSelf {
			j++
			continue
		}
		size, ok := validRune(b, j)
		if !ok {
			return j, false
		}
		j += size
	}
	return j, true
}

// validRune returns the length of the rune at b[i] and whether it is
// valid UTF-8, as utf8.Valid judges it.
func validRune(b []byte, i int) (int, bool) {
	r, size := utf8.DecodeRune(b[i:])
	return size, r != utf8.RuneError || size > 1
}

// Bytes of a uint64, each tested at once (SWAR): eachByte is 1 in each,
// highBits their high bits.
const (
	eachByte = 0x0101010101010101
	highBits = 0x8080808080808080
)

// hasLineSeparator reports whether span holds U+2028 or U+2029, which
// encoding/json writes escaped.
func hasLineSeparator(span []byte) bool {
	for rest := span; ; {
		i := bytes.IndexByte(rest, 0xE2)
		if i < 0 {
			return false
		}
		if i+2 < len(rest) && rest[i+1] == 0x80 && (rest[i+2] == 0xA8 || rest[i+2] == 0xA9) {
			return true
		}
		rest = rest[i+1:]
	}
}

// stringStop are the bytes that end a run of a JSON string's bytes taken
// as they are: its end, an escape, a control byte.
var stringStop = func() (stop [256]bool) {
	for c := range 0x20 {
		stop[c] = true
	}
	stop['"'], stop['\\'] = true, true
	return stop
}()

// borrowed is b as a string without a copy: b must not change while the
// string is in use (parseFast's borrow: until the next line).
func borrowed(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// expected reads the expectations: each key once, each a string or null,
// each string valid by the schema and parseLine's own checks.
func (f *fastLine) expected(s *jsonscan.Scanner, enum map[string]bool) bool {
	var seen uint8
	opt := func(bit uint8, span *[]byte, p **string, valid func(string) bool) bool {
		if !s.Once(&seen, bit) {
			return false
		}
		start := s.I
		v, null, ok := s.OptStr()
		if !ok {
			return false
		}
		if null {
			return true
		}
		*span, *p = s.B[start:s.I], &v
		f.canonical = f.canonical && canonicalString(*span)
		return valid(v)
	}
	e := &f.doc.Expected
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "date":
			return opt(1, &f.date, &e.Date, validDate)
		case "amount":
			return opt(2, &f.amount, &e.Amount, validAmount)
		case "category":
			return opt(4, &f.category, &e.Category, func(c string) bool { return c != "" && enum[c] })
		}
		return false
	})
	return ok && seen == 7
}

// validID is the schema's id: 1 to 200 characters of
// ^[A-Za-z0-9][A-Za-z0-9._:-]*$.
func validID(id string) bool {
	if id == "" || len(id) > 200 || !asciiLetter(id[0]) && !asciiDigit(id[0]) {
		return false
	}
	for i := 1; i < len(id); i++ {
		if c := id[i]; !asciiLetter(c) && !asciiDigit(c) && c != '.' && c != '_' && c != ':' && c != '-' {
			return false
		}
	}
	return true
}

// validLang is the schema's lang: ^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$.
func validLang(lang string) bool {
	parts := strings.Split(lang, "-")
	if n := len(parts[0]); n < 2 || n > 3 {
		return false
	}
	for i, p := range parts {
		if i > 0 && (p == "" || len(p) > 8) {
			return false
		}
		for j := 0; j < len(p); j++ {
			if !asciiLetter(p[j]) && (i == 0 || !asciiDigit(p[j])) {
				return false
			}
		}
	}
	return true
}

// validDate is the schema's date (YYYY-MM-DD) on a real calendar day.
func validDate(d string) bool {
	if len(d) != 10 || d[4] != '-' || d[7] != '-' {
		return false
	}
	for i, c := range []byte(d) {
		if i != 4 && i != 7 && !asciiDigit(c) {
			return false
		}
	}
	_, err := time.Parse("2006-01-02", d)
	return err == nil
}

// validAmount is the schema's amount, ^-?0*[0-9]{1,41}(\.[0-9]+)?$: a
// decimal of at most MaxAmountDigits digits before the point, leading
// zeros aside.
func validAmount(a string) bool {
	a = strings.TrimPrefix(a, "-")
	whole, frac, point := strings.Cut(a, ".")
	if whole == "" || point && frac == "" || !allDigits(whole) || !allDigits(frac) {
		return false
	}
	return len(strings.TrimLeft(whole, "0")) <= MaxAmountDigits
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !asciiDigit(s[i]) {
			return false
		}
	}
	return true
}

// canonicalString reports whether a string as written (quotes included,
// valid UTF-8, no control bytes: jsonscan read it) is what encoding/json
// writes for its value without HTML escaping: its escapes only the short
// ones (\" \\ \b \f \n \r \t, the encoder's for those bytes) and no U+2028
// or U+2029 unescaped (the encoder escapes them). A \u escape is left to
// the encoder: whether it writes one depends on the character.
func canonicalString(span []byte) bool {
	for rest := span; ; {
		i := bytes.IndexByte(rest, '\\')
		if i < 0 || i+1 >= len(rest) {
			break
		}
		switch rest[i+1] {
		case '"', '\\', 'b', 'f', 'n', 'r', 't':
		default:
			return false
		}
		rest = rest[i+2:]
	}
	return !hasLineSeparator(span)
}

// spanHasher takes record hashes from canonical spans (fastLine): the
// bytes HashRule hashes are the spans joined, so the text is hashed as it
// lies in the line, not encoded again.
type spanHasher struct {
	h   hash.Hash
	sum []byte
}

// recordHash is RecordHash of f's document, f.canonical.
func (sh *spanHasher) recordHash(f *fastLine) string {
	if sh.h == nil {
		sh.h = sha256.New()
	}
	h := sh.h
	h.Reset()
	h.Write([]byte(`{"id":`))
	h.Write(f.id)
	h.Write([]byte(`,"text":`))
	h.Write(f.text)
	h.Write([]byte(`,"expected":{"date":`))
	h.Write(orNull(f.date))
	h.Write([]byte(`,"amount":`))
	h.Write(orNull(f.amount))
	h.Write([]byte(`,"category":`))
	h.Write(orNull(f.category))
	h.Write([]byte(`}}`))
	sh.sum = h.Sum(sh.sum[:0])
	return hex.EncodeToString(sh.sum)
}

var null = []byte("null")

func orNull(span []byte) []byte {
	if span == nil {
		return null
	}
	return span
}
