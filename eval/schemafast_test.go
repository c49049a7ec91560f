package eval

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/schemas"
	"github.com/xeipuuv/gojsonschema"
)

// TestExtractionShape_AgreesWithSchema: over every object of up to four
// keys drawn from the schema's three and one more, each with values of
// every kind (calendar and non-calendar dates, numbers as strings, enum
// values in other cases, nested values), the rules call an object valid
// exactly when gojsonschema does.
func TestExtractionShape_AgreesWithSchema(t *testing.T) {
	rules := extractionRules()
	if rules == nil {
		t.Fatal("the embedded extraction schema was not read as its rules")
	}
	values := []any{nil, "2024-03-15", "2024-02-29", "2023-02-29", "2024-13-01", "2024-3-15", "20240315", "2024-03-15\n", "２０２４-03-15",
		json.Number("12.5"), json.Number("-1e3"), json.Number("0"), "12.5", true, []any{}, map[string]any{"a": "b"},
		"rent", "Rent", " rent", "other", "healthcare", ""}
	keys := []string{"date", "amount", "category", "extra"}
	schema := schemas.Extraction()
	absent := struct{}{}
	choices := append([]any{absent}, values...)
	n, valid := 0, 0
	var obj func(k int, o map[string]any)
	obj = func(k int, o map[string]any) {
		if k == len(keys) {
			res, err := schema.Validate(gojsonschema.NewRawLoader(o))
			if err != nil {
				t.Fatal(err)
			}
			n++
			if res.Valid() {
				valid++
			}
			if got := rules.valid(o); got != res.Valid() {
				t.Fatalf("%v: rules say valid %v, gojsonschema %v %v", o, got, res.Valid(), res.Errors())
			}
			return
		}
		vals := choices
		if keys[k] == "extra" {
			vals = choices[:3]
		}
		for _, v := range vals {
			if v != absent {
				o[keys[k]] = v
			}
			obj(k+1, o)
			delete(o, keys[k])
		}
	}
	obj(0, map[string]any{})
	if valid == 0 || valid == n {
		t.Fatalf("%d of %d objects valid: the cases do not tell valid from invalid", valid, n)
	}
}

// TestReadExtractionShape_RefusesOtherSchemas: a schema that says anything
// the rules do not read (another keyword, another pattern, another type)
// gives no rules, so every answer goes through gojsonschema.
func TestReadExtractionShape_RefusesOtherSchemas(t *testing.T) {
	raw := string(schemas.Raw(schemas.ExtractionFile))
	if readExtractionShape([]byte(raw)) == nil {
		t.Fatal("the embedded schema itself gives no rules")
	}
	for _, edit := range [][2]string{
		{`"additionalProperties": false`, `"additionalProperties": true`},
		{`"type": ["number", "null"]`, `"type": ["number", "string", "null"]`},
		{`"format": "date",`, `"format": "date", "minLength": 10,`},
		{`{4}-[0-9]{2}`, `{2,4}-[0-9]{2}`},
		{`"required": ["date", "amount", "category"]`, `"required": ["date", "amount"]`},
		{`"type": "object",`, `"type": "object", "maxProperties": 3,`},
		{`, null]`, `]`},
	} {
		edited := strings.Replace(raw, edit[0], edit[1], 1)
		if edited == raw {
			t.Fatalf("edit %q: not found in the schema", edit[0])
		}
		if readExtractionShape([]byte(edited)) != nil {
			t.Errorf("schema with %q in place of %q: read as the rules", edit[1], edit[0])
		}
	}
}

// TestEvaluate_ValidAnswerAllocations bounds what scoring a valid answer
// allocates: gojsonschema's walk of it took 45 of its 102 allocations.
func TestEvaluate_ValidAnswerAllocations(t *testing.T) {
	exp := corpus.Expected{Date: ptrTo("2024-03-15"), Amount: ptrTo("12.50"), Category: ptrTo("office_supplies")}
	opt := Options{Rule: extractbench.Strict, Schema: schemas.Extraction()}
	out := `{"date": "2024-03-15", "amount": 12.50, "category": "office_supplies"}`
	if s := Evaluate(out, exp, extractbench.Transport{Kind: extractbench.TransportOK}, opt); !s.Accepted || !s.SchemaOK {
		t.Fatalf("score %+v, want accepted", s)
	}
	allocs := testing.AllocsPerRun(50, func() { Evaluate(out, exp, extractbench.Transport{Kind: extractbench.TransportOK}, opt) })
	if allocs > 75 {
		t.Errorf("Evaluate of a valid answer: %.0f allocations, want at most 75", allocs)
	}
}

func ptrTo(s string) *string { return &s }

// BenchmarkEvaluate_Valid scores a valid, accepted answer against the
// embedded schema: what nearly every request of a good engine costs.
func BenchmarkEvaluate_Valid(b *testing.B) {
	exp := corpus.Expected{Date: ptrTo("2024-03-15"), Amount: ptrTo("12.50"), Category: ptrTo("office_supplies")}
	opt := Options{Rule: extractbench.Strict, Schema: schemas.Extraction()}
	out := `{"date": "2024-03-15", "amount": 12.50, "category": "office_supplies"}`
	b.ReportAllocs()
	for b.Loop() {
		Evaluate(out, exp, extractbench.Transport{Kind: extractbench.TransportOK}, opt)
	}
}
