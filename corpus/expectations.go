package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Expectations declares the fields a corpus's expected objects follow, for
// a protocol that declares its own (fields:) instead of the default date,
// amount and category. The corpus package cannot know the field types (they
// are the root package's): the caller passes their names and a check, as
// pipeline does with extractbench.Field.CheckExpectation.
//
// Every line's expected object must hold exactly the declared keys: an
// unknown key is refused, and so is an absent one (a reviewed "the document
// lacks it" is written null, so that a forgotten field is told from a
// missing value). Null is accepted unless Check refuses it (a required field).
type Expectations struct {
	Names []string                       // the field names, in the protocol's order
	Check func(name string, v any) error // why v (decoded JSON, numbers as json.Number) cannot be the field's expectation; nil accepts any value
}

// MaxFieldProblems caps how many expectation problems one load or check
// lists; the rest are counted in one last problem, so that a corpus written
// for other fields does not print thousands of lines.
const MaxFieldProblems = 100

// DeclaredHashRule says how the hashes of a corpus of declared fields are
// computed (Manifest.HashRule).
const DeclaredHashRule = "record_sha256 = sha256 of the compact JSON {\"id\",\"text\",\"expected\"} with expected's keys in field_names order " +
	"(no HTML escaping); sha256 = sha256 of \"field_names \" + the compact JSON array of field_names + \"\\n\" (left out when they are " +
	"date, amount, category), then every record_sha256 in file order, each followed by \"\\n\""

// isDefaultNames reports whether names are the default fields in their
// order: such a corpus hashes as the default rule says, so the default
// corpus loaded for a protocol that declares those three keeps its hash.
func isDefaultNames(names []string) bool {
	return slices.Equal(names, []string{"date", "amount", "category"})
}

// CanonicalObject returns the expected object obj (JSON) as a corpus keeps
// it: compact, keys in the order of names, no HTML escaping, numbers as
// written. Every name must be a key (null for a missing value) and every
// key a name.
func CanonicalObject(names []string, obj string) (string, error) {
	dec := json.NewDecoder(strings.NewReader(obj))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("expected object: %w", err)
	}
	if dec.More() {
		return "", fmt.Errorf("expected object: text after the JSON value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Errorf("expected object: want a JSON object keyed by the field names, got %s", kindOf(v))
	}
	for _, n := range names {
		if _, ok := m[n]; !ok {
			return "", fmt.Errorf("expected object: no key %q; write null when the document lacks it", n)
		}
	}
	for k := range m {
		if !slices.Contains(names, k) {
			return "", fmt.Errorf("expected object: %q is not a declared field (%s)", k, strings.Join(names, ", "))
		}
	}
	return encodeObject(names, m)
}

// ExpectedObject encodes values as a canonical expected object (see
// CanonicalObject): a name values lacks is written null; a key of values
// that is not a name is an error. It is how a generator or importer fills
// Expected.Object.
func ExpectedObject(names []string, values map[string]any) (string, error) {
	for k := range values {
		if !slices.Contains(names, k) {
			return "", fmt.Errorf("expected object: %q is not a declared field (%s)", k, strings.Join(names, ", "))
		}
	}
	return encodeObject(names, values)
}

func encodeObject(names []string, m map[string]any) (string, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshalNoEscape(n)
		if err != nil {
			return "", err
		}
		val, err := marshalNoEscape(m[n])
		if err != nil {
			return "", fmt.Errorf("expected object: %s: %w", n, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.String(), nil
}

// checkExpected checks one line's decoded expected object against exp and
// returns its canonical form ("" when it is not an object).
func checkExpected(v any, exp *Expectations) (string, []LineProblem) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", []LineProblem{{"expected", fmt.Sprintf("want an object keyed by the field names (%s), got %s", strings.Join(exp.Names, ", "), kindOf(v))}}
	}
	var probs []LineProblem
	var unknown []string
	for k := range m {
		if !slices.Contains(exp.Names, k) {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		probs = append(probs, LineProblem{"expected." + k, fmt.Sprintf("not a declared field; the fields are %s", strings.Join(exp.Names, ", "))})
	}
	for _, n := range exp.Names {
		val, ok := m[n]
		if !ok {
			probs = append(probs, LineProblem{"expected." + n, "missing key; write null when the document lacks it"})
			continue
		}
		if exp.Check == nil {
			continue
		}
		if err := exp.Check(n, val); err != nil {
			probs = append(probs, LineProblem{"expected." + n, err.Error()})
		}
	}
	obj, err := encodeObject(exp.Names, m)
	if err != nil {
		probs = append(probs, LineProblem{"expected", err.Error()})
	}
	return obj, probs
}

// nullFields names the fields whose value in a canonical object is null.
func nullFields(obj string) []string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(obj), &m) != nil {
		return nil
	}
	var out []string
	for k, v := range m {
		if string(v) == "null" {
			out = append(out, k)
		}
	}
	return out
}

// kindOf names the JSON kind of a decoded value, for messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
