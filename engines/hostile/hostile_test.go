package hostile

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestNormal_StreamsAnAnswer(t *testing.T) {
	s := MustNew(t, Normal, Options{})
	res, err := http.Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(b), "[DONE]") || s.Requests.Load() != 1 {
		t.Fatalf("got %q after %d requests", b, s.Requests.Load())
	}
}

func TestNew_UnknownMode(t *testing.T) {
	if _, err := New("no-such-mode", Options{}); err == nil {
		t.Fatal("want an error for an unknown mode")
	}
}
