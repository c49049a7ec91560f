package eval

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/extractbench/extractbench/schemas"
)

// extractionRules is the embedded extraction schema read as the few rules
// it states, so that an answer that keeps them is known valid without
// gojsonschema, whose walk (and its enum check, which encodes every value
// as JSON) was the largest part of scoring a request. Only the answer the
// rules call valid skips gojsonschema; any other still goes through it,
// which alone words the problems. Nil when the schema file says anything
// these rules do not read (the file was edited): then every answer goes
// through gojsonschema.
var extractionRules = sync.OnceValue(func() *extractionShape {
	return readExtractionShape(schemas.Raw(schemas.ExtractionFile))
})

// extractionShape is what the embedded extraction schema requires: an
// object of exactly date, amount and category; date a YYYY-MM-DD calendar
// day or null, amount a number or null, category one of the enum or null.
type extractionShape struct {
	categories map[string]bool
}

// datePattern is the date's pattern in the schema the rules read.
const datePattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"

// readExtractionShape reads raw as the extraction schema's rules, or nil
// when it holds any keyword or value other than those rules know.
func readExtractionShape(raw []byte) *extractionShape {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	for k := range top {
		switch k {
		case "$schema", "$id", "title", "description", "type", "additionalProperties", "required", "properties":
		default:
			return nil
		}
	}
	var props map[string]map[string]json.RawMessage
	var required []string
	if !jsonIs(top["type"], `"object"`) || !jsonIs(top["additionalProperties"], `false`) ||
		json.Unmarshal(top["required"], &required) != nil || json.Unmarshal(top["properties"], &props) != nil {
		return nil
	}
	slices.Sort(required)
	if !slices.Equal(required, []string{"amount", "category", "date"}) || len(props) != 3 {
		return nil
	}
	want := map[string][]string{ // each property's keywords, description aside
		"date":     {"format", "pattern", "type"},
		"amount":   {"type"},
		"category": {"enum", "type"},
	}
	for name, kw := range props {
		var got []string
		for k := range kw {
			if k != "description" {
				got = append(got, k)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want[name]) {
			return nil
		}
	}
	var enum []*string
	if !jsonIs(props["date"]["type"], `["string","null"]`) || !jsonIs(props["date"]["format"], `"date"`) ||
		!jsonIs(props["date"]["pattern"], mustJSON(datePattern)) ||
		!jsonIs(props["amount"]["type"], `["number","null"]`) ||
		!jsonIs(props["category"]["type"], `["string","null"]`) ||
		json.Unmarshal(props["category"]["enum"], &enum) != nil || !slices.Contains(enum, nil) {
		return nil
	}
	s := &extractionShape{categories: map[string]bool{}}
	for _, c := range enum {
		if c != nil {
			s.categories[*c] = true
		}
	}
	return s
}

// jsonIs reports whether raw is the JSON value want, white space aside.
func jsonIs(raw json.RawMessage, want string) bool {
	var got, w bytes.Buffer
	return json.Compact(&got, raw) == nil && json.Compact(&w, []byte(want)) == nil && bytes.Equal(got.Bytes(), w.Bytes())
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// valid reports whether obj, as decodeValue makes it (strings,
// json.Number, nil, …), keeps the schema's rules: then gojsonschema finds
// it valid too (TestExtractionShape_AgreesWithSchema).
func (s *extractionShape) valid(obj map[string]any) bool {
	if s == nil || len(obj) != 3 {
		return false
	}
	for k, v := range obj {
		if v == nil {
			if k != "date" && k != "amount" && k != "category" {
				return false
			}
			continue
		}
		switch k {
		case "date":
			d, ok := v.(string)
			if !ok || !isDatePattern(d) {
				return false
			}
			if _, err := time.Parse("2006-01-02", d); err != nil { // gojsonschema's format "date"
				return false
			}
		case "amount":
			if _, ok := v.(json.Number); !ok {
				return false
			}
		case "category":
			c, ok := v.(string)
			if !ok || !s.categories[c] {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// isDatePattern reports whether d matches datePattern.
func isDatePattern(d string) bool {
	if len(d) != 10 || d[4] != '-' || d[7] != '-' {
		return false
	}
	for i := range len(d) {
		if i != 4 && i != 7 && (d[i] < '0' || d[i] > '9') {
			return false
		}
	}
	return true
}
