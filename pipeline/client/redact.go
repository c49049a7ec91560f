package client

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Redacted is what a Redactor puts in place of a secret.
const Redacted = "[redacted]"

// Redactor removes secrets from text that may be stored, printed or logged:
// an engine may echo a rejected API key in its error body, JSON-escaped
// (`\u0073\u006b…`, `\/`), URL-encoded (`%2F`, either case), or inside the
// streamed content, and Go's own errors name the URL a request went to,
// userinfo included. It is safe for concurrent use; build one per set of
// secrets (NewRedactor compiles a pattern per secret).
type Redactor struct {
	secrets []secretForm
}

// secretForm is one secret: its literal text and the pattern that matches
// it in any of the encodings above, each character on its own (an engine
// may escape some characters and not others).
type secretForm struct {
	lit string
	re  *regexp.Regexp
}

// NewRedactor returns a Redactor of secrets; empty ones are ignored.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if s == "" || slices.ContainsFunc(r.secrets, func(f secretForm) bool { return f.lit == s }) {
			continue
		}
		r.secrets = append(r.secrets, secretForm{lit: s, re: regexp.MustCompile(encodedPattern(s))})
	}
	return r
}

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
		for _, sec := range r.secrets {
			s = strings.ReplaceAll(s, sec.lit, Redacted)
			if strings.ContainsAny(s, `\%+&`) { // an encoded form needs one of these
				s = sec.re.ReplaceAllLiteralString(s, Redacted)
			}
		}
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

// encodedPattern matches s with each character written literally or as
// JSON writes it (`\u00XX` in either case, a surrogate pair beyond the BMP,
// `\"`, `\\`, `\/`), URL-encoded (`%XX` of each UTF-8 byte, either case;
// `+` for a space) or as an HTML character reference.
func encodedPattern(s string) string {
	var b strings.Builder
	for _, c := range s {
		alts := []string{regexp.QuoteMeta(string(c))}
		if c <= 0xFFFF {
			alts = append(alts, fmt.Sprintf(`\\u(?i:%04x)`, c))
		} else if hi, lo := surrogates(c); hi != 0 {
			alts = append(alts, fmt.Sprintf(`\\u(?i:%04x)\\u(?i:%04x)`, hi, lo))
		}
		var pct strings.Builder
		buf := make([]byte, utf8.UTFMax)
		for _, x := range buf[:utf8.EncodeRune(buf, c)] {
			fmt.Fprintf(&pct, `%%(?i:%02x)`, x)
		}
		alts = append(alts, pct.String(), fmt.Sprintf(`&#0*%d;`, c), fmt.Sprintf(`&#(?i:x)0*(?i:%x);`, c))
		switch c {
		case '"', '\\', '/':
			alts = append(alts, regexp.QuoteMeta(`\`+string(c)))
		case ' ':
			alts = append(alts, `\+`)
		}
		b.WriteString("(?:" + strings.Join(alts, "|") + ")")
	}
	return b.String()
}

// surrogates is the UTF-16 surrogate pair of a rune beyond the BMP.
func surrogates(c rune) (hi, lo rune) {
	if c < 0x10000 || c > utf8.MaxRune {
		return 0, 0
	}
	c -= 0x10000
	return 0xD800 + (c>>10)&0x3FF, 0xDC00 + c&0x3FF
}
