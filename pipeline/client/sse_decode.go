package client

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/extractbench/extractbench/jsonscan"
)

// decodeChunk decodes one event's JSON into c exactly as json.Unmarshal
// does. Every chunk of every stream is decoded, and reflection-based
// decoding was the client's largest cost, so the shapes engines send go
// through a small scanner (fastChunk); anything it is not sure of (escaped
// or case-folded keys, a repeated key it has a case for, type mismatches,
// invalid UTF-8, surrogate escapes, syntax errors) falls back to
// json.Unmarshal, which also supplies the error. FuzzDecodeChunk holds the two paths equal.
//
// The struct tags of sse_chunk.go are the one list of what a chunk holds:
// the scanner has a case for the nested objects and the keys of every
// content chunk, and decodes any other key a struct has a field for by the
// field's type (other: a string, *string, int or raw JSON; anything else
// is left to json.Unmarshal), so a field added there needs no line here.
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
	top     chunk
	choices []chunkChoice
	msgs    []chunkMessage
	strs    []string
}

// chunk returns a zeroed chunk that lives until the next call.
func (sc *chunkScratch) chunk() *chunk {
	if sc == nil {
		return &chunk{}
	}
	sc.top = chunk{}
	return &sc.top
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

// The fields of the chunk's structs, from their tags.
var (
	chunkFields   = fieldsOf[chunk]()
	choiceFields  = fieldsOf[chunkChoice]()
	messageFields = fieldsOf[chunkMessage]()
	usageFields   = fieldsOf[usage]()
)

// structFields are the JSON keys json.Unmarshal matches to a struct's
// fields: every exported field's tag name (else its name), and the index of
// each field by key.
type structFields struct {
	keys  []string
	index map[string]int
}

// fieldsOf reads T's fields; one promoted from an embedded struct is a key
// without an index, which other leaves to json.Unmarshal.
func fieldsOf[T any]() structFields {
	fs := structFields{index: map[string]int{}}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[T]()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported() || name == "-" || f.Anonymous && f.Type.Kind() == reflect.Struct:
			continue
		case name == "":
			name = f.Name
		}
		fs.keys = append(fs.keys, name)
		if len(f.Index) == 1 {
			fs.index[name] = f.Index[0]
		}
	}
	return fs
}

// fastChunk decodes data into c, or returns false when json.Unmarshal must
// decide (c is then partly written).
func fastChunk(data []byte, c *chunk, sc *chunkScratch) bool {
	sc.reset()
	top := sc.chunk() // other's reflection would move c to the heap
	s := scanner{Scanner: jsonscan.Scanner{B: data}, sc: sc}
	s.WS()
	var seen uint8
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			return s.Once(&seen, 1) && s.choices(top)
		case "usage":
			return s.Once(&seen, 2) && s.usage(top)
		}
		return s.other(key, top, chunkFields, 0)
	})
	*c = *top
	return ok && s.Done()
}

// other reads the value of a key the scanner has no case for: it skips a
// key no field of the struct *v matches, decodes one whose field is a
// string, *string, int or raw JSON as json.Unmarshal does, and leaves the
// rest to json.Unmarshal (a field of another type, or a key that matches
// one only case-folded or escaped). A repeated key overwrites, as there.
func (s *scanner) other(key []byte, v any, fields structFields, depth int) bool {
	if !jsonscan.FoldsTo(key, fields.keys...) {
		return s.Skip(depth)
	}
	i, ok := fields.index[string(key)]
	if !ok {
		return false
	}
	switch p := reflect.ValueOf(v).Elem().Field(i).Addr().Interface().(type) {
	case *string:
		if s.Null() {
			return true // null leaves a string as it was
		}
		str, ok := s.Str()
		*p = str
		return ok
	case **string:
		return s.optString(p)
	case *int:
		return s.Integer(p)
	case *tokenCount: // a whole count; anything else (3.5, 1e30) to json.Unmarshal
		if s.Null() {
			return true // null leaves it as it was, as json.Unmarshal does
		}
		*p = tokenCount{}
		return s.Integer(&p.n)
	case *json.RawMessage:
		return s.Raw(p, depth)
	}
	return false
}

// scanner is jsonscan's Scanner with the chunk's shapes; its methods
// return false on anything the fast path does not decode.
type scanner struct {
	jsonscan.Scanner
	sc *chunkScratch
}

// optString reads a string or null into *p (null leaves it nil, as
// json.Unmarshal sets a nil pointer), the string in the scratch.
func (s *scanner) optString(p **string) bool {
	v, null, ok := s.OptStr()
	switch {
	case !ok:
		return false
	case null:
		*p = nil
	default:
		*p = s.sc.str(v)
	}
	return true
}

func (s *scanner) choices(c *chunk) bool {
	if s.Null() {
		c.Choices = nil
		return true
	}
	c.Choices = nil
	if s.sc != nil {
		c.Choices = s.sc.choices[:0]
	}
	ok := s.Array(func() bool {
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
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "index":
			return s.Once(&seen, 1) && s.Integer(&ch.Index)
		case "delta":
			return s.Once(&seen, 2) && s.message(&ch.Delta)
		case "message":
			return s.Once(&seen, 4) && s.message(&ch.Message)
		case "text":
			return s.Once(&seen, 8) && s.optString(&ch.Text)
		case "finish_reason":
			return s.Once(&seen, 16) && s.optString(&ch.FinishReason)
		}
		return s.other(key, ch, choiceFields, 1)
	})
}

func (s *scanner) message(p **chunkMessage) bool {
	if s.Null() {
		*p = nil
		return true
	}
	m := s.sc.message()
	var seen uint8
	ok := s.Object(func(key []byte) bool {
		if string(key) == "content" {
			return s.Once(&seen, 1) && s.optString(&m.Content)
		}
		return s.other(key, m, messageFields, 2)
	})
	*p = m
	return ok
}

func (s *scanner) usage(c *chunk) bool {
	if s.Null() {
		c.Usage = nil
		return true
	}
	u := &usage{}
	ok := s.Object(func(key []byte) bool {
		return s.other(key, u, usageFields, 1)
	})
	c.Usage = u
	return ok
}
