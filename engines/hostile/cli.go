package hostile

import "net/http"

// CLIVLLM is a well-behaved engine that names itself as vLLM does, in the
// owned_by of GET /v1/models: what `extractbench run -url` detects the
// engine kind from.
const CLIVLLM Mode = "cli-vllm"

func init() {
	register(CLIVLLM, func(s *Server, o Options) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
			WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
				map[string]any{"id": Model, "object": "model", "owned_by": "vllm", "max_model_len": 4096}}})
		})
		mux.Handle("/", Base(s, o, func(w http.ResponseWriter, r *http.Request) { StreamAnswer(w, Answer) }))
		return mux
	})
}
