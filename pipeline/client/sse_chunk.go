package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/extractbench/extractbench"
)

// maxErrorBody bounds extractbench.Transport.ErrorBody.
const maxErrorBody = 4 << 10

// chunk is the union of the JSON bodies OpenAI-compatible engines send: a
// chat.completion.chunk (delta), a text_completion chunk (text), a
// non-streamed chat.completion (message), a usage-only chunk (empty choices)
// and an error event. Pointers tell a missing field from an empty one.
type chunk struct {
	Choices []chunkChoice `json:"choices"`
	Usage   *usage        `json:"usage"`
	// Timings is llama.cpp's timings object on its final chunk, kept raw
	// (cachedOf reads its cache_n): it is read once per request, and a
	// figure of a shape other than expected must not fail the chunk.
	Timings json.RawMessage `json:"timings"`
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
	PromptTokens     tokenCount `json:"prompt_tokens"`
	CompletionTokens tokenCount `json:"completion_tokens"`
	// PromptTokensDetails is OpenAI's {"cached_tokens": N} (llama.cpp,
	// vLLM with --enable-prompt-tokens-details, SGLang), kept raw as
	// Timings is.
	PromptTokensDetails json.RawMessage `json:"prompt_tokens_details"`
}

// tokenCount is a usage count as the engine wrote it: any JSON number is
// read (a float such as 3.5 or 1e30 used to fail the whole chunk as
// malformed, losing a right answer); one that is not a whole count in
// range keeps its text in bad, and the usage is refused, as a negative one
// is (eval.RefuseImpossibleUsage), with the answer kept.
type tokenCount struct {
	n   int
	bad string
}

// UnmarshalJSON reads a JSON number.
func (c *tokenCount) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		return nil // as for an int: left as it was
	}
	var num json.Number
	if err := json.Unmarshal(b, &num); err != nil {
		return err
	}
	if n, err := num.Int64(); err == nil && n >= math.MinInt && n <= math.MaxInt {
		*c = tokenCount{n: int(n)}
		return nil
	}
	*c = tokenCount{bad: s}
	return nil
}

// tokenCounts is a usage as the accumulators keep it, past the event that
// carried it: the counts, and the prompt tokens the engine took from its
// prompt cache (nil: not reported). bad names the counts that were not
// whole numbers ("" when all were).
type tokenCounts struct {
	prompt, completion int
	cached             *int
	bad                string
}

func (u *usage) counts(timings json.RawMessage) *tokenCounts {
	c := &tokenCounts{prompt: u.PromptTokens.n, completion: u.CompletionTokens.n, cached: cachedOf(u.PromptTokensDetails, "cached_tokens")}
	var bad []string
	for _, x := range []struct {
		name string
		c    tokenCount
	}{{"prompt_tokens", u.PromptTokens}, {"completion_tokens", u.CompletionTokens}} {
		if x.c.bad != "" {
			bad = append(bad, x.name+" "+x.c.bad)
		}
	}
	c.bad = strings.Join(bad, ", ")
	if c.cached == nil {
		c.cached = cachedOf(timings, "cache_n")
	}
	return c
}

// cachedOf reads the whole, non-negative number under key in the JSON
// object raw: usage.prompt_tokens_details.cached_tokens, or llama.cpp's
// timings.cache_n; nil when raw is not an object holding one (null,
// absent, a string, a fraction): not reported, never a failed chunk.
func cachedOf(raw json.RawMessage, key string) *int {
	if r := bytes.TrimSpace(raw); len(r) == 0 || bytes.Equal(r, []byte("null")) {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil
	}
	var f float64
	if json.Unmarshal(obj[key], &f) != nil || f < 0 || f > 1<<53 || f != float64(int64(f)) {
		return nil
	}
	n := int(f)
	return &n
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
	chunks       int          // content-bearing chunks: the fallback token count
	finish       string       // last non-empty finish_reason
	usage        *tokenCounts // usage reported for this choice alone
}

// streamAcc demultiplexes the chunks of one response into n choices.
type streamAcc struct {
	clock   extractbench.Clock
	choices []choiceAcc
	total   *tokenCounts // usage of the whole call (the usage-only chunk)
	// cacheN is llama.cpp's timings.cache_n seen without a usage (nil:
	// none), for a call whose usage gives no cached_tokens of its own.
	cacheN *int
	done   bool // [DONE] seen, or a complete non-streamed body read
	events int  // payloads consumed, [DONE] and keep-alives aside
	lim    limits
	// rejectedPrompt is the prompt size an error named (llama.cpp's
	// exceed_context_size_error carries n_prompt_tokens): the only prompt
	// count a rejected request gets, as it has no usage.
	rejectedPrompt int
	scratch        chunkScratch
}

func newStreamAcc(clock extractbench.Clock, n int) *streamAcc {
	return &streamAcc{clock: clock, choices: make([]choiceAcc, n), lim: newLimits(DefaultAnswerBytes, n)}
}

// streamFault is what ended a stream early, in extractbench.Transport terms.
type streamFault struct {
	kind   extractbench.TransportKind
	status int    // for an in-stream error: the status the engine declared
	body   string // for an in-stream error: the error payload
	detail string
}

