package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/extractbench/extractbench/eval"
)

// maxErrorBody bounds eval.Transport.ErrorBody.
const maxErrorBody = 4 << 10

// chunk is the union of the JSON bodies OpenAI-compatible engines send: a
// chat.completion.chunk (delta), a text_completion chunk (text), a
// non-streamed chat.completion (message), a usage-only chunk (empty choices)
// and an error event. Pointers tell a missing field from an empty one.
type chunk struct {
	Choices []chunkChoice   `json:"choices"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type chunkChoice struct {
	Index        int           `json:"index"`
	Delta        *chunkMessage `json:"delta"`
	Message      *chunkMessage `json:"message"`
	Text         *string       `json:"text"`
	FinishReason *string       `json:"finish_reason"`
}

// chunkMessage keeps only content: reasoning_content / reasoning (vLLM,
// SGLang reasoning parsers) and tool calls are not the answer.
type chunkMessage struct {
	Content *string `json:"content"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// content returns the text a choice carries, whichever shape it has.
func (c chunkChoice) content() string {
	switch {
	case c.Delta != nil && c.Delta.Content != nil:
		return *c.Delta.Content
	case c.Message != nil && c.Message.Content != nil:
		return *c.Message.Content
	case c.Text != nil:
		return *c.Text
	}
	return ""
}

// choiceAcc accumulates one choice (one prompt of a batch) over a stream.
type choiceAcc struct {
	out          strings.Builder
	firstTokenNS int64
	lastTokenNS  int64
	chunks       int    // content-bearing chunks: the fallback token count
	finish       string // last non-empty finish_reason
	usage        *usage // usage reported for this choice alone
}

// streamAcc demultiplexes the chunks of one response into n choices.
type streamAcc struct {
	clock   Clock
	choices []choiceAcc
	total   *usage // usage of the whole call (the usage-only chunk)
	done    bool   // [DONE] seen, or a complete non-streamed body read
	scratch chunkScratch
}

func newStreamAcc(clock Clock, n int) *streamAcc {
	return &streamAcc{clock: clock, choices: make([]choiceAcc, n)}
}

// streamFault is what ended a stream early, in eval.Transport terms.
type streamFault struct {
	kind   eval.TransportKind
	status int    // for an in-stream error: the status the engine declared
	body   string // for an in-stream error: the error payload
	detail string
}

// consume applies one event's data. It returns a fault when the stream
// cannot go on (malformed chunk, in-stream error).
func (a *streamAcc) consume(name string, data []byte) *streamFault {
	d := bytes.TrimSpace(data)
	if bytes.Equal(d, []byte("[DONE]")) {
		a.done = true
		return nil
	}
	if len(d) == 0 {
		return nil // an empty data line is a keep-alive for some proxies
	}
	var c chunk
	if err := decodeChunk(d, &c, &a.scratch); err != nil {
		return &streamFault{kind: eval.TransportMalformed,
			detail: fmt.Sprintf("decode chunk %q: %v", truncate(string(d), 120), err)}
	}
	if hasError(c.Error) || name == "error" {
		return inStreamError(d, c.Error)
	}
	now := a.clock.Now()
	// vLLM (continuous_usage_stats) puts a choice's own usage on the chunk
	// that carries it; the usage-only chunk has no choices and counts all.
	if c.Usage != nil {
		if len(c.Choices) == 0 {
			u := *c.Usage
			a.total = &u
		} else if len(c.Choices) == 1 && inRange(c.Choices[0].Index, len(a.choices)) {
			u := *c.Usage
			a.choices[c.Choices[0].Index].usage = &u
		}
	}
	for _, ch := range c.Choices {
		if !inRange(ch.Index, len(a.choices)) {
			return &streamFault{kind: eval.TransportMalformed,
				detail: fmt.Sprintf("chunk for choice index %d, expected fewer than %d", ch.Index, len(a.choices))}
		}
		acc := &a.choices[ch.Index]
		if s := ch.content(); s != "" {
			if acc.firstTokenNS == 0 {
				acc.firstTokenNS = now
			}
			acc.lastTokenNS = now
			acc.chunks++
			acc.out.WriteString(s)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			acc.finish = *ch.FinishReason
		}
	}
	return nil
}

func inRange(i, n int) bool { return i >= 0 && i < n }

func hasError(raw json.RawMessage) bool {
	r := bytes.TrimSpace(raw)
	return len(r) > 0 && !bytes.Equal(r, []byte("null"))
}

// inStreamError turns `data: {"error": ...}` into a fault. vLLM and SGLang
// send an object {message, type, code} whose code is the HTTP status the
// error would have had; TGI sends {"error": "text", "error_type": "..."}.
// The classifier reads it like a non-2xx answer with that status (500 when
// the engine gave none); Detail says it came inside a 200 stream.
func inStreamError(payload []byte, raw json.RawMessage) *streamFault {
	status, msg := 0, ""
	var obj struct {
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
	}
	var text string
	switch {
	case json.Unmarshal(raw, &text) == nil:
		msg = text
		var tgi struct {
			ErrorType string `json:"error_type"`
		}
		json.Unmarshal(payload, &tgi)
		status = tgiStatus[tgi.ErrorType]
	case json.Unmarshal(raw, &obj) == nil:
		msg = obj.Message
		var code int
		if json.Unmarshal(obj.Code, &code) == nil && code >= 400 && code <= 599 {
			status = code
		}
	}
	if status == 0 {
		status = 500
	}
	return &streamFault{
		kind:   eval.TransportHTTPStatus,
		status: status,
		body:   truncate(string(payload), maxErrorBody),
		detail: "error event inside a 200 stream: " + truncate(msg, 300),
	}
}

// tgiStatus is the HTTP status TGI gives each error_type when it can still
// answer with one (its InferError mapping).
var tgiStatus = map[string]int{
	"validation":     422,
	"template_error": 422,
	"overloaded":     429,
	"generation":     424,
}

// errorMessage extracts a short human message from an error body: the
// OpenAI error object, vLLM's older flat object, TGI's {"error": "..."},
// FastAPI's {"detail": ...}, or the start of a bare text body.
func errorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		var s string
		var o struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return truncate(s, 300)
		case json.Unmarshal(v.Error, &o) == nil && o.Message != "":
			return truncate(o.Message, 300)
		case v.Message != "":
			return truncate(v.Message, 300)
		case len(v.Detail) > 0:
			if json.Unmarshal(v.Detail, &s) == nil {
				return truncate(s, 300)
			}
			return truncate(string(v.Detail), 300)
		}
	}
	return truncate(strings.TrimSpace(string(body)), 300)
}
