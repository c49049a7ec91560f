package client

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

// testKey has characters JSON and URLs escape: '/', '<', '&' and '+'.
const testKey = "sk-live/0123<abc>&+XYZ"

// encodings are the forms an engine may echo a secret in.
func encodings(s string) map[string]string {
	m, _ := json.Marshal(s) // \u003c for <, \u0026 for &
	u := func(format string) string {
		var b strings.Builder
		for _, c := range s {
			fmt.Fprintf(&b, format, c)
		}
		return b.String()
	}
	return map[string]string{
		"literal":         s,
		"json.Marshal":    strings.Trim(string(m), `"`),
		"escaped slashes": strings.ReplaceAll(strings.Trim(string(m), `"`), "/", `\/`),
		`\u lower`:        u(`\u%04x`),
		`\u upper`:        u(`\u%04X`),
		"query escape":    url.QueryEscape(s),
		"path escape":     url.PathEscape(s),
		"percent lower":   pctLower.ReplaceAllStringFunc(url.QueryEscape(s), strings.ToLower),
		"mixed":           s[:3] + u(`\u%04x`)[6*3:6*6] + s[6:],
		"html":            u("&#%d;"),
	}
}

var pctLower = regexp.MustCompile(`%[0-9A-F]{2}`)

// leaks names the encodings of secret found in text.
func leaks(text, secret string) []string {
	var found []string
	for name, form := range encodings(secret) {
		if strings.Contains(text, form) {
			found = append(found, name)
		}
	}
	return found
}

func TestRedact_EveryEncoding(t *testing.T) {
	r := NewRedactor(testKey)
	for name, form := range encodings(testKey) {
		got := r.Redact(`{"error":"bad key ` + form + `!"}`)
		if l := leaks(got, testKey); len(l) > 0 || !strings.Contains(got, Redacted) {
			t.Errorf("%s: Redact(%q) = %q, leaks %v", name, form, got, l)
		}
	}
	for _, keep := range []string{"", "no secret here", `\u0041 and %41 alone`} {
		if got := r.Redact(keep); got != keep {
			t.Errorf("Redact(%q) = %q, want it unchanged", keep, got)
		}
	}
}

func TestRedact_URLUserinfo(t *testing.T) {
	for in, want := range map[string]string{
		`Post "http://alice:pw123@10.0.0.1:8000/v1/chat/completions": EOF`: `Post "http://[redacted]@10.0.0.1:8000/v1/chat/completions": EOF`,
		`GET https://bob@host/health; then http://carol:***@h2/x`:          `GET https://[redacted]@host/health; then http://[redacted]@h2/x`,
		`mail bob@example.com at http://host/path?a=b@c`:                   `mail bob@example.com at http://host/path?a=b@c`,
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestClient_KeyNeverLeaksInAnyEncoding is item 13 at the client: an
// engine that echoes the key JSON- or URL-escaped in its error body leaves
// no form of it in the Response's texts but the answer, which is judged as
// the engine gave it (issue 40 item 6); the store redacts it when written
// (TestRun_SecretsNeverWritten).
func TestClient_KeyNeverLeaksInAnyEncoding(t *testing.T) {
	for _, mode := range []hostile.Mode{hostile.TransportEchoKeyEscaped, hostile.TransportEchoKeyStream, hostile.SecretsEchoUpper} {
		t.Run(string(mode), func(t *testing.T) {
			s := hostile.MustNew(t, mode, hostile.Options{APIKey: testKey})
			r := New(Config{BaseURL: s.URL, APIKey: testKey}).Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
			if s.Requests.Load() != 1 {
				t.Fatalf("%d requests", s.Requests.Load())
			}
			if mode == hostile.TransportEchoKeyStream {
				if !strings.Contains(r.Output, testKey) {
					t.Errorf("Output %q: the streamed answer is not the engine's own (the key it echoed was rewritten before judging)", r.Output)
				}
			} else if !strings.Contains(r.ErrorBody, Redacted) {
				t.Fatalf("Kind %q, ErrorBody %q: want the echo, redacted", r.Kind, r.ErrorBody)
			}
			for field, v := range map[string]string{"ErrorBody": r.ErrorBody, "Detail": r.Detail, "FinishReason": r.FinishReason} {
				if l := leaks(v, testKey); len(l) > 0 || strings.Contains(strings.ToLower(v), strings.ToLower(testKey)) {
					t.Errorf("%s leaks the key (%v): %q", field, l, v)
				}
			}
		})
	}
}

// TestClient_URLUserinfoNeverInDetail: the credentials of an engine URL
// never reach a Detail or a metadata call's error.
func TestClient_URLUserinfoNeverInDetail(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := New(Config{BaseURL: "http://alice:pw-0123456789@" + addr})
	r := c.Chat(pipelinetest.Context(t), extractbench.NewClock(), 1, "", "doc", Generation{})
	if r.Kind != extractbench.TransportRefused {
		t.Fatalf("Kind %q (%s), want refused", r.Kind, r.Detail)
	}
	_, merr := c.Models(pipelinetest.Context(t))
	for what, v := range map[string]string{"Detail": r.Detail, "Models error": fmt.Sprint(merr)} {
		if strings.Contains(v, "alice") || strings.Contains(v, "pw-0123456789") || !strings.Contains(v, addr) {
			t.Errorf("%s = %q: want the address without its userinfo", what, v)
		}
	}
}
