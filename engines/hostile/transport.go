package hostile

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
)

// The transport modes: what an engine (or what stands in front of it) does
// to the connection, the metadata calls and the bytes around an answer.
const (
	// TransportCloseAfterStream advertises keep-alive (Keep-Alive:
	// timeout=5, max=100, as llama-server does) but closes a connection
	// that has carried a streamed answer: the next request written on it,
	// chat or metadata, is dropped unanswered. (llama-server closes at once;
	// waiting for the next request makes the client's race certain.) Only
	// answered chat requests count in Requests. POST /reset_peaks answers.
	TransportCloseAfterStream Mode = "transport-close-after-stream"
	// TransportDrop drops every chat request unanswered, on any
	// connection: the connection closes before a byte of an answer. Every
	// request received counts.
	TransportDrop Mode = "transport-drop"
	// TransportSilentVersion, TransportSilentModels and
	// TransportSilentResetPeaks hold GET /version, GET /v1/models or POST
	// /reset_peaks until the client goes away: no answer, no error.
	TransportSilentVersion    Mode = "transport-silent-version"
	TransportSilentModels     Mode = "transport-silent-models"
	TransportSilentResetPeaks Mode = "transport-silent-reset-peaks"
	// TransportRedirect302 and TransportRedirect307 redirect every path but
	// /health to the same path on a second server, the mode's Sink (SinkOf),
	// which answers as Normal does and counts what reaches it. Requests
	// counts the requests redirected.
	TransportRedirect302 Mode = "transport-redirect-302"
	TransportRedirect307 Mode = "transport-redirect-307"
	// TransportBinary500 answers chat with a 500 whose body is binary: every
	// byte value, invalid UTF-8 included.
	TransportBinary500 Mode = "transport-binary-500"
	// TransportEchoKeyEscaped answers chat with a 401 whose JSON body echoes
	// Options.APIKey JSON-escaped (\u with lower- and upper-case hex, and as
	// json.Marshal writes it) and URL-encoded (lower-case %xx).
	TransportEchoKeyEscaped Mode = "transport-echo-key-escaped"
	// TransportEchoKeyStream streams an answer whose content carries
	// Options.APIKey, split across two chunks.
	TransportEchoKeyStream Mode = "transport-echo-key-stream"
)

// KeepAlive is what TransportCloseAfterStream advertises (llama-server's).
const KeepAlive = "timeout=5, max=100"

// BinaryBody is TransportBinary500's body: every byte value, twice.
var BinaryBody = func() []byte {
	b := make([]byte, 0, 512)
	for i := range 512 {
		b = append(b, byte(i))
	}
	return b
}()

func init() {
	register(TransportCloseAfterStream, closeAfterStream)
	register(TransportDrop, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) { drop(w) })
	})
	silent := func(pattern string) builder {
		return func(s *Server, o Options) http.Handler {
			done := closing(s)
			return intercept(Base(s, o, normal), pattern, func(w http.ResponseWriter, r *http.Request) {
				select { // the server notices the client's close once the request was read: no body here
				case <-r.Context().Done():
				case <-done:
				}
			})
		}
	}
	register(TransportSilentVersion, silent("GET /version"))
	register(TransportSilentModels, silent("GET /v1/models"))
	register(TransportSilentResetPeaks, silent("POST /reset_peaks"))
	register(TransportRedirect302, redirect(http.StatusFound))
	register(TransportRedirect307, redirect(http.StatusTemporaryRedirect))
	register(TransportBinary500, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write(BinaryBody)
		})
	})
	register(TransportEchoKeyEscaped, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"invalid api key %s","upper":"%s","marshalled":%s,"param":"https://x/?key=%s","code":401}}`,
				uEscape(o.APIKey, "\\u%04x"), uEscape(o.APIKey, "\\u%04X"), marshalSlashes(o.APIKey), pctLower(o.APIKey))
		})
	})
	register(TransportEchoKeyStream, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			half := len(o.APIKey) / 2
			SSEHeaders(w)
			fmt.Fprint(w, Chunk(`{"date":null,"amount":null,"category":"other","note":"`+o.APIKey[:half]))
			Flush(w)
			fmt.Fprint(w, Chunk(o.APIKey[half:]+`"}`))
			fmt.Fprint(w, Final(10, 12))
			fmt.Fprint(w, Done)
		})
	})
}

