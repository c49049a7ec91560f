package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/xeipuuv/gojsonschema"
)

// FieldSchema is the output JSON Schema of a protocol's declared fields:
// what guided decoding constrains the answer to and what Evaluate
// validates it against. Properties are in the protocol's order (guided
// decoding writes the keys in that order). Every field's key is required
// (null is written, as the default schema asks), nullable unless the
// field is required; a pointer such as /supplier/tax_id makes nested
// objects; no other key is allowed. A date's formats become a pattern,
// an enum's values its enum, a list an array of its items' schema; a
// description is passed through.
func FieldSchema(fields []extractbench.Field) ([]byte, error) {
	root := &objectSchema{root: true}
	for _, f := range fields {
		tokens, err := PointerTokens(f.PointerOf())
		if err != nil || len(tokens) == 0 {
			return nil, fmt.Errorf("field %s: pointer %q names no key", f.Name, f.PointerOf())
		}
		node := root
		for _, tok := range tokens[:len(tokens)-1] {
			next, taken := node.get(tok)
			if !taken {
				next = &objectSchema{}
				node.add(tok, next)
			}
			obj, ok := next.(*objectSchema)
			if !ok {
				return nil, fmt.Errorf("field %s: pointer %s goes through another field's value", f.Name, f.PointerOf())
			}
			node = obj
		}
		leaf := tokens[len(tokens)-1]
		if _, taken := node.get(leaf); taken {
			return nil, fmt.Errorf("field %s: pointer %s is another field's too", f.Name, f.PointerOf())
		}
		node.add(leaf, valueSchema(f, !f.Required))
	}
	return json.MarshalIndent(root, "", "  ")
}

// CompileFieldSchema is FieldSchema compiled, with its text.
func CompileFieldSchema(fields []extractbench.Field) (*gojsonschema.Schema, []byte, error) {
	raw, err := FieldSchema(fields)
	if err != nil {
		return nil, nil, err
	}
	s, err := gojsonschema.NewSchema(gojsonschema.NewBytesLoader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("compile the schema generated from the fields: %w", err)
	}
	return s, raw, nil
}

// objectSchema is a generated object's schema: its properties in the
// order they were added, each required, no other key allowed.
type objectSchema struct {
	root  bool // the answer itself: it names its draft and title
	names []string
	nodes []any // *objectSchema or a value's map
}

func (o *objectSchema) get(name string) (any, bool) {
	if i := slices.Index(o.names, name); i >= 0 {
		return o.nodes[i], true
	}
	return nil, false
}

func (o *objectSchema) add(name string, node any) {
	o.names, o.nodes = append(o.names, name), append(o.nodes, node)
}

