package builtin

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
)

// Chat template overhead in tokens (Llama 3): the begin-of-text token and
// the assistant header once, and a header and an end-of-turn per message.
const (
	chatTemplateBase       = 5
	chatTemplatePerMessage = 5
)

// generation is one sequence a request asks for: its prompt and its answer.
type generation struct {
	index  int
	prompt int      // prompt tokens
	tokens []string // the answer cut at max_tokens
	finish string   // "stop", or "length" when cut
	fault  Fault
}

// sampling is what a request says about sampling and length.
type sampling struct {
	maxTokens   *int
	temperature float64
	seed        string // "" when the request gave none: a fresh draw per request
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if e := s.decode(r, &req); e != nil {
		s.refuse(w, r, e)
		return
	}
	if e := s.checkRequest(req.Model, req.N); e != nil {
		s.refuse(w, r, e)
		return
	}
	if len(req.Messages) == 0 {
		s.refuse(w, r, errBadRequest("messages: at least one message is required"))
		return
	}
	prompt, user, system := chatTemplateBase, "", ""
	for _, m := range req.Messages {
		prompt += chatTemplatePerMessage + corpus.ApproxTokens(string(m.Content))
		switch m.Role {
		case "user":
			user = string(m.Content)
		case "system":
			system = string(m.Content)
		}
	}
	if user == "" {
		user = string(req.Messages[len(req.Messages)-1].Content)
	}
	max := req.MaxCompletionTokens
	if max == nil {
		max = req.MaxTokens
	}
	decl := s.declaredOf(req.ResponseFormat, system+"\n"+user)
	g, e := s.plan(0, user, prompt, s.sampling(max, req.Temperature, req.Seed), decl)
	if e != nil {
		s.refuse(w, r, e)
		return
	}
	s.run(w, r, "chat", req.Model, []*generation{g}, req.Stream, req.StreamOptions)
}

func (s *Server) handleCompletions(w http.ResponseWriter, r *http.Request) {
	var req completionRequest
	if e := s.decode(r, &req); e != nil {
		s.refuse(w, r, e)
		return
	}
	if e := s.checkRequest(req.Model, req.N); e != nil {
		s.refuse(w, r, e)
		return
	}
	prompts, err := req.prompts()
	if err != nil {
		s.refuse(w, r, errBadRequest("%v", err))
		return
	}
	var gens []*generation
	for i, p := range prompts {
		g, e := s.plan(i, p, 1+corpus.ApproxTokens(p), s.sampling(req.MaxTokens, req.Temperature, req.Seed), s.declaredOf(req.ResponseFormat, p))
		if e != nil {
			s.refuse(w, r, e)
			return
		}
		gens = append(gens, g)
	}
	s.run(w, r, "text", req.Model, gens, req.Stream, req.StreamOptions)
}

func (s *Server) checkRequest(model string, n *int) *apiError {
	if !s.models[model] {
		return errModelNotFound(model)
	}
	if n != nil && *n != 1 {
		return errBadRequest("n=%d: the built-in engine generates one choice per prompt", *n)
	}
	return nil
}

func (s *Server) sampling(max *int, temperature *float64, seed *int64) sampling {
	sp := sampling{maxTokens: max, temperature: 1} // OpenAI's default temperature
	if temperature != nil {
		sp.temperature = *temperature
	}
	if seed != nil {
		sp.seed = strconv.FormatInt(*seed, 10)
	} else {
		sp.seed = "request-" + strconv.FormatUint(s.nextID.Add(1), 10)
	}
	return sp
}

// plan checks the context window and decides the answer of one prompt:
// the default fields', or those of decl when the request declares some.
func (s *Server) plan(index int, text string, prompt int, sp sampling, decl *declared) (*generation, *apiError) {
	window := s.p.ContextWindow
	max := window - prompt
	if sp.maxTokens != nil {
		max = *sp.maxTokens
		if max < 1 {
			return nil, errBadRequest("max_tokens must be at least 1, got %d", max)
		}
	}
	if prompt >= window && sp.maxTokens == nil {
		return nil, errContextLength(window, prompt, 0)
	}
	if prompt+max > window {
		return nil, errContextLength(window, prompt, max)
	}
	doc := documentText(text)
	hash := docHash(doc)
	g := &generation{index: index, prompt: prompt, finish: "stop", fault: chooseFault(&s.cfg, doc, hash)}
	g.tokens = splitTokens(s.answer(doc, hash, g.fault, sp, decl))
	if g.fault == FaultTruncate {
		g.tokens, g.finish = g.tokens[:len(g.tokens)/2], "length"
	}
	if len(g.tokens) > max {
		g.tokens, g.finish = g.tokens[:max], "length"
	}
	return g, nil
}

