package builtin

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// chunkEncoder writes the stream chunks of one request without reflection:
// a request sends one chunk per token, and json.Marshal of the response
// struct was the engine's largest cost after the socket writes. The bytes
// are exactly what json.Marshal writes for the same response (field order,
// HTML escaping, null pointers); TestChunkEncoderMatchesMarshal holds it.
type chunkEncoder struct {
	kind string // "chat" or "text"
	head []byte // `{"id":…,"object":…,"created":…,"model":…,"choices":[`
	tail string // `],"usage":null}` with include_usage, else `]}`
}

func newChunkEncoder(wr *writer) chunkEncoder {
	e := chunkEncoder{kind: wr.kind}
	h := make([]byte, 0, 64+len(wr.id)+len(wr.model))
	h = append(h, `{"id":`...)
	h = appendJSONString(h, wr.id)
	h = append(h, `,"object":`...)
	h = appendJSONString(h, wr.object(true))
	h = append(h, `,"created":`...)
	h = strconv.AppendInt(h, wr.created, 10)
	h = append(h, `,"model":`...)
	h = appendJSONString(h, wr.model)
	e.head = append(h, `,"choices":[`...)
	e.tail = `]}`
	if wr.includeUsage {
		e.tail = `],"usage":null}`
	}
	return e
}

// appendRole appends the chat stream's first chunk, the assistant role
// with empty content.
func (e *chunkEncoder) appendRole(dst []byte) []byte {
	dst = append(dst, e.head...)
	dst = append(dst, `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}`...)
	return append(dst, e.tail...)
}

// appendPiece appends the chunk of one choice carrying text (a token, or
// "" on the finish chunk) and finish ("" for none, encoded as null). u, when
// not nil, is the choice's own usage so far (continuous usage stats).
func (e *chunkEncoder) appendPiece(dst []byte, index int, text, finish string, u *usage) []byte {
	dst = append(dst, e.head...)
	dst = append(dst, `{"index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	if e.kind == "text" {
		dst = append(dst, `,"text":`...)
		dst = appendJSONString(dst, text)
	} else {
		dst = append(dst, `,"delta":{`...)
		if text != "" {
			dst = append(dst, `"content":`...)
			dst = appendJSONString(dst, text)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		dst = append(dst, "null"...)
	} else {
		dst = appendJSONString(dst, finish)
	}
	dst = append(dst, '}')
	if u != nil {
		dst = append(dst, `],"usage":{"prompt_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.PromptTokens), 10)
		dst = append(dst, `,"total_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.TotalTokens), 10)
		dst = append(dst, `,"completion_tokens":`...)
		dst = strconv.AppendInt(dst, int64(u.CompletionTokens), 10)
		return append(dst, "}}"...)
	}
	return append(dst, e.tail...)
}

// appendMarshal appends json.Marshal(v), for the rare chunks (usage, error).
func appendMarshal(dst []byte, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes it: HTML
// characters, control bytes, U+2028 and U+2029 escaped, invalid UTF-8
// replaced by \ufffd.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
