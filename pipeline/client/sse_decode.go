package client

import (
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeChunk decodes one event's JSON into c exactly as json.Unmarshal
// does. Every chunk of every stream is decoded, and reflection-based
// decoding was the client's largest cost, so the shapes engines send go
// through a small scanner (fastChunk); anything it is not sure of (escaped
// or case-folded keys, duplicate keys, type mismatches, invalid UTF-8,
// surrogate escapes, syntax errors) falls back to json.Unmarshal, which
// also supplies the error. FuzzDecodeChunk holds the two paths equal.
// github.com/goccy/go-json was tried instead (7% slower here, and less
// code) and rejected: it accepts invalid JSON inside skipped fields, such
// as {"a":[1,2,]}, so a malformed chunk would not be reported as one.
//
// sc, when not nil, holds the choices, messages and strings the fast path
// points c into; c is then valid until the next call with the same sc.
func decodeChunk(data []byte, c *chunk, sc *chunkScratch) error {
	if fastChunk(data, c, sc) {
		return nil
	}
	u := new(chunk) // c itself stays off the heap on the fast path
	err := json.Unmarshal(data, u)
	*c = *u
	return err
}

// chunkScratch is storage the fast path reuses from one event to the next,
// so that a chunk costs no allocation beyond its content string.
type chunkScratch struct {
	choices []chunkChoice
	msgs    []chunkMessage
	strs    []string
}

// message returns a zeroed message that lives until the next reset.
func (sc *chunkScratch) message() *chunkMessage {
	if sc == nil {
		return &chunkMessage{}
	}
	sc.msgs = append(sc.msgs, chunkMessage{})
	return &sc.msgs[len(sc.msgs)-1]
}

// str returns a pointer to v that lives until the next reset.
func (sc *chunkScratch) str(v string) *string {
	if sc == nil {
		return &v
	}
	sc.strs = append(sc.strs, v)
	return &sc.strs[len(sc.strs)-1]
}

func (sc *chunkScratch) reset() {
	if sc != nil {
		clear(sc.msgs)
		clear(sc.strs)
		sc.msgs, sc.strs = sc.msgs[:0], sc.strs[:0]
	}
}

// fastChunk decodes data into c, or returns false when json.Unmarshal must
// decide (c is then partly written).
func fastChunk(data []byte, c *chunk, sc *chunkScratch) bool {
	sc.reset()
	s := scanner{b: data, sc: sc}
	s.ws()
	var seen uint8
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			return s.once(&seen, 1) && s.choices(c)
		case "usage":
			return s.once(&seen, 2) && s.usage(c)
		case "error":
			return s.once(&seen, 4) && s.raw(&c.Error, 0)
		case "timings":
			return s.once(&seen, 8) && s.raw(&c.Timings, 0)
		}
		return !foldsTo(key, "choices", "usage", "error", "timings") && s.skip(0)
	})
	if !ok {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

// scanner reads JSON from b at i. Its methods return false on anything
// the fast path does not decode.
type scanner struct {
	b  []byte
	i  int
	sc *chunkScratch
}

// maxDepth bounds nesting in skipped values; deeper documents go to json.Unmarshal.
const maxDepth = 64

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// once marks bit in seen, failing on a duplicate key: json.Unmarshal merges
// duplicates in ways not worth copying.
func (s *scanner) once(seen *uint8, bit uint8) bool {
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// foldsTo reports whether key is not plain ASCII or matches one of names
// case-insensitively: json.Unmarshal would match such a key to a field.
func foldsTo(key []byte, names ...string) bool {
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

// lit consumes the literal w.
func (s *scanner) lit(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// null consumes a null literal if one is next.
func (s *scanner) null() bool {
	return s.i < len(s.b) && s.b[s.i] == 'n' && s.lit("null")
}

// object reads {"key": value, ...}, calling field with the key (escapes
// refused) positioned at the value; field must consume the value.
func (s *scanner) object(field func(key []byte) bool) bool {
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
		key, ok := s.rawString()
		if !ok {
			return false
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		if !field(key) {
			return false
		}
		if end, ok := s.sep('}'); !ok || end {
			return ok
		}
	}
}

// array reads [value, ...], calling elem positioned at each value.
func (s *scanner) array(elem func() bool) bool {
	if s.i >= len(s.b) || s.b[s.i] != '[' {
		return false
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
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
func (s *scanner) sep(closing byte) (end, ok bool) {
	s.ws()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		s.ws()
		return false, true
	case closing:
		s.i++
		return true, true
	}
	return false, false
}

// rawString reads a string with no escapes, only valid UTF-8 and no
// control bytes, returning its bytes.
func (s *scanner) rawString() ([]byte, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			v := s.b[start:j]
			return v, utf8.Valid(v)
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// str reads a string value, unescaping it. Surrogate escapes and invalid
// UTF-8 (which json.Unmarshal replaces with U+FFFD) are refused.
func (s *scanner) str() (string, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", false
	}
	start := s.i + 1
	j := start
	for j < len(s.b) && s.b[j] != '"' && s.b[j] != '\\' && s.b[j] >= 0x20 {
		j++
	}
	if j < len(s.b) && s.b[j] == '"' {
		v := s.b[start:j]
		if !utf8.Valid(v) {
			return "", false
		}
		s.i = j + 1
		return string(v), true
	}
	out := make([]byte, 0, j-start+16)
	out = append(out, s.b[start:j]...)
	for j < len(s.b) {
		c := s.b[j]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return "", false
			}
			s.i = j + 1
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(s.b) {
			return "", false
		}
		switch e := s.b[j+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(s.b[j+2:])
			if !ok || utf16.IsSurrogate(r) {
				return "", false
			}
			out = utf8.AppendRune(out, r)
			j += 4
		default:
			return "", false
		}
		j += 2
	}
	return "", false
}

// skipString consumes a string, checking its escapes and that it has no
// control bytes, without decoding it (json.Unmarshal accepts invalid UTF-8
// in a value it discards).
func (s *scanner) skipString() bool {
	for j := s.i + 1; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if j+1 >= len(s.b) {
				return false
			}
			switch s.b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if _, ok := hex4(s.b[j+2:]); !ok {
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

// optString reads a string or null into *p (null leaves it nil, as
// json.Unmarshal sets a nil pointer).
func (s *scanner) optString(p **string) bool {
	if s.null() {
		*p = nil
		return true
	}
	v, ok := s.str()
	if !ok {
		return false
	}
	*p = s.sc.str(v)
	return true
}

// integer reads a JSON integer that fits an int; fractions, exponents and
// null are refused.
func (s *scanner) integer(p *int) bool {
	j, neg := s.i, false
	if j < len(s.b) && s.b[j] == '-' {
		neg, j = true, j+1
	}
	start := j
	n := 0
	for j < len(s.b) && '0' <= s.b[j] && s.b[j] <= '9' {
		n = n*10 + int(s.b[j]-'0')
		j++
	}
	digits := j - start
	if digits == 0 || digits > 15 || (digits > 1 && s.b[start] == '0') {
		return false
	}
	if j < len(s.b) && (s.b[j] == '.' || s.b[j] == 'e' || s.b[j] == 'E') {
		return false
	}
	if neg {
		n = -n
	}
	*p, s.i = n, j
	return true
}

// number skips a JSON number, checking its grammar.
func (s *scanner) number() bool {
	j := s.i
	if j < len(s.b) && s.b[j] == '-' {
		j++
	}
	digits := func() int {
		k := j
		for j < len(s.b) && '0' <= s.b[j] && s.b[j] <= '9' {
			j++
		}
		return j - k
	}
	if j < len(s.b) && s.b[j] == '0' {
		j++
	} else if digits() == 0 {
		return false
	}
	if j < len(s.b) && s.b[j] == '.' {
		j++
		if digits() == 0 {
			return false
		}
	}
	if j < len(s.b) && (s.b[j] == 'e' || s.b[j] == 'E') {
		j++
		if j < len(s.b) && (s.b[j] == '+' || s.b[j] == '-') {
			j++
		}
		if digits() == 0 {
			return false
		}
	}
	s.i = j
	return true
}

// raw consumes any JSON value into *p as its bytes, as json.Unmarshal
// fills a json.RawMessage (null included).
func (s *scanner) raw(p *json.RawMessage, depth int) bool {
	start := s.i
	if !s.skip(depth) {
		return false
	}
	*p = json.RawMessage(s.b[start:s.i])
	return true
}

// skip consumes any JSON value, checking its syntax.
func (s *scanner) skip(depth int) bool {
	if s.i >= len(s.b) || depth > maxDepth {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(func(key []byte) bool { return s.skip(depth + 1) })
	case c == '[':
		return s.array(func() bool { return s.skip(depth + 1) })
	case c == '"':
		return s.skipString()
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	return false
}

func (s *scanner) choices(c *chunk) bool {
	if s.null() {
		c.Choices = nil
		return true
	}
	c.Choices = nil
	if s.sc != nil {
		c.Choices = s.sc.choices[:0]
	}
	ok := s.array(func() bool {
		c.Choices = append(c.Choices, chunkChoice{})
		return s.choice(&c.Choices[len(c.Choices)-1])
	})
	if s.sc != nil && cap(c.Choices) > cap(s.sc.choices) {
		s.sc.choices = c.Choices[:0]
	}
	if ok && c.Choices == nil {
		c.Choices = []chunkChoice{} // "choices": [] is empty, not missing
	}
	return ok
}

func (s *scanner) choice(ch *chunkChoice) bool {
	var seen uint8
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "index":
			return s.once(&seen, 1) && s.integer(&ch.Index)
		case "delta":
			return s.once(&seen, 2) && s.message(&ch.Delta)
		case "message":
			return s.once(&seen, 4) && s.message(&ch.Message)
		case "text":
			return s.once(&seen, 8) && s.optString(&ch.Text)
		case "finish_reason":
			return s.once(&seen, 16) && s.optString(&ch.FinishReason)
		}
		return !foldsTo(key, "index", "delta", "message", "text", "finish_reason") && s.skip(1)
	})
}

func (s *scanner) message(p **chunkMessage) bool {
	if s.null() {
		*p = nil
		return true
	}
	m := s.sc.message()
	var seen uint8
	ok := s.object(func(key []byte) bool {
		if string(key) == "content" {
			return s.once(&seen, 1) && s.optString(&m.Content)
		}
		return !foldsTo(key, "content") && s.skip(2)
	})
	*p = m
	return ok
}

func (s *scanner) usage(c *chunk) bool {
	if s.null() {
		c.Usage = nil
		return true
	}
	u := &usage{}
	var seen uint8
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			return s.once(&seen, 1) && s.integer(&u.PromptTokens)
		case "completion_tokens":
			return s.once(&seen, 2) && s.integer(&u.CompletionTokens)
		case "prompt_tokens_details":
			return s.once(&seen, 4) && s.raw(&u.PromptTokensDetails, 1)
		}
		return !foldsTo(key, "prompt_tokens", "completion_tokens", "prompt_tokens_details") && s.skip(1)
	})
	c.Usage = u
	return ok
}
