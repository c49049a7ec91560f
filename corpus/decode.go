package corpus

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf8"
)

// decodeRecord decodes one line already known to be valid JSON into the
// values encoding/json with UseNumber gives (map[string]any, []any,
// json.Number, string, bool, nil), and names every key that an object
// gives twice, at any depth ("expected.amount").
//
// A record's text may be tens of megabytes on one line. The line is walked
// in place and each top-level value decoded from its own span, so the text
// is copied once, into its string, and never held by a decoder's buffer or
// re-encoded; the other values are small.
func decodeRecord(raw []byte) (v any, duplicates []string) {
	w := &jsonWalk{b: raw}
	i := w.space(0)
	if raw[i] != '{' {
		w.value(i, "") // an array may hold objects with duplicate keys
		return decodeSpan(raw), w.dups
	}
	obj := map[string]any{}
	w.members(i, "", func(key string, start, end int) {
		span := raw[start:end]
		if key == "text" && span[0] == '"' {
			var s string
			_ = json.Unmarshal(span, &s) // valid: checked
			obj[key] = s
			return
		}
		obj[key] = decodeSpan(span)
	})
	return obj, w.dups
}

// decodeSpan decodes one valid JSON value, numbers as json.Number.
func decodeSpan(span []byte) any {
	var x any
	dec := json.NewDecoder(bytes.NewReader(span))
	dec.UseNumber()
	_ = dec.Decode(&x) // valid: checked
	return x
}

// jsonWalk walks valid JSON without decoding it, noting duplicate keys.
type jsonWalk struct {
	b    []byte
	dups []string
}

func (w *jsonWalk) space(i int) int {
	for i < len(w.b) {
		switch w.b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value returns the end of the value starting at i.
func (w *jsonWalk) value(i int, path string) int {
	switch w.b[i] {
	case '{':
		return w.members(i, path, nil)
	case '[':
		i = w.space(i + 1)
		for n := 0; w.b[i] != ']'; n++ {
			i = w.space(w.value(i, path))
			if w.b[i] == ',' {
				i = w.space(i + 1)
			}
		}
		return i + 1
	case '"':
		return w.str(i)
	}
	for i < len(w.b) { // a number, true, false or null
		switch w.b[i] {
		case ',', ']', '}', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// members walks the object at i, calling fn (when not nil) with each key
// and the span of its value; it returns the object's end.
func (w *jsonWalk) members(i int, path string, fn func(key string, start, end int)) int {
	seen := map[string]bool{}
	i = w.space(i + 1)
	for w.b[i] != '}' {
		ks := i
		i = w.str(i)
		key := w.key(w.b[ks:i])
		field := key
		if path != "" {
			field = path + "." + key
		}
		if seen[key] {
			w.dups = append(w.dups, field)
		}
		seen[key] = true
		i = w.space(w.space(i) + 1) // the colon
		start := i
		i = w.value(i, field)
		if fn != nil {
			fn(key, start, i)
		}
		i = w.space(i)
		if w.b[i] == ',' {
			i = w.space(i + 1)
		}
	}
	return i + 1
}

// str returns the end of the string starting at i (after its quote).
func (w *jsonWalk) str(i int) int {
	for i++; ; {
		j := bytes.IndexAny(w.b[i:], `"\`)
		i += j
		if w.b[i] == '"' {
			return i + 1
		}
		i += 2 // an escape: its second byte cannot end the string
	}
}

// key unquotes a key as encoding/json would.
func (w *jsonWalk) key(quoted []byte) string {
	inner := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(quoted, &s)
	return s
}

// syntaxProblem says why a line is not one JSON value, as a decoder does.
func syntaxProblem(raw []byte) LineProblem {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var v any
	if err := dec.Decode(&v); err != nil {
		return LineProblem{"(line)", "not valid JSON: " + err.Error()}
	}
	if dec.More() {
		return LineProblem{"(line)", "more than one JSON value on the line"}
	}
	return LineProblem{"(line)", "not valid JSON: text after the JSON value"}
}

// documentOf is the document a decoded line describes, its fields of the
// wrong type left empty.
func documentOf(v any) *Document {
	str := func(x any) string { s, _ := x.(string); return s }
	ptr := func(x any) *string {
		if s, ok := x.(string); ok {
			return &s
		}
		return nil
	}
	d := &Document{ID: str(fieldOf(v, "id")), Text: str(fieldOf(v, "text")), LengthClass: LengthClass(str(fieldOf(v, "length_class"))), Lang: str(fieldOf(v, "lang"))}
	e := fieldOf(v, "expected")
	d.Expected = Expected{Date: ptr(fieldOf(e, "date")), Amount: ptr(fieldOf(e, "amount")), Category: ptr(fieldOf(e, "category"))}
	return d
}

// MaxAmountDigits bounds the digits before the point of an expected
// amount (leading zeros aside), as schemas/corpus-record.schema.json does:
// eval's scorer reads an answer of 10^41 or more as a wrong number
// whatever the expectation (eval.ParseAmount's Huge), so a larger
// expectation could never be met.
const MaxAmountDigits = 41

// decimalRe is the corpus-record schema's form of an amount: the other
// forms get the schema's message.
var decimalRe = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// integerDigits counts the digits before the point of a decimal string,
// leading zeros aside.
func integerDigits(s string) int {
	s = strings.TrimPrefix(s, "-")
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = s[:i]
	}
	return len(strings.TrimLeft(s, "0"))
}
