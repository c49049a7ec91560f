package client

import (
	"encoding/json"
	"strings"

	"github.com/extractbench/extractbench"
)

// inStreamError turns an error inside a 200 stream into a fault, with the
// prompt size the error names recorded as the request's. The shapes:
//
//	vLLM, SGLang  data: {"error": {"message", "type", "code": 500}}, code the HTTP status it would have had
//	llama.cpp     data: {"error": {"code": 400, "message", "type": "exceed_context_size_error", "n_prompt_tokens", "n_ctx"}}
//	llama.cpp     error: {"code": 400, "message", "type", ...} then data: [DONE] (server.cpp's server_sent_event, before server-context.cpp)
//	vLLM's body   data: {"object": "error", "message", "type", "code": 400} (ErrorResponse standing alone)
//	TGI           data: {"error": "text", "error_type": "validation"}
//	others        event: error + data: a JSON object, a JSON string or plain text
//
// raw is the chunk's "error" member, nil when the payload itself is the
// error. The classifier reads the fault like a non-2xx answer with that
// status (500 when the engine gave none); Detail says it came inside a 200
// stream.
func (a *streamAcc) inStreamError(payload []byte, raw json.RawMessage) *streamFault {
	var e errorValue
	var text string
	switch {
	case !hasError(raw):
		e = readErrorValue(payload)
	case json.Unmarshal(raw, &text) == nil:
		e.message = text
		var tgi struct {
			ErrorType string `json:"error_type"`
		}
		json.Unmarshal(payload, &tgi)
		e.status = tgiStatus[tgi.ErrorType]
	default:
		e = readErrorValue(raw)
	}
	if e.status == 0 {
		e.status = 500
	}
	if e.prompt > 0 {
		a.rejectedPrompt = e.prompt
	}
	return &streamFault{
		kind:   extractbench.TransportHTTPStatus,
		status: e.status,
		body:   truncate(string(payload), maxErrorBody),
		detail: "error event inside a 200 stream: " + truncate(e.message, 300),
	}
}

// errorValue is what an error object says.
type errorValue struct {
	message string
	status  int // its code when that is an HTTP error status, else 0
	prompt  int // n_prompt_tokens (llama.cpp, context exceeded), else 0
}

// readErrorValue reads an error object {message, code, n_prompt_tokens},
// a JSON string, or anything else as its text.
func readErrorValue(v []byte) errorValue {
	var obj struct {
		Message       string          `json:"message"`
		Code          json.RawMessage `json:"code"`
		NPromptTokens int             `json:"n_prompt_tokens"`
	}
	var text string
	switch {
	case json.Unmarshal(v, &text) == nil:
		return errorValue{message: text}
	case json.Unmarshal(v, &obj) == nil:
		e := errorValue{message: obj.Message, prompt: max(obj.NPromptTokens, 0)}
		var code int
		if json.Unmarshal(obj.Code, &code) == nil && code >= 400 && code <= 599 {
			e.status = code
		}
		return e
	}
	return errorValue{message: strings.TrimSpace(string(v))}
}

// errorPromptTokens returns the n_prompt_tokens an error body names
// (llama.cpp's 400 for a prompt over the context window), nested under
// "error" or not; 0 when it names none.
func errorPromptTokens(body []byte) int {
	var v struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return 0
	}
	if hasError(v.Error) {
		return readErrorValue(v.Error).prompt
	}
	return readErrorValue(body).prompt
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
