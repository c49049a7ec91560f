package hostile

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// PromptCacheSlots is how many slots LlamaCppPromptCache has by default.
const PromptCacheSlots = 4

// LlamaCppSlotActionsDisabled is llama-server b1-de3ff81's answer to POST
// /slots/{id} when it was started without --slot-save-path
// (server-context.cpp, ERROR_TYPE_NOT_SUPPORTED: HTTP 501).
const LlamaCppSlotActionsDisabled = `{"error":{"code":501,"message":"This server does not support slots action. Start it with ` + "`--slot-save-path`" + `","type":"not_supported_error"}}`

// promptCache is LlamaCppPromptCache's memory: every prompt it was sent,
// each held by the slot it entered.
type promptCache struct {
	mu      sync.Mutex
	slots   int
	actions bool // POST /slots/{id} served (llama-server's --slot-save-path)
	seen    []cachedPrompt
}

type cachedPrompt struct {
	text   string
	slot   int
	tokens int
}

func newPromptCache(slots int, actions bool) *promptCache {
	if slots <= 0 {
		slots = PromptCacheSlots
	}
	return &promptCache{slots: slots, actions: actions}
}

// admit records prompt (tokens long) and returns how many of its tokens the
// cache held: the prefix it shares with the nearest prompt, all but one
// token at most.
func (c *promptCache) admit(prompt string, tokens int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	shared := 0
	for _, p := range c.seen {
		shared = max(shared, commonPrefix(p.text, prompt))
	}
	c.seen = append(c.seen, cachedPrompt{text: prompt, slot: len(c.seen) % c.slots, tokens: tokens})
	return min(shared/PromptBytesPerToken, tokens-1)
}

// erase drops what slot id holds and returns its tokens.
func (c *promptCache) erase(id int) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	kept := c.seen[:0]
	for _, p := range c.seen {
		if p.slot == id {
			n += p.tokens
			continue
		}
		kept = append(kept, p)
	}
	c.seen = kept
	return n
}

func (c *promptCache) handler(s *Server, o Options) http.Handler {
	mux := Base(s, o, c.chat).(*http.ServeMux)
	// GET /slots: one object a slot, in the shape captured from llama-server
	// (engines/llamacpp/testdata/slots.body), idle.
	mux.HandleFunc("GET /slots", func(w http.ResponseWriter, r *http.Request) {
		slots := make([]map[string]any, c.slots)
		for i := range slots {
			slots[i] = map[string]any{"id": i, "n_ctx": 4096, "speculative": false, "is_processing": false}
		}
		writeLlamaCppJSON(w, http.StatusOK, slots)
	})
	// POST /slots/{id}?action=erase: {"id_slot":0,"n_erased":N}; an unknown
	// slot or action is llama.cpp's 400 invalid_request_error.
	mux.HandleFunc("POST /slots/{id}", func(w http.ResponseWriter, r *http.Request) {
		if !c.actions {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusNotImplemented)
			fmt.Fprint(w, LlamaCppSlotActionsDisabled)
			return
		}
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil || id < 0 || id >= c.slots {
			writeLlamaCppJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": 400, "message": "Invalid slot ID", "type": "invalid_request_error"}})
			return
		}
		if r.URL.Query().Get("action") != "erase" {
			writeLlamaCppJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": 400, "message": "Invalid action", "type": "invalid_request_error"}})
			return
		}
		writeLlamaCppJSON(w, http.StatusOK, map[string]any{"id_slot": id, "n_erased": c.erase(id)})
	})
	return mux
}

func writeLlamaCppJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// chat answers as llama.cpp does, reporting the prompt's cached prefix.
func (c *promptCache) chat(w http.ResponseWriter, r *http.Request) {
	prompt := promptOf(r)
	tokens := len(prompt)/PromptBytesPerToken + 1
	cached := c.admit(prompt, tokens)
	SSEHeaders(w)
	fmt.Fprint(w, llamaCppChunk(map[string]any{"role": "assistant", "content": nil}, nil))
	pieces := 0
	for rest := Answer; rest != ""; pieces++ {
		n := min(3, len(rest))
		fmt.Fprint(w, llamaCppChunk(map[string]any{"content": rest[:n]}, nil))
		Flush(w)
		rest = rest[n:]
		time.Sleep(time.Millisecond) // tokens arrive apart, as generated
	}
	fmt.Fprint(w, llamaCppChunk(map[string]any{}, "stop"))
	completion := pieces + 1 // the end-of-generation token, never streamed
	b, _ := json.Marshal(map[string]any{
		"choices": []any{}, "created": 1, "id": "chatcmpl-hostile", "model": Model, "object": "chat.completion.chunk",
		"usage": map[string]any{"completion_tokens": completion, "prompt_tokens": tokens, "total_tokens": tokens + completion,
			"prompt_tokens_details": map[string]any{"cached_tokens": cached}},
		"timings": map[string]any{"cache_n": cached, "prompt_n": tokens - cached, "prompt_ms": 1.5, "predicted_n": completion, "predicted_ms": 2.5},
	})
	fmt.Fprint(w, "data: "+string(b)+"\n\n", Done)
}