// answer writes the answer of one document: its fault's, else the
// variant's (perturbed or not).
func (s *Server) answer(doc, hash string, f Fault, sp sampling, decl *declared) string {
	content := f != FaultNone && f != FaultOOM && f != FaultHTML && f != FaultReset && f != FaultTruncate
	if decl != nil {
		rd := s.readDeclared(doc, hash, decl)
		if content {
			return declaredFaultAnswer(f, decl, rd, hash)
		}
		return declaredJSON(decl, rd, declaredPerturbation(decl, rd, hash, choosePerturbation(s.variant, hash, sp.temperature, sp.seed)))
	}
	ex := s.extract(doc, hash)
	if content {
		return faultAnswer(f, ex)
	}
	return answerJSON(ex, choosePerturbation(s.variant, hash, sp.temperature, sp.seed))
}

// run submits the generations to the scheduler and writes what comes back,
// streamed or whole.
func (s *Server) run(w http.ResponseWriter, r *http.Request, kind, model string, gens []*generation, stream bool, so *streamOptions) {
	for _, g := range gens {
		switch g.fault {
		case FaultOOM:
			s.refuse(w, r, errCUDAOOM(s.p, http.StatusInternalServerError, "InternalServerError", "(injected fault)"))
			return
		case FaultHTML:
			if s.notice(r) {
				now := s.cfg.Clock.Now()
				setInstantsHeader(w.Header(), extractbench.EngineInstants{Arrived: now, Done: now})
			}
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, htmlPage)
			return
		}
	}
	capacity := 0
	for _, g := range gens {
		capacity += len(g.tokens) + 2
	}
	out := make(chan event, capacity)
	now := time.Now()
	prefix := "chatcmpl-"
	if kind == "text" {
		prefix = "cmpl-"
	}
	id := prefix + strconv.FormatUint(s.nextID.Add(1), 16)
	seqs := make([]*seq, len(gens))
	for i, g := range gens {
		seqs[i] = &seq{ctx: r.Context(), id: id, index: g.index, prompt: g.prompt, tokens: g.tokens, finish: g.finish, arrived: now, out: out}
	}
	select {
	case s.sched.submit <- submission{seqs: seqs, lock: s.lockstep(r)}:
	case <-r.Context().Done():
		return
	case <-s.done:
		writeError(w, errShuttingDown())
		return
	}
	wr := &writer{w: w, done: s.done, kind: kind, id: id, model: model, created: now.Unix(), gens: gens}
	if s.cfg.Clock != nil {
		wr.clock = newClockNotes(s.cfg.Clock, seqs)
	}
	if so != nil {
		wr.includeUsage, wr.continuousUsage = so.IncludeUsage, so.IncludeUsage && so.ContinuousUsage
	}
	if stream {
		wr.stream(r, out)
	} else {
		wr.whole(r, out)
	}
}

// writer writes the answer of one request in the OpenAI shapes.
type writer struct {
	w            http.ResponseWriter
	done         <-chan struct{} // closed when the scheduler has stopped
	kind         string          // "chat" or "text"
	id, model    string
	created      int64
	gens         []*generation
	includeUsage bool
	// continuousUsage puts each choice's usage so far on its chunks, as
	// vLLM does with continuous_usage_stats (with include_usage).
	continuousUsage bool
	clock           *clockNotes // the answer's instants on the engine clock; nil without one
}

