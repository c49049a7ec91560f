package hostile

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
)

// Modes that echo the client's secret back, in the encodings an engine
// may use, so that a test can prove the tool writes it nowhere.
const (
	// SecretsEcho needs Options.APIKey as a Bearer token and echoes it, in
	// turn: in a 400 error body JSON-escaped (\u0073\u006b…) beside its
	// base64; in the streamed content, split across two chunks; in the
	// content again, JSON-escaped in the chunk's JSON and base64-encoded.
	SecretsEcho Mode = "secrets-echo"
	// SecretsBasicAuth answers only a request whose Basic credentials are
	// Options.APIKey ("user:password", as a URL's userinfo gives them),
	// with the normal answer: a run must use the credentials of engine.url
	// even though it never writes them.
	SecretsBasicAuth Mode = "secrets-basic-auth"
	// SecretsEchoUpper needs Options.APIKey and refuses every request with
	// a 401 whose body names the key upper-cased and then with its first
	// half lower-cased, as some gateways print "INVALID API KEY …": the
	// store must find a key in any case.
	SecretsEchoUpper Mode = "secrets-echo-upper"
	// ErrorBodyNUL answers every request with a 500 whose body carries NUL
	// bytes between words: SQLite's length() and C readers stop at the
	// first NUL, so the store must keep the body readable whole.
	ErrorBodyNUL Mode = "error-body-nul"
)

// EscapeJSON writes every character of s as a JSON \u escape.
func EscapeJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}

func init() {
	register(SecretsEcho, func(s *Server, o Options) http.Handler {
		key := o.APIKey
		b64 := base64.StdEncoding.EncodeToString([]byte(key))
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			switch s.Requests.Load() % 3 {
			case 1:
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"error":{"message":"rejected key \"%s\" (basic %s)","code":400}}`, EscapeJSON(key), b64)
			case 2:
				SSEHeaders(w)
				half := len(key) / 2
				fmt.Fprint(w, Chunk(`{"date":null,"amount":null,"category":null,"note":"`+key[:half]))
				Flush(w)
				fmt.Fprint(w, Chunk(key[half:]+`"}`))
				fmt.Fprint(w, Final(10, 12))
				fmt.Fprint(w, Done)
			default:
				SSEHeaders(w)
				fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-hostile\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":%q,"+
					"\"choices\":[{\"index\":0,\"delta\":{\"content\":\"key %s, b64 %s \"},\"finish_reason\":null}]}\n\n", Model, EscapeJSON(key), b64)
				fmt.Fprint(w, Chunk(Answer))
				fmt.Fprint(w, Final(10, 12))
				fmt.Fprint(w, Done)
			}
		})
	})
	register(SecretsEchoUpper, func(s *Server, o Options) http.Handler {
		up := strings.ToUpper(o.APIKey)
		mixed := strings.ToLower(up[:len(up)/2]) + up[len(up)/2:]
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			WriteJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"message": "INVALID API KEY " + up + " (" + mixed + ")", "code": 401}})
		})
	})
	register(ErrorBodyNUL, func(s *Server, o Options) http.Handler {
		return Base(s, o, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "\x00internal\x00error\x00 in worker 3")
		})
	})
	register(SecretsBasicAuth, func(s *Server, o Options) http.Handler {
		mux := BaseMux(Options{})
		h := func(w http.ResponseWriter, r *http.Request) {
			s.Requests.Add(1)
			user, pass, ok := r.BasicAuth()
			if !ok || user+":"+pass != o.APIKey {
				WriteJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"message": "Basic credentials required", "code": 401}})
				return
			}
			StreamAnswer(w, Answer)
		}
		mux.HandleFunc("POST /v1/chat/completions", h)
		mux.HandleFunc("POST /v1/completions", h)
		return mux
	})
}
