package eval

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// The reference lenient search: the candidate-by-candidate scan that
// findObject replaced, kept as written. It is quadratic in a text of
// unclosed braces, and obviously what the lenient rule says; the linear
// search must agree with it on every input.

func refFindObject(text string) (map[string]any, error) {
	var (
		found    map[string]any
		count    int
		firstErr error
	)
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '{')
		if j < 0 {
			break
		}
		start := i + j
		end, closed := refMatchBrace(text, start)
		if closed {
			obj, err := decodeObject(text[start:end])
			if err == nil {
				count++
				if count > 1 {
					return nil, errors.New("more than one JSON object in the output")
				}
				found = obj
				i = end
				continue
			}
			if firstErr == nil {
				firstErr = err
			}
		}
		i = start + 1
	}
	if found != nil {
		return found, nil
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return nil, errNoObject
}

func refMatchBrace(text string, start int) (end int, closed bool) {
	depth := 0
	inString, escaped := false, false
	for i := start; i < len(text); i++ {
		c := text[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
	}
	return len(text), false
}

func refEndsInsideObject(output string) bool {
	for i := 0; i < len(output); {
		j := strings.IndexByte(output[i:], '{')
		if j < 0 {
			return false
		}
		start := i + j
		end, closed := refMatchBrace(output, start)
		if !closed {
			return true
		}
		if _, err := decodeObject(output[start:end]); err == nil {
			i = end
		} else {
			i = start + 1
		}
	}
	return false
}

// agreeWithReference fails t unless the linear search and the reference
// say the same of text: the same object or the same error, and the same
// EndsInsideObject.
func agreeWithReference(t *testing.T, text string) {
	t.Helper()
	got, gerr := findObject(text)
	want, werr := refFindObject(text)
	if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() || !reflect.DeepEqual(got, want) {
		t.Fatalf("findObject(%q) = %v, %v; the reference says %v, %v", text, got, gerr, want, werr)
	}
	if g, w := EndsInsideObject(text), refEndsInsideObject(text); g != w {
		t.Fatalf("EndsInsideObject(%q) = %v; the reference says %v", text, g, w)
	}
}

func TestFindObject_AgreesWithReference(t *testing.T) {
	for _, s := range []string{
		``, `{`, `}`, `{}`, `{}{}`, `{{}}`, `{{{`, `}}}{`, `{"a":1}`, `{"a":"}"`, `{"a":"}"}`,
		`x {"a":"{"} y {"b":1}`, `{"a":"\"}"}`, `{"a":"\\"}"}`, `"{"}`, `"{\"}"}`, `\"{"}"}`,
		`{"a":"x\"{\"b\":1}"}`, `{"k":"v"} {"k":"w"}`, `{not json} then {"k":"v"}`,
		"{\"a\":\"\xff\"} {\"b\":1}", "\xff{\"b\":1}", "{\"b\":\"\xe2\x82\"}", "\xe2\x82{\"b\":1}",
		`{"a":{"b":{"c":1}}`, `{"a":{"b":1}}}`, `{"a":1,"a":2} {"b":{}}`,
		strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40),
		strings.Repeat(`{"a":"`, 20) + strings.Repeat(`"}`, 20),
		strings.Repeat(`\"{`, 30) + `"}`,
	} {
		agreeWithReference(t, s)
	}
	// Every short text over the bytes that matter to the search, and a few
	// thousand longer ones: the threads merge and swap on '"' and '\'.
	const alphabet = "{}\"\\:a1, "
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		agreeWithReference(t, prefix)
		if n == 0 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			gen(prefix+alphabet[i:i+1], n-1)
		}
	}
	gen("", 6)
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, 8+r.IntN(40))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		agreeWithReference(t, string(b))
	}
}

// TestParseLenient_Linear proves the search linear by what it reads: the
// bytes brace matching scans, summed over the search, stay a small multiple
// of the text. Candidate by candidate, 20,000 unclosed braces cost 2×10^8.
func TestParseLenient_Linear(t *testing.T) {
	for _, text := range []string{
		strings.Repeat("{", 20000),
		strings.Repeat(`{"a":"`, 4000),
		strings.Repeat(`x {"date": "2025-`, 2000) + `{"date":null}`,
	} {
		before := braceScanBytes.Load()
		ParseLenient(text)
		EndsInsideObject(text)
		if got, bound := braceScanBytes.Load()-before, int64(4*len(text)); got > bound {
			t.Errorf("parsing %d bytes (%.20q…) scanned %d bytes, want at most %d", len(text), text, got, bound)
		}
	}
}
