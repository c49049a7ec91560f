package hostile

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/extractbench/extractbench/pipeline/tokenizer"
)

// Modes that tokenise the prompt as llama.cpp did the first committed model
// (h384, whose tokenizer and chat template stay in engines/transformers/
// model-h384 for these fixtures; its weights are in git's history) before and after its GGUF
// carried the model's normalizer in its chat template (engines/llamacpp/
// README.md, "The tokenizer"). Each renders the request's messages with the
// model's chat template, counts them with its tokenizer.json, and reports
// that count as usage.prompt_tokens (and timings.prompt_n) of a llama.cpp
// stream; the answer is Answer.
const (
	// LlamaCppTokensOld counts without the model's normalizer, as
	// llama.cpp did from a GGUF that cannot hold it: a run of spaces or tabs
	// the normalizer collapses to one space reaches the BPE whole, so a
	// document with aligned tables has far more prompt tokens (doc-0249:
	// 7,806 instead of 5,553) and one without runs the same count.
	LlamaCppTokensOld Mode = "llamacpp-tokens-old"
	// LlamaCppTokensExact counts as the model's tokenizer does: the
	// engine of the fixed GGUF, whose template collapses the runs itself.
	LlamaCppTokensExact Mode = "llamacpp-tokens-exact"
)

// ModelTokenizer is the first committed model's tokenizer.json (with the
// normalizer llama.cpp lacks), the one the
// LlamaCppTokens modes count with: a path from this file's directory, so
// that a test of any package finds it.
func ModelTokenizer() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "transformers", "model-h384", "tokenizer.json")
}

var modelPrompt = sync.OnceValues(func() (*tokenizer.Prompt, error) { return tokenizer.LoadPrompt(ModelTokenizer(), "") })

func init() {
	for _, m := range []Mode{LlamaCppTokensOld, LlamaCppTokensExact} {
		register(m, func(s *Server, o Options) http.Handler {
			return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
				p, err := modelPrompt()
				if err != nil {
					WriteJSON(w, http.StatusInternalServerError, map[string]any{"error": map[string]any{"code": 500, "message": err.Error(), "type": "server_error"}})
					return
				}
				if m == LlamaCppTokensOld {
					p = p.WithoutNormalizer()
				}
				var req struct {
					Messages []struct {
						Role    string `json:"role"`
						Content string `json:"content"`
					} `json:"messages"`
				}
				if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
					WriteJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"code": 400, "message": err.Error(), "type": "invalid_request_error"}})
					return
				}
				msgs := make([]tokenizer.Message, len(req.Messages))
				for i, m := range req.Messages {
					msgs[i] = tokenizer.Message{Role: m.Role, Content: m.Content}
				}
				n := p.Tokenizer.Count(p.Template.Render(msgs, true))
				SSEHeaders(w)
				fmt.Fprint(w, llamaCppChunk(map[string]any{"role": "assistant", "content": nil}, nil))
				fmt.Fprint(w, llamaCppChunk(map[string]any{"content": Answer}, nil))
				fmt.Fprint(w, llamaCppChunk(map[string]any{}, "stop"))
				usage, _ := json.Marshal(map[string]any{
					"choices": []any{}, "created": 1, "id": "chatcmpl-hostile", "model": Model,
					"system_fingerprint": llamaCppFingerprint, "object": "chat.completion.chunk",
					"usage":   map[string]any{"completion_tokens": 2, "prompt_tokens": n, "total_tokens": n + 2},
					"timings": map[string]any{"prompt_n": n, "predicted_n": 2},
				})
				fmt.Fprint(w, "data: "+string(usage)+"\n\n"+Done)
			})
		})
	}
}
