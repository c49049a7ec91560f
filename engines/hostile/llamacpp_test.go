package hostile

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLlamaCppCloseAfterStream: a complete stream, then the connection is
// gone for the next request sent on it, as llama-server does.
func TestLlamaCppCloseAfterStream(t *testing.T) {
	s := MustNew(t, LlamaCppCloseAfterStream, Options{})
	conn, err := net.Dial("tcp", s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	req := "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
	br := bufio.NewReader(conn)

	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	if err != nil || !strings.HasSuffix(string(body), Done) || res.Header.Get("Keep-Alive") == "" {
		t.Fatalf("first answer %q (Keep-Alive %q, %v), want a whole stream that says Keep-Alive", body, res.Header.Get("Keep-Alive"), err)
	}

	io.WriteString(conn, req) // may succeed: the close comes after it
	if _, err := http.ReadResponse(br, nil); !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("second request on the connection: %v, want EOF", err)
	}
	if got := s.Requests.Load(); got != 1 {
		t.Fatalf("%d requests handled, want 1", got)
	}
}

// TestLlamaCppKVExhausted: content, then the error event and the end of the
// body, no [DONE].
func TestLlamaCppKVExhausted(t *testing.T) {
	s := MustNew(t, LlamaCppKVExhausted, Options{})
	res, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.Contains(string(b), `"content":"{\"date\": \""`) ||
		!strings.HasSuffix(string(b), LlamaCppKVExhaustedError) || strings.Contains(string(b), "[DONE]") {
		t.Fatalf("HTTP %d %q", res.StatusCode, b)
	}
}