// MarshalJSON writes the object's schema with its properties in order.
func (o *objectSchema) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	if o.root {
		b.WriteString(`"$schema":"http://json-schema.org/draft-07/schema#","title":"Extraction",`)
	}
	b.WriteString(`"type":"object","additionalProperties":false,"properties":{`)
	for i, name := range o.names {
		k, err := json.Marshal(name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(o.nodes[i])
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteString(`},"required":`)
	req, err := json.Marshal(append([]string{}, o.names...))
	if err != nil {
		return nil, err
	}
	b.Write(req)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// valueSchema is the schema of one field's value (or of a list's item).
func valueSchema(f extractbench.Field, nullable bool) map[string]any {
	s := map[string]any{}
	var types []string
	switch f.Type {
	case extractbench.FieldString:
		types = []string{"string"}
	case extractbench.FieldEnum:
		types = []string{"string"}
		values := make([]any, 0, len(f.Values)+1)
		for _, v := range f.Values {
			values = append(values, v)
		}
		if nullable {
			values = append(values, nil)
		}
		s["enum"] = values
	case extractbench.FieldDate:
		types = []string{"string"}
		formats := f.Formats
		if len(formats) == 0 {
			formats = []string{DefaultDateFormat}
		}
		s["pattern"] = dateLayoutPattern(formats)
	case extractbench.FieldDecimal:
		types = []string{"number", "string"} // a JSON number, or a string in the field's locale
	case extractbench.FieldInteger:
		types = []string{"integer"}
	case extractbench.FieldBoolean:
		types = []string{"boolean"}
	case extractbench.FieldList:
		types = []string{"array"}
		if f.Items != nil {
			s["items"] = valueSchema(*f.Items, false)
		}
	}
	if nullable {
		types = append(types, "null")
	}
	if len(types) == 1 {
		s["type"] = types[0]
	} else {
		s["type"] = types
	}
	if f.Description != "" {
		s["description"] = f.Description
	}
	return s
}

// dateLayoutPattern is the regular expression of the strings written in
// one of layouts.
func dateLayoutPattern(layouts []string) string {
	alts := make([]string, len(layouts))
	for i, layout := range layouts {
		var b strings.Builder
		for _, tok := range dateLayoutTokens(layout) {
			switch tok {
			case "YYYY":
				b.WriteString("[0-9]{4}")
			case "MM", "DD":
				b.WriteString("[0-9]{2}")
			default:
				b.WriteString(regexp.QuoteMeta(tok))
			}
		}
		alts[i] = b.String()
	}
	return "^(" + strings.Join(alts, "|") + ")$"
}

// CheckFieldSchema says where a protocol's own output schema (raw JSON)
// disagrees with its declared fields: a field whose pointer the schema
// does not describe (through properties of objects), or whose type there
// is not one the field's answers take (a date must be a string, a list an
// array, ...), or an enum whose schema enum lacks one of its values. A
// schema part it cannot follow ($ref, anyOf) is taken on trust.
func CheckFieldSchema(fields []extractbench.Field, raw []byte) []string {
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return []string{fmt.Sprintf("not a JSON object: %v", err)}
	}
	var problems []string
	for _, f := range fields {
		if p := checkFieldAgainst(f, root); p != "" {
			problems = append(problems, fmt.Sprintf("field %s (%s): %s", f.Name, f.PointerOf(), p))
		}
	}
	return problems
}

func checkFieldAgainst(f extractbench.Field, root map[string]any) string {
	tokens, err := PointerTokens(f.PointerOf())
	if err != nil {
		return err.Error()
	}
	node := root
	for i, tok := range tokens {
		if opaque(node) {
			return ""
		}
		if !allowsType(node, "object") {
			return fmt.Sprintf("the schema at /%s is not an object", strings.Join(tokens[:i], "/"))
		}
		props, _ := node["properties"].(map[string]any)
		next, ok := props[tok].(map[string]any)
		if !ok {
			return fmt.Sprintf("the schema has no property %q at /%s", tok, strings.Join(tokens[:i], "/"))
		}
		node = next
	}
	return checkValueSchema(f, node)
}

// checkValueSchema compares a field's rule with the schema of its value.
func checkValueSchema(f extractbench.Field, node map[string]any) string {
	if opaque(node) {
		return ""
	}
	want := map[extractbench.FieldType][]string{
		extractbench.FieldString:  {"string"},
		extractbench.FieldEnum:    {"string"},
		extractbench.FieldDate:    {"string"},
		extractbench.FieldDecimal: {"number", "string", "integer"},
		extractbench.FieldInteger: {"integer", "number"},
		extractbench.FieldBoolean: {"boolean"},
		extractbench.FieldList:    {"array"},
	}[f.Type]
	if !slices.ContainsFunc(want, func(t string) bool { return allowsType(node, t) }) {
		return fmt.Sprintf("the schema's type %v does not hold a %s (want %s)", node["type"], f.Type, strings.Join(want, " or "))
	}
	if enum, ok := node["enum"].([]any); ok && f.Type == extractbench.FieldEnum {
		for _, v := range f.Values {
			if !slices.Contains(enum, any(v)) {
				return fmt.Sprintf("the schema's enum lacks the value %q", v)
			}
		}
	}
	if f.Type == extractbench.FieldList && f.Items != nil {
		if items, ok := node["items"].(map[string]any); ok {
			if p := checkValueSchema(*f.Items, items); p != "" {
				return "items: " + p
			}
		}
	}
	return ""
}

// opaque reports whether a schema node is one the check does not follow.
func opaque(node map[string]any) bool {
	for _, k := range []string{"$ref", "anyOf", "oneOf", "allOf"} {
		if _, ok := node[k]; ok {
			return true
		}
	}
	return false
}

// allowsType reports whether a schema node's type admits t (no type
// admits everything; integer is a number).
func allowsType(node map[string]any, t string) bool {
	switch typ := node["type"].(type) {
	case nil:
		return true
	case string:
		return typ == t || (t == "integer" && typ == "number")
	case []any:
		for _, x := range typ {
			if x == t || (t == "integer" && x == "number") {
				return true
			}
		}
		return false
	}
	return false
}
