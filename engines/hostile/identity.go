package hostile

import "net/http"

// UpgradeUnderRun is a vLLM upgraded while a run measures it, as an
// operator who restarts it on a new build behind the same URL and served
// name leaves it: GET /version answers UpgradeFrom until the engine has
// received Options.N chat requests (UpgradeAfter when 0), UpgradeTo after.
// Its /v1/models names vLLM (owned_by) and the same model throughout, and
// every request is answered well: only asking what it is shows the change.
const UpgradeUnderRun Mode = "upgrade-under-run"

// The versions UpgradeUnderRun reports before and after its upgrade.
const (
	UpgradeFrom = "0.9.0"
	UpgradeTo   = "0.10.0"
)

// UpgradeAfter is how many chat requests UpgradeUnderRun answers as
// UpgradeFrom by default.
const UpgradeAfter = 4

func init() {
	register(UpgradeUnderRun, func(s *Server, o Options) http.Handler {
		after := int64(o.N)
		if after <= 0 {
			after = UpgradeAfter
		}
		mux := http.NewServeMux()
		mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
			v := UpgradeFrom
			if s.Requests.Load() >= after {
				v = UpgradeTo
			}
			WriteJSON(w, http.StatusOK, map[string]any{"version": v})
		})
		mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
			WriteJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
				map[string]any{"id": Model, "object": "model", "owned_by": "vllm", "max_model_len": 4096}}})
		})
		mux.Handle("/", Base(s, o, func(w http.ResponseWriter, r *http.Request) { StreamAnswer(w, Answer) }))
		return mux
	})
}