// cutDetail says how a stream that ended cleanly before [DONE] ended.
func (a *streamAcc) cutDetail() string {
	if a.events == 0 {
		return "stream ended before any chunk, and before [DONE]"
	}
	return "stream ended after a complete chunk, before [DONE]"
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
	a.events++
	var c chunk
	if err := decodeChunk(d, &c, &a.scratch); err != nil {
		if name == "error" {
			return a.inStreamError(d, nil) // `event: error` with a text payload
		}
		return &streamFault{kind: extractbench.TransportMalformed,
			detail: fmt.Sprintf("decode chunk %q: %v", truncate(string(d), 120), err)}
	}
	if hasError(c.Error) || name == "error" || c.Choices == nil && c.Usage == nil && isErrorObject(d) {
		return a.inStreamError(d, c.Error)
	}
	now := a.clock.Now()
	a.takeUsage(&c)
	for i := range c.Choices {
		if f := a.addChoice(&c.Choices[i], now); f != nil {
			return f
		}
	}
	return nil
}

// takeUsage keeps a chunk's usage. vLLM (continuous_usage_stats) puts a
// choice's own usage on the chunk that carries it; the usage-only chunk
// has no choices and counts all. llama.cpp's timings may come without one.
func (a *streamAcc) takeUsage(c *chunk) {
	switch {
	case c.Usage == nil:
		if n := cachedOf(c.Timings, "cache_n"); n != nil {
			a.cacheN = n
		}
	case len(c.Choices) == 0:
		a.total = c.Usage.counts(c.Timings)
	case len(c.Choices) == 1 && inRange(c.Choices[0].Index, len(a.choices)):
		a.choices[c.Choices[0].Index].usage = c.Usage.counts(c.Timings)
	}
}

// addChoice adds one choice of a chunk, received at now, to its
// accumulator: a fault for an index out of range, or an answer past its cap.
func (a *streamAcc) addChoice(ch *chunkChoice, now int64) *streamFault {
	if !inRange(ch.Index, len(a.choices)) {
		return &streamFault{kind: extractbench.TransportMalformed,
			detail: fmt.Sprintf("chunk for choice index %d, expected fewer than %d", ch.Index, len(a.choices))}
	}
	acc := &a.choices[ch.Index]
	if ch.FinishReason != nil && *ch.FinishReason != "" {
		acc.finish = *ch.FinishReason
	}
	s := ch.content()
	if s == "" {
		return nil
	}
	if acc.firstTokenNS == 0 {
		acc.firstTokenNS = now
	}
	acc.lastTokenNS = now
	acc.chunks++
	if room := a.lim.answer - acc.out.Len(); len(s) > room {
		acc.out.WriteString(truncate(s, room))
		what := "answer"
		if len(a.choices) > 1 {
			what = fmt.Sprintf("answer of prompt %d", ch.Index)
		}
		return a.lim.tooLarge(fmt.Sprintf("%s passed its %d-byte cap at content chunk %d, output kept up to it",
			what, a.lim.answer, acc.chunks))
	}
	acc.out.WriteString(s)
	return nil
}

// fill sets on r what the stream said of choice i: its output (cleaned by
// red), content instants, finish reason, chunk count and the usage that
// counts it, its own or, when single says the call had one prompt, the
// call's. A request column read from what the engine sends is a field of
// chunk, kept by the accumulator and set here: this file is its decoder.
func (a *streamAcc) fill(r *extractbench.Response, i int, single bool, red *Redactor) {
	ch := &a.choices[i]
	// The answer is judged as the engine gave it: a key it echoes is
	// redacted where it is written (results.Store), not before scoring.
	r.Output = validUTF8(ch.out.String())
	r.FirstTokenNS, r.LastTokenNS = ch.firstTokenNS, ch.lastTokenNS
	r.FinishReason = cleanText(red, ch.finish)
	r.ClientChunks = ch.chunks
	u := ch.usage
	if u == nil && single {
		u = a.total
	}
	switch {
	case u != nil && u.bad != "":
		// Not whole numbers: refused, the answer kept (eval.RefuseImpossibleUsage).
		r.UsageRefused = "usage " + u.bad
		r.CompletionTokens = ch.chunks
	case u != nil:
		r.PromptTokens, r.CompletionTokens, r.UsageReported = u.prompt, u.completion, true
		r.CachedPromptTokens = u.cached
	default:
		r.CompletionTokens = ch.chunks
		if single {
			r.PromptTokens = a.rejectedPrompt
		}
	}
	if r.CachedPromptTokens == nil && single {
		r.CachedPromptTokens = a.cacheN // llama.cpp's timings on a chunk of their own
	}
}

func inRange(i, n int) bool { return i >= 0 && i < n }

func hasError(raw json.RawMessage) bool {
	r := bytes.TrimSpace(raw)
	return len(r) > 0 && !bytes.Equal(r, []byte("null"))
}

// isErrorObject reports whether data is an error object standing alone,
// {"object": "error", "message": ..., "code": 400}: vLLM's ErrorResponse as
// its non-streamed answers write it, which a server streaming it as is
// would send. Only a chunk with neither choices nor usage is asked, so a
// stream's own chunks cost nothing more.
func isErrorObject(data []byte) bool {
	var v struct {
		Object string `json:"object"`
	}
	return json.Unmarshal(data, &v) == nil && v.Object == "error"
}
