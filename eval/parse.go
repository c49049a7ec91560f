package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/extractbench/extractbench/jsonscan"
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
//
// Where each candidate closes is found for all of them in one pass over the
// text (indexBraces), so the search is linear in the text: trying candidates
// one by one, each scanning to its close, costs the square of the text when
// the braces never close (a run of "{" took seconds per document).
func findObject(text string) (map[string]any, error) {
	var (
		found    map[string]any
		count    int
		firstErr error
	)
	ix := indexBraces(text)
	for k := 0; k < len(ix.open); k++ {
		start, end := ix.open[k], ix.end[k]
		if end < 0 {
			continue // cut: the text ends first
		}
		obj, err := ix.decode(text, start, end)
		if err == nil {
			count++
			if count > 1 {
				return nil, errors.New("more than one JSON object in the output")
			}
			found = obj
			k = ix.after(end) - 1 // the candidates inside it are part of it
			continue
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if found != nil {
		return found, nil
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return nil, errNoObject
}

// EndsInsideObject reports whether the output opens a JSON object that the
// text never closes: the signature of output cut mid-JSON.
func EndsInsideObject(output string) bool {
	ix := indexBraces(output)
	for k := 0; k < len(ix.open); k++ {
		start, end := ix.open[k], ix.end[k]
		if end < 0 {
			return true
		}
		if _, err := ix.decode(output, start, end); err == nil {
			k = ix.after(end) - 1
		}
	}
	return false
}

// braceIndex says, for every '{' of a text, where the object it would open
// closes: the index just past the '}' that brings the brace count back to
// zero, braces inside JSON strings not counted, the string state followed
// from that '{' as if the text began there. It also keeps where the text's
// UTF-8 is broken, so that a candidate's validity is a look-up.
type braceIndex struct {
	open    []int // the positions of '{', ascending
	end     []int // end[k]: just past the '}' closing open[k]; -1 when the text ends first
	invalid []int // positions where invalid UTF-8 starts, ascending
}

// braceScanBytes counts the bytes brace matching has read, for the test that
// proves the search linear (an allocation or a duration would not say it).
var braceScanBytes atomic.Int64

// Scan states: outside a string, inside one, just after a backslash inside one.
const (
	scanOut = iota
	scanIn
	scanEscaped
)

// indexBraces matches every '{' of text in one pass.
//
// A scan from one '{' is in one of three states at each byte (outside a
// string, inside, just after a backslash), and two scans in the same state
// at the same byte go on alike. So the scans still open are kept in three
// threads, one per state; a thread is a stack of depths (top: depth 1),
// each depth holding the scans that close at the thread's next depth-1 '}'.
// Each byte moves the threads between states; where two threads land in one
// state they merge, the shorter stack into the longer depth by depth. A merge
// costs the shorter stack's height and removes that many depths, and each
// '{' adds one, so the whole pass is linear in the text.
func indexBraces(text string) braceIndex {
	braceScanBytes.Add(int64(len(text)))
	var ix braceIndex
	n := strings.Count(text, "{")
	if n == 0 {
		return ix
	}
	ix.open = make([]int, 0, n)
	ix.end = make([]int, n)
	// A depth is a list of scans, linked through next and named by the
	// scan that created it; last[d] is its last scan.
	next := make([]int, n)
	last := make([]int, n)
	var threads [3][]int // per state, the stack of depths, top last
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch c {
		case '{':
			k := len(ix.open)
			ix.open = append(ix.open, i)
			ix.end[k], next[k], last[k] = -1, -1, k
			threads[scanOut] = append(threads[scanOut], k)
		case '}':
			if out := threads[scanOut]; len(out) > 0 {
				for k := out[len(out)-1]; k >= 0; k = next[k] {
					ix.end[k] = i + 1
				}
				threads[scanOut] = out[:len(out)-1]
			}
		}
		if threads[scanIn] == nil && threads[scanEscaped] == nil && c != '"' {
			continue // only the outside thread, which stays outside
		}
		switch c {
		case '"':
			threads[scanOut], threads[scanIn], threads[scanEscaped] =
				threads[scanIn], mergeDepths(threads[scanOut], threads[scanEscaped], next, last), nil
		case '\\':
			threads[scanIn], threads[scanEscaped] = threads[scanEscaped], threads[scanIn]
		default:
			threads[scanIn], threads[scanEscaped] = mergeDepths(threads[scanIn], threads[scanEscaped], next, last), nil
		}
	}
	if !utf8.ValidString(text) {
		for i := 0; i < len(text); {
			r, size := utf8.DecodeRuneInString(text[i:])
			if r == utf8.RuneError && size == 1 {
				ix.invalid = append(ix.invalid, i)
			}
			i += size
		}
	}
	return ix
}

// mergeDepths merges two threads that have come to the same state: depth d
// of the result holds the scans at depth d of either. The shorter stack is
// merged into the longer, so the cost is the shorter's height.
func mergeDepths(a, b []int, next, last []int) []int {
	if len(a) < len(b) {
		a, b = b, a
	}
	for i := 1; i <= len(b); i++ {
		x, y := a[len(a)-i], b[len(b)-i]
		next[last[x]] = y
		last[x] = last[y]
	}
	if len(a) == 0 {
		return nil
	}
	return a
}

// after returns the first brace at or after position p.
func (ix braceIndex) after(p int) int {
	return sort.SearchInts(ix.open, p)
}

// decode is decodeObject of text[start:end], a candidate of the index, with
// the UTF-8 check looked up: start and end sit on ASCII bytes, where every
// decoding of the text agrees, so the candidate is valid UTF-8 exactly when
// no invalid sequence of the whole text starts inside it.
func (ix braceIndex) decode(text string, start, end int) (map[string]any, error) {
	if j := sort.SearchInts(ix.invalid, start); j < len(ix.invalid) && ix.invalid[j] < end {
		return nil, errInvalidUTF8
	}
	return decodeUTF8Object(text[start:end])
}

// errInvalidUTF8 refuses an output that is not UTF-8; encoding/json would
// silently replace the bad bytes.
var errInvalidUTF8 = errors.New("output is not valid UTF-8")

// decodeObject decodes text that must be exactly one JSON object.
func decodeObject(text string) (map[string]any, error) {
	if text == "" || text[0] != '{' {
		return nil, errNoObject
	}
	if !utf8.ValidString(text) {
		return nil, errInvalidUTF8
	}
	return decodeUTF8Object(text)
}

// decodeUTF8Object is decodeObject of text already known to start with '{'
// and to be valid UTF-8.
func decodeUTF8Object(text string) (map[string]any, error) {
	if obj, ok := scanObject(text); ok {
		return obj, nil
	}
	return decodeTokens(text)
}

// decodeTokens is decodeUTF8Object by json.Decoder's tokens: the one that
// words every refusal.
func decodeTokens(text string) (map[string]any, error) {
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

// scanObject is decodeUTF8Object without json.Decoder's tokens, whose
// reflection was half of scoring's CPU: the same map, built by jsonscan.
// It gives way (ok false) on anything jsonscan leaves to encoding/json (an
// escaped key, a surrogate escape) and on anything decodeValue refuses (a
// duplicate key, nesting past maxDepth, a syntax error, text after the
// object), so that decodeValue alone words every error. FuzzScanObject
// holds the two equal.
func scanObject(text string) (map[string]any, bool) {
	s := jsonscan.Scanner{B: []byte(text)}
	v, ok := scanValue(&s, 0)
	if !ok || !s.Done() {
		return nil, false
	}
	obj, ok := v.(map[string]any)
	return obj, ok
}

// scanValue reads one value at depth as decodeValue does: objects as
// map[string]any, arrays as []any (empty, not nil), numbers as json.Number
// of their text, strings, booleans and null as themselves.
func scanValue(s *jsonscan.Scanner, depth int) (any, bool) {
	if depth > maxDepth || s.I >= len(s.B) {
		return nil, false
	}
	switch c := s.B[s.I]; {
	case c == '{':
		obj := map[string]any{}
		ok := s.Object(func(key []byte) bool {
			k := string(key)
			if _, dup := obj[k]; dup {
				return false
			}
			v, ok := scanValue(s, depth+1)
			obj[k] = v
			return ok
		})
		return obj, ok
	case c == '[':
		arr := []any{}
		ok := s.Array(func() bool {
			v, ok := scanValue(s, depth+1)
			arr = append(arr, v)
			return ok
		})
		return arr, ok
	case c == '"':
		return s.Str()
	case c == '-' || '0' <= c && c <= '9':
		start := s.I
		if !s.Skip(depth) { // a number: Skip checks its grammar
			return nil, false
		}
		return json.Number(s.B[start:s.I]), true
	case c == 't':
		return true, s.Lit("true")
	case c == 'f':
		return false, s.Lit("false")
	case c == 'n':
		return nil, s.Lit("null")
	}
	return nil, false
}
