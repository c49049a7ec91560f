package hostile

import (
	"net/http"
	"sync/atomic"
	"time"
)

// Modes of an engine that dies under a run without memory evidence: a
// run must call it dead (ERROR, exit 3), never charge the model a memory
// failure for it.
const (
	// TransportDiesAfterN answers its first Options.N (default 4) chat
	// requests well, then cuts every connection, health checks included,
	// as a killed engine's port does.
	TransportDiesAfterN Mode = "transport-dies-after-n"
	// TransportRestarts answers its first Options.N (default 4) chat
	// requests well, cuts every connection for the next 2 s (an engine
	// restarting on its port), then answers well again.
	TransportRestarts Mode = "transport-restarts"
)

func init() {
	register(TransportDiesAfterN, deathMode(false))
	register(TransportRestarts, deathMode(true))
}

// deathMode answers n chat requests, then cuts every request; back says it
// answers again after 2 s.
func deathMode(back bool) builder {
	return func(s *Server, o Options) http.Handler {
		n := int64(o.N)
		if n <= 0 {
			n = 4
		}
		var answered atomic.Int64
		var diedAt atomic.Int64 // unix ns; 0 while alive
		engine := Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			StreamAnswer(w, Answer)
			if answered.Add(1) == n {
				diedAt.Store(time.Now().UnixNano())
			}
		})
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if at := diedAt.Load(); at != 0 && (!back || time.Now().UnixNano()-at < 2e9) {
				if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
					conn.Close()
				}
				return
			}
			engine.ServeHTTP(w, r)
		})
	}
}