func normal(w http.ResponseWriter, r *http.Request) { StreamAnswer(w, Answer) }

// drop closes the request's connection without a byte of an answer.
func drop(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	_ = conn.Close()
}

// connStreamed is the per-connection flag of TransportCloseAfterStream: the
// connection has carried a streamed answer.
type connStreamed struct{}

func closeAfterStream(s *Server, o Options) http.Handler {
	s.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connStreamed{}, new(atomic.Bool))
	}
	mux := http.NewServeMux()
	mux.Handle("/", Base(s, o, func(w http.ResponseWriter, r *http.Request) {
		StreamAnswer(w, Answer)
		r.Context().Value(connStreamed{}).(*atomic.Bool).Store(true)
	}))
	mux.HandleFunc("POST /reset_peaks", func(w http.ResponseWriter, r *http.Request) { WriteJSON(w, http.StatusOK, map[string]any{"ok": true}) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(connStreamed{}).(*atomic.Bool).Load() {
			drop(w) // the connection the client thinks alive
			return
		}
		w.Header().Set("Connection", "keep-alive")
		w.Header().Set("Keep-Alive", KeepAlive)
		mux.ServeHTTP(w, r)
	})
}

// intercept serves pattern with h and everything else with next.
func intercept(next http.Handler, pattern string, h http.HandlerFunc) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", next)
	mux.HandleFunc(pattern, h)
	return mux
}

// Sink is the second server of a redirect mode: it answers as Normal does
// and counts what reaches it, keeping each request's Authorization header.
type Sink struct {
	*httptest.Server
	requests atomic.Int64
	mu       sync.Mutex
	auth     []string
}

// Requests is how many requests reached the sink.
func (k *Sink) Requests() int64 { return k.requests.Load() }

// Authorizations are the Authorization headers the sink received.
func (k *Sink) Authorizations() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.auth...)
}

var sinks sync.Map // *Server → *Sink

// SinkOf is the Sink of a redirect mode's server; nil for other modes.
func SinkOf(s *Server) *Sink {
	k, _ := sinks.Load(s)
	sink, _ := k.(*Sink)
	return sink
}

func redirect(code int) builder {
	return func(s *Server, o Options) http.Handler {
		sink := &Sink{}
		sinkHandler := Base(&Server{}, Options{}, normal)
		sink.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sink.requests.Add(1)
			sink.mu.Lock()
			sink.auth = append(sink.auth, r.Header.Get("Authorization"))
			sink.mu.Unlock()
			sinkHandler.ServeHTTP(w, r)
		}))
		sinks.Store(s, sink)
		closing(s, func() {
			sink.Close()
			sinks.Delete(s)
		})
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/health" {
				w.WriteHeader(http.StatusOK)
				return
			}
			s.Requests.Add(1)
			w.Header().Set("Location", sink.URL+r.URL.RequestURI())
			w.WriteHeader(code)
		})
	}
}

// closing returns a channel closed when s closes (its listener does), and
// runs also then: a held request lets go, a mode's second server stops.
func closing(s *Server, also ...func()) <-chan struct{} {
	done := make(chan struct{})
	s.Listener = &closeHook{Listener: s.Listener, fn: func() {
		close(done)
		for _, f := range also {
			f()
		}
	}}
	return done
}

type closeHook struct {
	net.Listener
	once sync.Once
	fn   func()
}

func (l *closeHook) Close() error {
	l.once.Do(l.fn)
	return l.Listener.Close()
}

// uEscape writes every rune of s with format (a \u escape).
func uEscape(s, format string) string {
	var b strings.Builder
	for _, c := range s {
		fmt.Fprintf(&b, format, c)
	}
	return b.String()
}

// marshalSlashes is s as a JSON string with '/' escaped too (PHP's
// json_encode) and <, >, & as \u escapes (Go's json.Marshal).
func marshalSlashes(s string) string {
	r := strings.NewReplacer(`"`, `\"`, `\`, `\\`, `/`, `\/`, `<`, `\u003c`, `>`, `\u003e`, `&`, `\u0026`)
	return `"` + r.Replace(s) + `"`
}

// pctLower is s URL-encoded with lower-case hex, every byte but letters and digits.
func pctLower(s string) string {
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02x", c)
	}
	return b.String()
}
