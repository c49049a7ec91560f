package results

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

const secretKey = "sk-test-4f9a1c2e8b7d6e5f/0a1b+2c3d"

// escapeAll JSON-escapes every character of s as \uXXXX, with hex digits
// in the given case.
func escapeAll(s, hexFormat string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u`+hexFormat, r)
	}
	return b.String()
}

func TestSecrets_Redact(t *testing.T) {
	s := NewSecrets(secretKey, "", "p@ss word:1")
	b64 := func(e *base64.Encoding, prefix string) string { return e.EncodeToString([]byte(prefix + secretKey)) }
	for _, tt := range []struct{ name, text, leak string }{
		{"plain", "invalid key " + secretKey + "!", secretKey},
		{"escaped lower", `{"message":"bad ` + escapeAll(secretKey, "%04x") + `"}`, escapeAll(secretKey, "%04x")},
		{"escaped upper", `"` + escapeAll(secretKey, "%04X") + `"`, escapeAll(secretKey, "%04X")},
		{"escaped in part", `key sk-te\u0073t-4f9a1c2e8b7d6e5f\/0a1b\u002b2c3d`, `sk-te\u0073t`},
		{"escaped twice", `{"e":"{\"k\":\"` + strings.ReplaceAll(escapeAll(secretKey, "%04x"), `\`, `\\`) + `\"}"}`, `\\u0073\\u006b`},
		{"base64", "Authorization: " + b64(base64.StdEncoding, ""), b64(base64.StdEncoding, "")},
		{"base64 of Bearer key", b64(base64.StdEncoding, "Bearer "), b64(base64.StdEncoding, "Bearer ")[12:]},
		{"base64 after two bytes", b64(base64.URLEncoding, "u:"), b64(base64.URLEncoding, "u:")[6:]},
		{"percent-encoded", "?key=" + url.QueryEscape(secretKey), url.QueryEscape(secretKey)},
		{"second secret", "pw p@ss word:1.", "p@ss word:1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Redact(tt.text)
			if strings.Contains(got, tt.leak) || !strings.Contains(got, Redacted) {
				t.Errorf("Redact(%q) = %q: still holds %q", tt.text, got, tt.leak)
			}
		})
	}
	for _, text := range []string{"", "nothing secret here", `{"a":"\u0041\n"}`, secretKey[:10] + " is only the start", `\`, `\u00`} {
		if got := s.Redact(text); got != text {
			t.Errorf("Redact(%q) = %q, want it unchanged", text, got)
		}
	}
	if got, want := s.Redact("a "+secretKey+secretKey+" b"), "a "+Redacted+Redacted+" b"; got != want {
		t.Errorf("Redact of two keys = %q, want %q", got, want)
	}
	astral := NewSecrets("key-\U0001F511-x")
	if got := astral.Redact(`"key-\ud83d\udd11-x"`); got != `"`+Redacted+`"` {
		t.Errorf("a surrogate pair escape: %q", got)
	}
	var none *Secrets
	if got := none.Redact(secretKey); got != secretKey {
		t.Errorf("nil Secrets changed the text: %q", got)
	}
}

// TestRedactingWriter: a secret split across writes, at every split
// point and byte by byte, is redacted as if written at once.
func TestRedactingWriter(t *testing.T) {
	s := NewSecrets(secretKey)
	for _, form := range []string{secretKey, escapeAll(secretKey, "%04x"), base64.StdEncoding.EncodeToString([]byte(secretKey))} {
		text := "args: {'api_key': '" + form + "'} then " + form[:5] + " and more\n"
		want := s.Redact(text)
		if strings.Contains(want, form) {
			t.Fatalf("Redact left %q", form)
		}
		for cut := 0; cut <= len(text); cut++ {
			var b strings.Builder
			w := s.Writer(&b)
			for _, part := range []string{text[:cut], text[cut:]} {
				if n, err := w.Write([]byte(part)); err != nil || n != len(part) {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if b.String() != want {
				t.Fatalf("split at %d: wrote %q, want %q", cut, b.String(), want)
			}
		}
		var b strings.Builder
		w := s.Writer(&b)
		for i := range len(text) {
			w.Write([]byte{text[i]})
			if len(b.String()) > 0 && strings.Contains(b.String(), form[:len(form)-1]) {
				t.Fatalf("byte by byte: %q written before the key's end", b.String())
			}
		}
		w.Close()
		if b.String() != want {
			t.Errorf("byte by byte: wrote %q, want %q", b.String(), want)
		}
	}
}

// TestStore_SetSecrets: whatever the client let through, the store writes
// no secret: not in a request's texts, an event, a decision or a manifest.
func TestStore_SetSecrets(t *testing.T) {
	ctx := context.Background()
	st, _ := MustOpen(t)
	st.SetSecrets(NewSecrets(secretKey))
	escaped := escapeAll(secretKey, "%04x")
	manifest, _ := json.Marshal(map[string]string{"about": secretKey, "other": "kept"})
	if err := st.CreateRun(ctx, Run{RunID: testKey.RunID, Fingerprint: "f", ProtocolName: "p", Status: "running", Manifest: manifest}); err != nil {
		t.Fatal(err)
	}
	rec := testRecord(testKey, 0)
	rec.Output = `{"date":null,"amount":null,"category":"` + secretKey + `"}`
	rec.ErrorBody = `{"error":{"message":"bad key ` + escaped + `"}}`
	rec.Detail, rec.FailureDetail = "HTTP 401: "+secretKey, "echo "+secretKey
	cat := secretKey
	rec.Prediction.Category = &cat
	st.Add(rec)
	if err := st.AddEvent(ctx, Event{RunID: testKey.RunID, Kind: "engine_exit", Detail: "log tail: " + secretKey}); err != nil {
		t.Fatal(err)
	}
	if err := st.AddDecision(ctx, Decision{RunID: testKey.RunID, Variant: "ref", Kind: "stop", Reason: "because " + secretKey}); err != nil {
		t.Fatal(err)
	}
	if err := st.UpdateManifest(ctx, testKey.RunID, json.RawMessage(`{"url":"`+escaped+`"}`)); err != nil {
		t.Fatal(err)
	}
	recs, err := st.PassRecords(ctx, testKey)
	if err != nil || len(recs) != 1 {
		t.Fatalf("PassRecords = %d, %v", len(recs), err)
	}
	r := recs[0]
	events, _ := st.Events(ctx, testKey.RunID)
	decisions, _ := st.Decisions(ctx, testKey.RunID)
	runs, _ := st.Runs(ctx)
	if len(events) != 1 || len(decisions) != 1 || len(runs) != 1 {
		t.Fatalf("%d events, %d decisions, %d runs; want one of each", len(events), len(decisions), len(runs))
	}
	for name, got := range map[string]string{"output": r.Output, "error_body": r.ErrorBody, "transport_detail": r.Detail,
		"failure_detail": r.FailureDetail, "pred_category": *r.Prediction.Category,
		"event detail": events[0].Detail, "decision reason": decisions[0].Reason, "manifest": string(runs[0].Manifest)} {
		if strings.Contains(got, secretKey) || strings.Contains(got, escaped) || !strings.Contains(got, Redacted) {
			t.Errorf("%s = %q, want the key redacted", name, got)
		}
	}
}

// FuzzRedactingWriter: whatever the text and wherever the writes split it,
// the writer writes what Redact gives for the whole, and no plain key.
func FuzzRedactingWriter(f *testing.F) {
	f.Add("x "+secretKey+" y", 3, 20)
	f.Add(`\u0073k-test`+secretKey[7:], 1, 2)
	f.Add(base64.StdEncoding.EncodeToString([]byte("Bearer "+secretKey)), 5, 40)
	s := NewSecrets(secretKey)
	f.Fuzz(func(t *testing.T, text string, a, b int) {
		if len(text) > 4096 {
			return
		}
		cuts := []int{0, min(max(a, 0), len(text)), len(text)}
		cuts[1] = min(cuts[1], len(text))
		c2 := min(max(b, cuts[1]), len(text))
		var out strings.Builder
		w := s.Writer(&out)
		for _, part := range []string{text[:cuts[1]], text[cuts[1]:c2], text[c2:]} {
			w.Write([]byte(part))
		}
		w.Close()
		want := s.Redact(text)
		if out.String() != want {
			t.Fatalf("writer wrote %q, Redact gives %q", out.String(), want)
		}
		if strings.Contains(want, secretKey) {
			t.Fatalf("Redact(%q) = %q holds the key", text, want)
		}
	})
}
