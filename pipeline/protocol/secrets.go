package protocol

import (
	"fmt"
	"net/url"
	"os"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/redact"
)

// credentialsMarker is the user name a URL's credentials are replaced with
// in the protocol a manifest stores: the URL still says it had some, so
// that a resume from the manifest alone can refuse to go on without them.
const credentialsMarker = "redacted"

// Secrets are what the protocol's run must never write: each variant's API
// key (the value of its api_key_env) and the credentials of its URLs (the
// password, or the user name alone when there is no password, as a token
// written https://TOKEN@host is).
func (p *Protocol) Secrets() []string {
	var out []string
	for _, v := range p.Variants {
		e := v.Engine
		if e.APIKeyEnv != "" {
			out = append(out, os.Getenv(e.APIKeyEnv))
		}
		for _, raw := range append(e.Endpoints(), e.MetricsURL) {
			u, err := url.Parse(raw)
			if err != nil || u.User == nil {
				continue
			}
			if pw, ok := u.User.Password(); ok {
				out = append(out, pw, u.User.String())
			} else {
				out = append(out, u.User.Username())
			}
		}
	}
	return out
}

// PlainKeys names each API key that is sent but not redacted because
// ordinary text may contain it (redact.Plain): a dummy key such as
// "ollama" or "0", which a local server accepts whatever it is. Redacting
// it would rewrite the engine's answers before they are stored, a
// variant's name, a URL's host and the manifest's numbers.
func (p *Protocol) PlainKeys() []string {
	var out []string
	for _, v := range p.Variants {
		if env := v.Engine.APIKeyEnv; env != "" {
			if why := redact.Plain(os.Getenv(env)); why != "" && os.Getenv(env) != "" {
				out = append(out, fmt.Sprintf("%s: the API key in %s is sent but not redacted from what the run writes: %s, so ordinary text may contain it; "+
					"if it is a real secret, use a longer random key", v.Name, env, why))
			}
		}
	}
	return out
}

// withoutCredentials is the engine with the credentials of its URLs
// replaced by credentialsMarker.
func withoutCredentials(e extractbench.Engine) extractbench.Engine {
	strip := func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil || u.User == nil {
			return raw
		}
		u.User = url.User(credentialsMarker)
		return u.String()
	}
	e.URL, e.MetricsURL = strip(e.URL), strip(e.MetricsURL)
	if e.URLs != nil {
		urls := make([]string, len(e.URLs))
		for i, u := range e.URLs {
			urls[i] = strip(u)
		}
		e.URLs = urls
	}
	return e
}

// removedCredentials names each URL of a protocol read back from a manifest
// whose credentials the manifest did not keep: a run from it would send
// requests without them.
func (p *Protocol) RemovedCredentials() []string {
	var out []string
	for i, v := range p.Variants {
		for key, raw := range map[string]string{"url": v.Engine.URL, "metrics_url": v.Engine.MetricsURL} {
			if hasMarker(raw) {
				out = append(out, fmt.Sprintf("variants.%d.engine.%s", i, key))
			}
		}
		for j, raw := range v.Engine.URLs {
			if hasMarker(raw) {
				out = append(out, fmt.Sprintf("variants.%d.engine.urls.%d", i, j))
			}
		}
	}
	return out
}

func hasMarker(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return false
	}
	_, hasPassword := u.User.Password()
	return u.User.Username() == credentialsMarker && !hasPassword
}
