package hostile

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The llamacpp modes behave as llama.cpp's server does where its behaviour
// misleads a benchmark that ignores it, in the shapes a real llama-server
// (build b1-de3ff81) was captured writing (pipeline/client/testdata/llamacpp).
const (
	// LlamaCppPromptCache caches every prompt in slots (Options.N, default
	// PromptCacheSlots) as llama.cpp does, reports the prefix shared with the
	// nearest as cached (usage and timings.cache_n), and answers llama-server's
	// /slots and erase actions (llamacpp_slots.go). Like llama.cpp, it counts
	// the end-of-generation token in completion_tokens: the content chunks plus one.
	LlamaCppPromptCache Mode = "llamacpp-prompt-cache"
	// LlamaCppNoSlotActions is LlamaCppPromptCache as llama-server b1-de3ff81
	// runs without --slot-save-path: GET /slots lists the slots, and every
	// POST /slots/{id} is refused with its 501 not_supported_error, so the
	// cache cannot be erased.
	LlamaCppNoSlotActions Mode = "llamacpp-no-slot-actions"
	// LlamaCppKVPool is llama.cpp with slots sharing one KV pool too small
	// for Options.N + 1 (default 2) requests at once: each request fits
	// alone, but while more than N are in flight every one of them fails
	// with the runtime error "Context size has been exceeded." (HTTP 500
	// for the request that came last, an error event inside its 200 stream
	// for the others), as llama.cpp fails every slot when llama_decode
	// finds no room. A request holds KVPoolHold after its role chunk and
	// one content chunk before it finishes, so that requests sent together
	// are in flight together.
	LlamaCppKVPool Mode = "llamacpp-kv-pool"
)

// PromptBytesPerToken is how many bytes of the messages LlamaCppPromptCache
// counts as one prompt token.
const PromptBytesPerToken = 4

// KVPoolHold is how long a LlamaCppKVPool request stays in flight.
const KVPoolHold = 200 * time.Millisecond

// LlamaCppRuntimeContextError is llama.cpp's error object for a decode that
// found no room in the KV cache (server-context.cpp, "Context size has
// been exceeded.", ERROR_TYPE_SERVER), byte for byte as captured.
const LlamaCppRuntimeContextError = `{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}`

// promptOf is the prompt text of a chat request: its messages, in order.
func promptOf(r *http.Request) string {
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString("<" + m.Role + ">\n" + m.Content + "\n")
	}
	return b.String()
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func init() {
	register(LlamaCppPromptCache, func(s *Server, o Options) http.Handler {
		return newPromptCache(o.N, true).handler(s, o)
	})
	register(LlamaCppNoSlotActions, func(s *Server, o Options) http.Handler {
		return newPromptCache(o.N, false).handler(s, o)
	})
	register(LlamaCppKVPool, func(s *Server, o Options) http.Handler {
		limit := o.N
		if limit <= 0 {
			limit = 1
		}
		var mu sync.Mutex
		members := 0
		exceeded := make(chan struct{}) // closed when the requests in flight overflow the pool
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			members++
			mine := exceeded
			over := members > limit
			if over {
				close(exceeded) // every request in flight fails, as llama.cpp fails every slot
				exceeded = make(chan struct{})
			}
			mu.Unlock()
			defer func() {
				mu.Lock()
				members--
				mu.Unlock()
			}()
			if over {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprint(w, LlamaCppRuntimeContextError)
				return
			}
			SSEHeaders(w)
			fmt.Fprint(w, llamaCppChunk(map[string]any{"role": "assistant", "content": nil}, nil))
			fmt.Fprint(w, llamaCppChunk(map[string]any{"content": Answer[:2]}, nil))
			Flush(w)
			select {
			case <-mine:
				fmt.Fprint(w, "data: "+LlamaCppRuntimeContextError+"\n\n") // and no [DONE], as captured
				return
			case <-time.After(KVPoolHold):
			case <-r.Context().Done():
				return
			}
			fmt.Fprint(w, llamaCppChunk(map[string]any{"content": Answer[2:]}, nil))
			fmt.Fprint(w, llamaCppChunk(map[string]any{}, "stop"))
			fmt.Fprint(w, Final(10, 3), Done)
		})
	})
}