func (wr *writer) usage() usage {
	var u usage
	for _, g := range wr.gens {
		u.PromptTokens += g.prompt
		u.CompletionTokens += len(g.tokens)
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

// choiceUsage is choice i's usage after emitted tokens, for its chunks
// under continuous usage; nil otherwise.
func (wr *writer) choiceUsage(i, emitted int) *usage {
	if !wr.continuousUsage {
		return nil
	}
	u := usage{PromptTokens: wr.gens[i].prompt, CompletionTokens: emitted}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return &u
}

func (wr *writer) object(chunk bool) string {
	switch {
	case wr.kind == "text":
		return "text_completion"
	case chunk:
		return "chat.completion.chunk"
	}
	return "chat.completion"
}

// next waits for the next event of the request; false when the client went
// away. A shutting-down engine answers with an error event.
func (wr *writer) next(r *http.Request, out <-chan event) (event, bool) {
	select {
	case e := <-out:
		wr.clock.note(e)
		return e, true
	case <-r.Context().Done():
		return event{}, false
	case <-wr.done:
		return event{err: errShuttingDown()}, true
	}
}

// stream writes SSE: a role-only chunk (chat), one chunk per token, a finish
// chunk per choice, the usage chunk when asked, and [DONE]. An error before
// the first token is an HTTP error; after it, an error event.
func (wr *writer) stream(r *http.Request, out <-chan event) {
	flusher, _ := wr.w.(http.Flusher)
	ev := &sse{w: wr.w, flusher: flusher, buf: make([]byte, 0, 512)}
	enc := newChunkEncoder(wr)
	emitted := make([]int, len(wr.gens))
	for remaining := len(wr.gens); remaining > 0; {
		e, ok := wr.next(r, out)
		if !ok {
			return
		}
		if e.err != nil {
			if !ev.started {
				wr.clock.header(wr.w.Header())
				writeError(wr.w, e.err)
				return
			}
			_ = ev.send(map[string]any{"error": e.err})
			ev.done()
			wr.clock.header(wr.w.Header())
			return
		}
		if !ev.started {
			wr.clock.declare(wr.w.Header())
		}
		if !ev.started && wr.kind == "chat" {
			if ev.write(enc.appendRole(ev.line())) != nil {
				return
			}
		}
		g := wr.gens[e.index]
		emitted[e.index]++
		if ev.write(enc.appendPiece(ev.line(), e.index, e.token, "", wr.choiceUsage(e.index, emitted[e.index]))) != nil {
			return
		}
		if g.fault == FaultReset && emitted[e.index] >= len(g.tokens)/2 {
			ev.flush()
			panic(http.ErrAbortHandler) // the connection drops mid-stream
		}
		if e.finish != "" {
			if ev.write(enc.appendPiece(ev.line(), e.index, "", e.finish, wr.choiceUsage(e.index, emitted[e.index]))) != nil {
				return
			}
			remaining--
		}
		if len(out) == 0 {
			ev.flush() // nothing else is ready: put what was written on the wire
		}
	}
	if wr.includeUsage {
		u := wr.usage()
		_ = ev.send(response{ID: wr.id, Object: wr.object(true), Created: wr.created, Model: wr.model, Choices: []any{}, Usage: &u})
	}
	ev.done()
	wr.clock.header(wr.w.Header())
}

// whole waits for every token and writes one JSON body.
func (wr *writer) whole(r *http.Request, out <-chan event) {
	texts := make([]strings.Builder, len(wr.gens))
	finish := make([]string, len(wr.gens))
	for remaining := len(wr.gens); remaining > 0; {
		e, ok := wr.next(r, out)
		if !ok {
			return
		}
		if e.err != nil {
			wr.clock.header(wr.w.Header())
			writeError(wr.w, e.err)
			return
		}
		texts[e.index].WriteString(e.token)
		if e.finish != "" {
			finish[e.index] = e.finish
			remaining--
		}
	}
	choices := make([]any, len(wr.gens))
	reset := false
	for i := range wr.gens {
		if wr.kind == "text" {
			choices[i] = textChoice{Index: i, Text: texts[i].String(), FinishReason: strPtr(finish[i])}
		} else {
			choices[i] = chatChoice{Index: i, Message: &chatMessage{Role: "assistant", Content: messageText(texts[i].String())}, FinishReason: strPtr(finish[i])}
		}
		reset = reset || wr.gens[i].fault == FaultReset
	}
	u := wr.usage()
	body := response{ID: wr.id, Object: wr.object(false), Created: wr.created, Model: wr.model, Choices: choices, Usage: &u}
	if !reset {
		wr.clock.header(wr.w.Header())
		writeJSON(wr.w, http.StatusOK, body)
		return
	}
	b, _ := jsonMarshal(body)
	wr.w.Header().Set("Content-Type", "application/json")
	wr.w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	wr.w.WriteHeader(http.StatusOK)
	wr.w.Write(b[:len(b)/2])
	if f, ok := wr.w.(http.Flusher); ok {
		f.Flush()
	}
	panic(http.ErrAbortHandler) // the connection drops halfway through the body
}
