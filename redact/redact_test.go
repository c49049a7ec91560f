package redact

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
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

func TestRedact(t *testing.T) {
	s := New(secretKey, "", "p@ss word:1")
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
	astral := New("key-\U0001F511-x2")
	if got := astral.Redact(`"key-\ud83d\udd11-x2"`); got != `"`+Redacted+`"` {
		t.Errorf("a surrogate pair escape: %q", got)
	}
	var none *Secrets
	if got := none.Redact(secretKey); got != secretKey {
		t.Errorf("nil Secrets changed the text: %q", got)
	}
}

// TestWriter: a secret split across writes, at every split
// point and byte by byte, is redacted as if written at once.
func TestWriter(t *testing.T) {
	s := New(secretKey)
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

// FuzzWriter: whatever the text and wherever the writes split it,
// the writer writes what Redact gives for the whole, and no plain key.
func FuzzWriter(f *testing.F) {
	f.Add("x "+secretKey+" y", 3, 20)
	f.Add(`\u0073k-test`+secretKey[7:], 1, 2)
	f.Add(base64.StdEncoding.EncodeToString([]byte("Bearer "+secretKey)), 5, 40)
	s := New(secretKey)
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

// TestRedact_EveryForm: the forms the engine client looked for (JSON
// escapes of single characters, percent-encoding in either case, HTML
// character references, + for a space) and those the store looked for
// (base64 at any alignment, escapes escaped again) are found by the one
// matcher, mixed within one secret.
func TestRedact_EveryForm(t *testing.T) {
	const key = "sk-live/0123<abc>&+XYZ q"
	encode := func(s, format string) string {
		var b strings.Builder
		for _, c := range s {
			fmt.Fprintf(&b, format, c)
		}
		return b.String()
	}
	each := func(format string) string { return encode(key, format) }
	pctLower := regexp.MustCompile(`%[0-9A-F]{2}`)
	s := New(key)
	for name, form := range map[string]string{
		"literal":          key,
		"json lower":       each(`\u%04x`),
		"json upper":       each(`\u%04X`),
		"json twice":       strings.ReplaceAll(each(`\u%04x`), `\`, `\\`),
		"query escape":     url.QueryEscape(key),
		"path escape":      url.PathEscape(key),
		"percent lower":    pctLower.ReplaceAllStringFunc(url.QueryEscape(key), strings.ToLower),
		"html decimal":     each("&#%d;"),
		"html hex":         each("&#x%X;"),
		"html zeros":       each("&#X00%x;"),
		"mixed":            key[:3] + encode(key[3:6], `\u%04x`) + url.QueryEscape(key[6:9]) + encode(key[9:10], "&#%d;") + key[10:],
		"base64":           base64.StdEncoding.EncodeToString([]byte(key)),
		"base64 of Bearer": base64.URLEncoding.EncodeToString([]byte("Bearer " + key)),
	} {
		got := s.Redact("bad key " + form + "!")
		if strings.Contains(got, form) || !strings.Contains(got, Redacted) {
			t.Errorf("%s: Redact(%q) = %q", name, form, got)
		}
	}
	for _, keep := range []string{`\u0041 and %41 alone`, "a & b + c % d", "&#", "&#;", "&#x;", "&#999999999999;", "100%"} {
		if got := s.Redact(keep); got != keep {
			t.Errorf("Redact(%q) = %q, want it unchanged", keep, got)
		}
	}
}

// TestRedact_AnyCase: an engine that upper-cases (or otherwise re-cases)
// the key it echoes does not get it past the store.
func TestRedact_AnyCase(t *testing.T) {
	s := New(secretKey)
	for _, text := range []string{
		"INVALID KEY " + strings.ToUpper(secretKey),
		"key " + strings.ToUpper(secretKey[:6]) + secretKey[6:],
		`"` + escapeAll(strings.ToUpper(secretKey), "%04x") + `"`,
		"?k=" + url.QueryEscape(strings.ToUpper(secretKey)),
	} {
		got := s.Redact(text)
		if !strings.Contains(got, Redacted) || strings.Contains(strings.ToLower(got), "4f9a1c2e") {
			t.Errorf("Redact(%q) = %q: the key in another case is kept", text, got)
		}
	}
	b64 := base64.StdEncoding.EncodeToString([]byte(secretKey))
	if got := s.Redact(strings.ToLower(b64)); got != strings.ToLower(b64) {
		t.Errorf("a base64 form matched in another case: %q", got)
	}
}

// TestPlain: the dummy keys local servers document are not secrets (they
// would rewrite answers, names and numbers); keys long or mixed enough are.
func TestPlain(t *testing.T) {
	for _, v := range []string{"", "0", "1", "null", "2024", "ollama", "EMPTY", "utilities", "localhost", "123456789012345"} {
		if Plain(v) == "" {
			t.Errorf("Plain(%q) = \"\", want a reason: ordinary text may contain it", v)
		}
		text := `{"category":"utilities","amount":2024.0,"host":"localhost","n":0,"m":1,"v":"ollama null EMPTY"} ` + v
		if got := New(v).Redact(text); got != text {
			t.Errorf("New(%q).Redact changed ordinary text: %q", v, got)
		}
	}
	for _, v := range []string{secretKey, "p@ss word:1", "token-abc123", "abcdefghijklmnopq", "sk-no-key-required"} {
		if why := Plain(v); why != "" {
			t.Errorf("Plain(%q) = %q, want it treated as a secret", v, why)
		}
	}
}
