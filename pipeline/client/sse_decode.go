package client

import (
	"encoding/json"

	"github.com/extractbench/extractbench/jsonscan"
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
	s := scanner{Scanner: jsonscan.Scanner{B: data}, sc: sc}
	s.WS()
	var seen uint8
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "choices":
			return s.Once(&seen, 1) && s.choices(c)
		case "usage":
			return s.Once(&seen, 2) && s.usage(c)
		case "error":
			return s.Once(&seen, 4) && s.Raw(&c.Error, 0)
		case "timings":
			return s.Once(&seen, 8) && s.Raw(&c.Timings, 0)
		}
		return !jsonscan.FoldsTo(key, "choices", "usage", "error", "timings") && s.Skip(0)
	})
	return ok && s.Done()
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
		return !jsonscan.FoldsTo(key, "index", "delta", "message", "text", "finish_reason") && s.Skip(1)
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
		return !jsonscan.FoldsTo(key, "content") && s.Skip(2)
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
	var seen uint8
	ok := s.Object(func(key []byte) bool {
		switch string(key) {
		case "prompt_tokens":
			return s.Once(&seen, 1) && s.Integer(&u.PromptTokens)
		case "completion_tokens":
			return s.Once(&seen, 2) && s.Integer(&u.CompletionTokens)
		case "prompt_tokens_details":
			return s.Once(&seen, 4) && s.Raw(&u.PromptTokensDetails, 1)
		}
		return !jsonscan.FoldsTo(key, "prompt_tokens", "completion_tokens", "prompt_tokens_details") && s.Skip(1)
	})
	c.Usage = u
	return ok
}
