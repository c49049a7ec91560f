package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxDepth bounds the nesting of a parsed answer. The extraction object has
// one level; anything deeper than this is not an answer worth walking, and a
// bound keeps hostile output from costing stack.
const maxDepth = 32

// jsonSpace is the whitespace JSON allows around a value (RFC 8259 section 2).
// Strict parsing trims only these: a no-break space or a BOM is not JSON.
const jsonSpace = " \t\r\n"

// errNoObject says that no JSON object was found where one was required.
var errNoObject = errors.New("no JSON object")

// ParseStrict applies the strict rule of MEASUREMENT.md section 7: the
// output, less surrounding JSON whitespace, must be exactly one JSON object.
// Numbers stay json.Number (never float64), so amounts keep every digit.
//
// An object with a duplicate key, at any depth, is refused: JSON leaves the
// meaning of duplicates undefined (RFC 8259 section 4) and decoders disagree
// on which value wins, so an answer that says "date" twice has not said one
// date. Invalid UTF-8 is refused too; encoding/json would silently replace it.
func ParseStrict(output string) (map[string]any, error) {
	return decodeObject(strings.Trim(output, jsonSpace))
}

// ParseLenient applies the lenient rule: the strict parse if it succeeds,
// else the one JSON object found in the text once surrounding text (a
// ```json fence, a sentence of preamble) is removed. Two complete objects in
// the text are ambiguous and refused. The category, when a string, is
// normalised: Unicode NFC, trimmed, lower-cased.
func ParseLenient(output string) (map[string]any, error) {
	obj, err := ParseStrict(output)
	if err != nil {
		obj, err = findObject(output)
	}
	if err != nil {
		return nil, err
	}
	if c, ok := obj["category"].(string); ok {
		obj["category"] = NormalizeCategory(c)
	}
	return obj, nil
}

// NormalizeCategory is the lenient rule's category normalisation: Unicode
// NFC, surrounding white space removed, lower case.
func NormalizeCategory(s string) string {
	return strings.ToLower(strings.TrimSpace(norm.NFC.String(s)))
}

// findObject returns the single JSON object embedded in text. Every '{' not
// inside an object already found starts a candidate; a candidate that is not
// a valid object is skipped, so prose such as "{see below}" does not hide the
// answer after it.
func findObject(text string) (map[string]any, error) {
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
		end, closed := matchBrace(text, start)
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

// matchBrace returns the index just past the '}' that closes the '{' at
// text[start], skipping braces inside JSON strings. closed is false when the
// text ends first: the object was cut.
func matchBrace(text string, start int) (end int, closed bool) {
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

// EndsInsideObject reports whether the output opens a JSON object that the
// text never closes: the signature of output cut mid-JSON.
func EndsInsideObject(output string) bool {
	for i := 0; i < len(output); {
		j := strings.IndexByte(output[i:], '{')
		if j < 0 {
			return false
		}
		start := i + j
		end, closed := matchBrace(output, start)
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

// decodeObject decodes text that must be exactly one JSON object.
func decodeObject(text string) (map[string]any, error) {
	if text == "" || text[0] != '{' {
		return nil, errNoObject
	}
	if !utf8.ValidString(text) {
		return nil, errors.New("output is not valid UTF-8")
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON object")
	}
	return v.(map[string]any), nil
}

// decodeValue reads one JSON value token by token, so that duplicate keys
// can be seen (json.Unmarshal keeps the last one without a word).
func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("JSON nested deeper than %d levels", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	switch tok {
	case json.Delim('{'):
		obj := map[string]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, fmt.Errorf("invalid JSON: %w", err)
			}
			key, ok := kt.(string)
			if !ok {
				return nil, errors.New("invalid JSON: object key is not a string")
			}
			if _, dup := obj[key]; dup {
				return nil, fmt.Errorf("duplicate key %q", key)
			}
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			obj[key] = v
		}
		if _, err := dec.Token(); err != nil { // the closing '}'
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		return obj, nil
	case json.Delim('['):
		arr := []any{}
		for dec.More() {
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := dec.Token(); err != nil { // the closing ']'
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		return arr, nil
	case json.Delim('}'), json.Delim(']'):
		return nil, errors.New("invalid JSON: unexpected closing delimiter")
	}
	return tok, nil
}
