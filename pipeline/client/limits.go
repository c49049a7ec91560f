package client

import (
	"fmt"

	"github.com/extractbench/extractbench"
)

// The caps on one response. Without them an engine that never stops
// (valid chunks without end, data lines without a blank line, a 100 MB
// non-streamed body) held the whole answer in memory at every level of
// concurrency and wrote it to results.db. Past a cap the client cancels the
// request and reports extractbench.TransportTooLarge, which the classifier counts
// as truncation: the answer was cut for its size, by the client, as
// finish_reason=length cuts it by the engine. What arrived within the cap
// is kept as the output.
const (
	// AnswerBytesPerToken is how many bytes of content each token of
	// max_tokens allows before an answer is over its cap. A token decodes
	// to 3 to 5 bytes of English or JSON and rarely more than 16 of any
	// text, so no honest answer within max_tokens reaches 64.
	AnswerBytesPerToken = 64
	// MinAnswerBytes is the smallest answer cap, whatever max_tokens says.
	MinAnswerBytes = 64 << 10
	// DefaultAnswerBytes caps an answer when the request sets no
	// max_tokens (the engine's own budget applies): 64 bytes for each of
	// 65,536 tokens.
	DefaultAnswerBytes = 4 << 20
	// eventEnvelope is what one event may carry besides its content: ids,
	// the model name, usage, timings.
	eventEnvelope = 64 << 10
	// eventEscape bounds how much JSON escaping grows content (a "<"
	// written as \u003c is six bytes): one event, or a non-streamed body,
	// may carry a whole answer written so.
	eventEscape = 8
)

// MaxAnswerBytes is the cap on one answer's content for a request of
// maxTokens: max(MinAnswerBytes, maxTokens × AnswerBytesPerToken), or
// DefaultAnswerBytes when maxTokens is not positive. The protocol's
// max_answer_bytes overrides it (Config.MaxAnswerBytes).
func MaxAnswerBytes(maxTokens int) int {
	if maxTokens <= 0 {
		return DefaultAnswerBytes
	}
	return max(MinAnswerBytes, min(maxTokens, 1<<30)*AnswerBytesPerToken)
}

// limits bound what one response may hold.
type limits struct {
	answer int // content bytes of each choice
	event  int // bytes of one event: its lines until the blank line, or one line
	body   int // bytes of a non-streamed body (every choice's event)
}

func newLimits(answer, choices int) limits {
	event := eventEscape*answer + eventEnvelope
	return limits{answer: answer, event: event, body: max(choices, 1) * event}
}

// newAcc returns the accumulator of one exchange with the caps of its
// request: Config.MaxAnswerBytes, else MaxAnswerBytes of the request's
// max_tokens.
func (c *Client) newAcc(clock extractbench.Clock, payload any, choices int) *streamAcc {
	answer := c.cfg.MaxAnswerBytes
	if answer <= 0 {
		maxTokens := 0
		if g, ok := payload.(generateRequest); ok {
			maxTokens = g.MaxTokens
		}
		answer = MaxAnswerBytes(maxTokens)
	}
	a := newStreamAcc(clock, choices)
	a.lim = newLimits(answer, choices)
	return a
}

// tooLarge is the fault of a response past a cap; what says which.
func (l limits) tooLarge(what string) *streamFault {
	return &streamFault{kind: extractbench.TransportTooLarge,
		detail: what + "; request cancelled (the cap: max_answer_bytes, else max(64 KiB, max_tokens × 64))"}
}

// eventCapText names the event cap in a fault's detail.
func (l limits) eventCapText(n int) string {
	return fmt.Sprintf("%d bytes (8 × the %d-byte answer cap + 64 KiB)", n, l.answer)
}
