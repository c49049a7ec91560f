package hostile

import (
	"net/http"
	"strings"
	"testing"
)

// TestH2COnly: an HTTP/1 client gets HTTP/2's frames, which it reads as a
// malformed response; an h2c client gets the answer.
func TestH2COnly(t *testing.T) {
	s := MustNew(t, TransportH2COnly, Options{})
	if _, err := http.Get(s.URL + "/health"); err == nil || !strings.Contains(err.Error(), `malformed HTTP response "\x00\x00\x00\x04`) {
		t.Errorf("HTTP/1 client: err = %v, want a malformed response of HTTP/2 frames", err)
	}
	res, err := h2cClient().Post(s.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatalf("h2c client: %v", err)
	}
	res.Body.Close()
	if res.ProtoMajor != 2 || s.Requests.Load() != 1 {
		t.Errorf("h2c client: %s after %d requests, want HTTP/2 and 1", res.Proto, s.Requests.Load())
	}
}

// h2cClient speaks cleartext HTTP/2 with prior knowledge only.
func h2cClient() *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &p}}
}
