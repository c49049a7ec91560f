package eval

import (
	"fmt"
	"strconv"
	"strings"
)

// Lookup reads the value at an RFC 6901 JSON pointer in a decoded JSON
// value (maps and slices as encoding/json decodes them). present is false
// when a key or index on the way is absent, or the path goes through a
// value that is neither an object nor an array: the answer has no value
// there. The pointer "" is the whole document. err says why the pointer
// itself is malformed.
func Lookup(doc any, pointer string) (v any, present bool, err error) {
	tokens, err := PointerTokens(pointer)
	if err != nil {
		return nil, false, err
	}
	v = doc
	for _, tok := range tokens {
		switch node := v.(type) {
		case map[string]any:
			next, ok := node[tok]
			if !ok {
				return nil, false, nil
			}
			v = next
		case []any:
			i, ok := arrayIndex(tok)
			if !ok || i >= len(node) {
				return nil, false, nil
			}
			v = node[i]
		default:
			return nil, false, nil
		}
	}
	return v, true, nil
}

// PointerTokens splits an RFC 6901 pointer into its reference tokens,
// unescaped ("~1" is "/", "~0" is "~"): "/supplier/tax_id" is supplier,
// tax_id; "/a~1b" is the one key "a/b".
func PointerTokens(pointer string) ([]string, error) {
	if pointer == "" {
		return nil, nil
	}
	if pointer[0] != '/' {
		return nil, fmt.Errorf("pointer %q does not start with /", pointer)
	}
	parts := strings.Split(pointer[1:], "/")
	for i, raw := range parts {
		tok, err := unescapeToken(raw)
		if err != nil {
			return nil, fmt.Errorf("pointer %q: %w", pointer, err)
		}
		parts[i] = tok
	}
	return parts, nil
}

// unescapeToken undoes RFC 6901's escapes; any other "~" is an error.
func unescapeToken(s string) (string, error) {
	if !strings.Contains(s, "~") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '~' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) || (s[i+1] != '0' && s[i+1] != '1') {
			return "", fmt.Errorf("%q: ~ must be followed by 0 or 1", s)
		}
		if s[i+1] == '0' {
			b.WriteByte('~')
		} else {
			b.WriteByte('/')
		}
		i++
	}
	return b.String(), nil
}

// arrayIndex reads an array index token: "0" or digits without a leading
// zero (RFC 6901 section 4). "-" (past the end) and anything else name no
// element.
func arrayIndex(tok string) (int, bool) {
	if tok == "" || len(tok) > 9 || (len(tok) > 1 && tok[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(tok)
	return n, err == nil
}
