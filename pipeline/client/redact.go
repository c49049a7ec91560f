package client

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/extractbench/extractbench/redact"
)

// Redacted is what a Redactor puts in place of a secret.
const Redacted = redact.Redacted

// Redactor removes secrets from text that may be stored, printed or logged:
// an engine may echo a rejected API key in its error body, JSON-escaped
// (`\u0073\u006b…`, `\/`), URL-encoded (`%2F`, either case), or inside the
// streamed content (every form redact.Secrets knows), and Go's own errors
// name the URL a request went to, userinfo included. It is safe for
// concurrent use; build one per set of secrets.
type Redactor struct {
	secrets *redact.Secrets
}

// NewRedactor returns a Redactor of secrets; empty ones are ignored.
func NewRedactor(secrets ...string) *Redactor { return &Redactor{secrets: redact.New(secrets...)} }

// URLSecret is the password of rawURL's userinfo ("" for none): a secret
// to give NewRedactor beside the API key, since it may appear decoded or
// re-encoded away from the URL.
func URLSecret(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// Redact returns s with every secret, in every encoding it knows, and the
// userinfo of every URL (`http://user:pass@host` → `http://[redacted]@host`)
// replaced by Redacted. A nil Redactor still removes userinfo.
func (r *Redactor) Redact(s string) string {
	if r != nil {
		s = r.secrets.Redact(s)
	}
	if strings.Contains(s, "://") && strings.Contains(s, "@") {
		s = userinfo.ReplaceAllString(s, "${1}"+Redacted+"@")
	}
	return s
}

// Redact is NewRedactor(secrets...).Redact(s), for one text.
func Redact(s string, secrets ...string) string { return NewRedactor(secrets...).Redact(s) }

// userinfo is a URL's scheme and userinfo: what RFC 3986 allows before the
// '@' of an authority, so that the match never runs past the host.
var userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)[^\s/?#@"'<>\x60\[\]]+@`)
