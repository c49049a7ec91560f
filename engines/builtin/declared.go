package builtin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode"
)

// declared is a field set a request asks for other than the default
// date, amount and category: the JSON Schema it sends as response_format
// (guided decoding), or embeds in its prompt. The engine answers an object
// with those properties, read from the document (declaredread.go).
type declared struct {
	key   string  // identifies the schema: keys the reading cache
	props []*prop // the top-level properties, in the schema's order
}

// valueKind is the JSON type a property's value takes.
type valueKind int

const (
	kindString valueKind = iota
	kindEnum
	kindDate // a string, YYYY-MM-DD
	kindNumber
	kindInteger
	kindBoolean
	kindObject
)

// prop is one property of a declared schema: a scalar, a list of a scalar
// (list), or an object of properties.
type prop struct {
	name     string
	kind     valueKind
	list     bool     // an array of kind
	enum     []string // kindEnum's values
	children []*prop  // kindObject's properties, in order
	// words are the path's words (every segment's, "supplier", "tax",
	// "id"); own the last segment's without the generic ones ("name"):
	// what a label must say to be this property's (labelFor).
	words, own []string
}

// schemaNode is the part of a JSON Schema node the engine reads.
type schemaNode struct {
	Type       json.RawMessage `json:"type"`
	Enum       []any           `json:"enum"`
	Format     string          `json:"format"`
	Pattern    string          `json:"pattern"`
	Items      json.RawMessage `json:"items"`
	Properties json.RawMessage `json:"properties"`
}

// declaredOf returns the field set a request declares, from its
// response_format or, without one, a JSON Schema in its prompt; nil for
// the default fields or no schema, which the default extractor answers
// (byte for byte as before fields could be declared). A run sends the
// same schema with every request: each is parsed once.
func (s *Server) declaredOf(responseFormat json.RawMessage, prompt string) *declared {
	raw := schemaOfFormat(responseFormat)
	if raw == nil {
		raw = schemaInPrompt(prompt)
	}
	if raw == nil {
		return nil
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if d, ok := s.schemas[string(raw)]; ok {
		return d
	}
	d := parseDeclared(raw)
	if s.schemas == nil || len(s.schemas) >= 64 {
		s.schemas = map[string]*declared{}
	}
	s.schemas[string(raw)] = d
	return d
}

// schemaOfFormat returns the schema of an OpenAI json_schema response
// format, or nil.
func schemaOfFormat(rf json.RawMessage) json.RawMessage {
	if len(rf) == 0 {
		return nil
	}
	var f struct {
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if json.Unmarshal(rf, &f) != nil || len(f.JSONSchema.Schema) == 0 {
		return nil
	}
	return f.JSONSchema.Schema
}

// schemaInPrompt returns the first JSON object of prompt that has
// "properties" at its top level (a schema the prompt shows the model), or
// nil. Objects are tried from the outermost that starts before the word.
func schemaInPrompt(prompt string) json.RawMessage {
	at := strings.Index(prompt, `"properties"`)
	if at < 0 {
		return nil
	}
	for i := 0; i < at; i++ {
		if prompt[i] != '{' {
			continue
		}
		var raw json.RawMessage
		if json.NewDecoder(strings.NewReader(prompt[i:])).Decode(&raw) != nil {
			continue
		}
		var top struct {
			Properties json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(raw, &top) == nil && len(top.Properties) > 0 {
			return raw
		}
	}
	return nil
}

// parseDeclared reads a schema's properties; nil when it has none or is
// the default extraction schema (date, amount, category).
func parseDeclared(raw json.RawMessage) *declared {
	var root schemaNode
	if json.Unmarshal(raw, &root) != nil {
		return nil
	}
	props := parseProps(root.Properties, nil)
	if len(props) == 0 || isDefaultSet(props) {
		return nil
	}
	h := sha256.Sum256(raw)
	return &declared{key: hex.EncodeToString(h[:8]), props: props}
}

// isDefaultSet reports whether props are exactly the default fields.
func isDefaultSet(props []*prop) bool {
	if len(props) != 3 {
		return false
	}
	seen := map[string]bool{}
	for _, p := range props {
		if p.kind == kindObject || p.list {
			return false
		}
		seen[p.name] = true
	}
	return seen["date"] && seen["amount"] && seen["category"]
}

// parseProps reads a "properties" object in its written order.
func parseProps(raw json.RawMessage, parent []string) []*prop {
	names, nodes := orderedObject(raw)
	var out []*prop
	for i, name := range names {
		var n schemaNode
		if json.Unmarshal(nodes[i], &n) != nil {
			continue
		}
		out = append(out, parseProp(name, n, append(parent[:len(parent):len(parent)], name)))
	}
	return out
}

// parseProp reads one property's node; path is its segments.
func parseProp(name string, n schemaNode, path []string) *prop {
	p := &prop{name: name}
	for _, seg := range path {
		p.words = append(p.words, keyWords(seg)...)
	}
	for _, w := range keyWords(path[len(path)-1]) {
		if !genericWords[w] {
			p.own = append(p.own, w)
		}
	}
	types := schemaTypes(n.Type)
	if types["array"] && len(n.Items) > 0 {
		var items schemaNode
		if json.Unmarshal(n.Items, &items) == nil {
			q := parseProp(name, items, path)
			p.kind, p.enum, p.list = q.kind, q.enum, true
			return p
		}
	}
	switch {
	case len(n.Enum) > 0:
		p.kind = kindEnum
		for _, v := range n.Enum {
			if s, ok := v.(string); ok {
				p.enum = append(p.enum, s)
			}
		}
	case types["object"] || len(n.Properties) > 0:
		p.kind = kindObject
		p.children = parseProps(n.Properties, path)
	case types["integer"]:
		p.kind = kindInteger
	case types["number"]:
		p.kind = kindNumber
	case types["boolean"]:
		p.kind = kindBoolean
	case n.Format == "date" || strings.Contains(n.Pattern, "[0-9]{4}"): // a year in the pattern
		p.kind = kindDate
	}
	return p
}

// schemaTypes reads "type": a name or a list of names.
func schemaTypes(raw json.RawMessage) map[string]bool {
	out := map[string]bool{}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		out[one] = true
		return out
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	for _, t := range many {
		out[t] = true
	}
	return out
}

// orderedObject returns a JSON object's keys and values in written order
// (a map would lose it, and the answer follows it as models do).
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil
	}
	var names []string
	var values []json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return names, values
		}
		name, _ := t.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return names, values
		}
		names, values = append(names, name), append(values, v)
	}
	return names, values
}

// genericWords say nothing about which label is a property's: a
// supplier's "name" is on the line labelled "Supplier".
var genericWords = map[string]bool{"name": true, "value": true, "text": true}

// keyWords splits a property name (snake, kebab or camel case) into its
// canonical words.
func keyWords(name string) []string {
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return labelWords(b.String())
}
