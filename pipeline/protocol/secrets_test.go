package protocol

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCanonical_KeepsNoCredentials: the protocol a manifest stores has
// no URL credentials, says that it had some (so that a resume from it
// alone is refused, naming the field), and is unchanged for a protocol
// without any (fingerprints stay).
func TestCanonical_KeepsNoCredentials(t *testing.T) {
	src := `name: c
corpus: default
prompt: {user: "x {{document}}"}
generation: {max_tokens: 8}
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1]}
variants:
  - name: a
    engine: {url: "http://ebuser:pw-0123456789@127.0.0.1:9/", model: m, metrics_url: "http://tok-abcdef@127.0.0.1:9/metrics"}
  - name: b
    engine: {urls: ["http://127.0.0.1:8", "http://u:pw-9876543210@127.0.0.1:7"], model: m}
`
	p, err := Parse([]byte(src), "p.yaml", ".")
	if err != nil {
		t.Fatal(err)
	}
	canon := string(p.Canonical())
	for _, secret := range []string{"pw-0123456789", "pw-9876543210", "tok-abcdef", "ebuser"} {
		if strings.Contains(canon, secret) {
			t.Errorf("Canonical holds %q:\n%s", secret, canon)
		}
	}
	if got, want := len(p.Secrets()), 5; got != want { // two passwords with their userinfo, one token
		t.Errorf("Secrets = %q, want %d", p.Secrets(), want)
	}
	back, err := Parse([]byte(canon), "manifest", ".")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(back.RemovedCredentials(), ", ")
	for _, field := range []string{"variants.0.engine.url", "variants.0.engine.metrics_url", "variants.1.engine.urls.1"} {
		if !strings.Contains(got, field) {
			t.Errorf("removedCredentials = %s, want %s among them", got, field)
		}
	}
	if strings.Contains(got, "urls.0") {
		t.Errorf("removedCredentials = %s names a URL that had none", got)
	}
	plain, err := Parse(DefaultYAML, "default", ".")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(plain); string(plain.Canonical()) != string(b) {
		t.Errorf("Canonical of a protocol without credentials changed:\n%s\n%s", plain.Canonical(), b)
	}
}
