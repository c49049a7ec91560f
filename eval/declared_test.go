package eval

import (
	"cmp"
	"encoding/json"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/xeipuuv/gojsonschema"
)

// orderFields is a purchase order's field set: a nested supplier, a list
// of line totals, an enum, a decimal, a date in two formats, a boolean,
// a field that may be left unreviewed, and names that are SQL keywords.
var orderFields = []extractbench.Field{
	{Name: "order", Type: extractbench.FieldString, Description: "the order number, as printed"},
	{Name: "tax_id", Pointer: "/supplier/tax_id", Type: extractbench.FieldString, Match: extractbench.MatchNormalised, Normalise: []string{"punctuation"}},
	{Name: "select", Pointer: "/supplier/name", Type: extractbench.FieldString, Match: extractbench.MatchNormalised, Missing: extractbench.MissingSkip},
	{Name: "currency", Type: extractbench.FieldEnum, Values: []string{"EUR", "USD"}, Required: true},
	{Name: "total", Type: extractbench.FieldDecimal, Locale: extractbench.LocalePT},
	{Name: "from", Pointer: "/issued", Type: extractbench.FieldDate, Formats: []string{"DD/MM/YYYY", "YYYY-MM-DD"}},
	{Name: "signed", Type: extractbench.FieldBoolean},
	{Name: "lines", Type: extractbench.FieldList, Items: &extractbench.Field{Type: extractbench.FieldDecimal}},
	{Name: "count", Pointer: "/a~1b", Type: extractbench.FieldInteger},
}

// order is an expectation of orderFields, as a corpus writes it.
var order = corpus.Expected{Object: `{"order":"PO-7","tax_id":"PT-501.234.567","select":null,"currency":"EUR","total":"1.234,50","from":"2025-03-14","signed":true,"lines":[1000,234.5],"count":2}`}

const rightOrder = `{"order":"PO-7","supplier":{"tax_id":"PT501234567","name":"Acme"},"currency":"EUR","total":1234.5,"issued":"14/03/2025","signed":true,"lines":[234.5,1000],"a/b":2}`

func orderOptions(t *testing.T, rule extractbench.ParseRule) Options {
	t.Helper()
	s, _, err := CompileFieldSchema(orderFields)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Rule: rule, Schema: s, Fields: orderFields}
}

func TestEvaluate_Declared(t *testing.T) {
	edit := func(from, to string) string {
		if !strings.Contains(rightOrder, from) {
			t.Fatalf("%q is not in the answer", from)
		}
		return strings.Replace(rightOrder, from, to, 1)
	}
	tests := []struct {
		name    string
		output  string
		failure extractbench.Failure
		detail  string // a fragment of FailureDetail
		results string // each field's result, in protocol order, "-" for unscored
	}{
		{"right", rightOrder, extractbench.None, "", "tp tp - tp tp tp tp tp tp"},
		{"wrong total and a missed line", edit(`"lines":[234.5,1000]`, `"lines":[1000]`), extractbench.Quality,
			"lines: 1 of 2 items missed", "tp tp - tp tp tp tp fp_fn tp"},
		{"two wrong fields named", strings.Replace(edit(`"total":1234.5`, `"total":"1.234,60"`), `"signed":true`, `"signed":false`, 1), extractbench.Quality,
			"total: got 1234.6, want 1234.5; signed: got false, want true", "tp tp - tp fp_fn tp fp_fn tp tp"},
		{"a null where a value is expected", edit(`"order":"PO-7"`, `"order":null`), extractbench.Quality, "order: no value", "fn tp - tp tp tp tp tp tp"},
		{"an unreviewed field answered anything", edit(`"name":"Acme"`, `"name":"Other"`), extractbench.None, "", "tp tp - tp tp tp tp tp tp"},
		{"a date in no stated format", edit(`"14/03/2025"`, `"14.03.2025"`), extractbench.Format,
			`from: "14.03.2025" is not a real day written DD/MM/YYYY or YYYY-MM-DD`, "tp tp - tp tp - tp tp tp"},
		{"a wrong type", edit(`"signed":true`, `"signed":"yes"`), extractbench.Format, `signed: a string "yes", want true or false`, "tp tp - tp tp tp - tp tp"},
		{"an enum value outside the schema", edit(`"currency":"EUR"`, `"currency":"GBP"`), extractbench.Format, "schema: currency", "tp tp - fp_fn tp tp tp tp tp"},
		{"a missing key", edit(`"order":"PO-7",`, ``), extractbench.Format, "schema: (root): order is required", "fn tp - tp tp tp tp tp tp"},
		{"an extra key", edit(`"signed":true`, `"signed":true,"note":"x"`), extractbench.Format, "Additional property note", "tp tp - tp tp tp tp tp tp"},
		{"a missing nested object", edit(`"supplier":{"tax_id":"PT501234567","name":"Acme"},`, ``), extractbench.Format, "supplier is required", "tp fn - tp tp tp tp tp tp"},
		{"no parse", `{"order":`, extractbench.Format, "strict parse", "- - - - - - - - -"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Evaluate(tt.output, order, extractbench.Transport{FinishReason: "stop"}, orderOptions(t, extractbench.Strict))
			if o.Failure != tt.failure || !strings.Contains(o.FailureDetail, tt.detail) {
				t.Errorf("failure %q %q, want %q with %q", o.Failure, o.FailureDetail, tt.failure, tt.detail)
			}
			var got []string
			for _, f := range o.Fields {
				got = append(got, cmp.Or(string(f.Result), "-"))
			}
			if strings.Join(got, " ") != tt.results {
				t.Errorf("results %q, want %q", strings.Join(got, " "), tt.results)
			}
			if len(o.Fields) != len(orderFields) {
				t.Fatalf("%d field scores, want %d", len(o.Fields), len(orderFields))
			}
			for i, f := range o.Fields {
				if f.Name != orderFields[i].Name {
					t.Errorf("field %d is %s, want %s (protocol order)", i, f.Name, orderFields[i].Name)
				}
			}
			if o.Fields[2].Reason != ReasonNotReviewed {
				t.Errorf("unreviewed field: %+v", o.Fields[2])
			}
			if o.Accepted != (tt.failure == extractbench.None) || o.Date != "" || o.Prediction.Date != nil {
				t.Errorf("accepted %v, default fields %q %v", o.Accepted, o.Date, o.Prediction.Date)
			}
		})
	}
}

// TestEvaluate_DeclaredNoParse: an answer that does not parse leaves every
// field unscored, each expected value counted as missed (a list's every
// item), and the unreviewed one counting nothing.
func TestEvaluate_DeclaredNoParse(t *testing.T) {
	o := Evaluate("sorry, no JSON", order, extractbench.Transport{FinishReason: "stop"}, orderOptions(t, extractbench.Lenient))
	var fns int
	for _, f := range o.Fields {
		if f.Result != extractbench.Unscored || f.Got != "" || f.TP+f.FP != 0 {
			t.Errorf("%s: %+v, want unscored with no answer", f.Name, f)
		}
		fns += f.FN
	}
	if o.Fields[2].Reason != ReasonNotReviewed || o.Fields[0].Reason != reasonNoParse {
		t.Errorf("reasons %q %q", o.Fields[2].Reason, o.Fields[0].Reason)
	}
	if want := 7 + 2; fns != want { // 7 scalars with a value, 2 expected lines
		t.Errorf("%d missed, want %d", fns, want)
	}
}

// TestEvaluate_DeclaredLenient: the lenient rule finds the object in a
// fence and leaves declared strings as written (the category
// normalisation is the default protocol's).
func TestEvaluate_DeclaredLenient(t *testing.T) {
	out := "```json\n" + strings.Replace(rightOrder, `"PO-7"`, `"PO-7 "`, 1) + "\n```"
	o := Evaluate(out, order, extractbench.Transport{FinishReason: "stop"}, orderOptions(t, extractbench.Lenient))
	if o.Failure != extractbench.Quality || !strings.HasPrefix(o.FailureDetail, `order: got "PO-7 "`) || !o.LenientParseOK || o.StrictParseOK {
		t.Errorf("failure %q %q, parse %v/%v", o.Failure, o.FailureDetail, o.StrictParseOK, o.LenientParseOK)
	}
}

// TestEvaluate_DeclaredTransport: a truncated answer is a truncation, its
// fields still scored as far as they parse (none here).
func TestEvaluate_DeclaredTransport(t *testing.T) {
	o := Evaluate(rightOrder[:40], order, extractbench.Transport{FinishReason: "length"}, orderOptions(t, extractbench.Strict))
	if o.Failure != extractbench.Truncation || len(o.Fields) != len(orderFields) {
		t.Errorf("failure %q, %d fields", o.Failure, len(o.Fields))
	}
	o = Evaluate(rightOrder, order, extractbench.Transport{Kind: extractbench.TransportInterrupted}, orderOptions(t, extractbench.Strict))
	if o.Fields != nil || o.Failure != extractbench.None {
		t.Errorf("an interrupted request: fields %v, failure %q; want none (not measured)", o.Fields, o.Failure)
	}
}

// TestEvaluate_DefaultFields: the default protocol's Score.Fields mirror
// Date, Amount and Category, counted as the pass figures count them, and
// nothing else of the score changes.
func TestEvaluate_DefaultFields(t *testing.T) {
	tests := []struct {
		output string
		exp    corpus.Expected
		want   []extractbench.FieldScore
	}{
		{`{"date":"2025-03-14","amount":1234.56,"category":"software"}`, invoice, []extractbench.FieldScore{
			{Name: "date", Expected: `"2025-03-14"`, Got: `"2025-03-14"`, Result: tp, TP: 1},
			{Name: "amount", Expected: `1234.56`, Got: `1234.56`, Result: tp, TP: 1},
			{Name: "category", Expected: `"software"`, Got: `"software"`, Result: tp, TP: 1}}},
		{`{"date":"2025-02-30","amount":1234.5,"category":null}`, invoice, []extractbench.FieldScore{
			{Name: "date", Expected: `"2025-03-14"`, Got: `"2025-02-30"`, Reason: `date: "2025-02-30" is not a calendar day`, FN: 1},
			{Name: "amount", Expected: `1234.56`, Got: `1234.5`, Result: fpfn, Reason: "wrong value", FP: 1, FN: 1},
			{Name: "category", Expected: `"software"`, Got: `null`, Result: fn, Reason: "no value", FN: 1}}},
		{`{"date":"2025-01-02","amount":-80}`, creditNote, []extractbench.FieldScore{
			{Name: "date", Expected: `null`, Got: `"2025-01-02"`, Result: fp, Reason: "a value where none is expected", FP: 1},
			{Name: "amount", Expected: `-80.00`, Got: `-80`, Result: tp, TP: 1},
			{Name: "category", Expected: `"telecom"`, Reason: "category: key missing (null must be written)", FN: 1}}},
		{`not json`, zeroAmount, []extractbench.FieldScore{
			{Name: "date", Expected: `"2024-02-29"`, Reason: reasonNoParse, FN: 1},
			{Name: "amount", Expected: `0`, Reason: reasonNoParse, FN: 1},
			{Name: "category", Expected: `null`, Reason: reasonNoParse}}},
		{` `, invoice, []extractbench.FieldScore{
			{Name: "date", Expected: `"2025-03-14"`, Reason: reasonNoAnswer, FN: 1},
			{Name: "amount", Expected: `1234.56`, Reason: reasonNoAnswer, FN: 1},
			{Name: "category", Expected: `"software"`, Reason: reasonNoAnswer, FN: 1}}},
	}
	for _, tt := range tests {
		o := Evaluate(tt.output, tt.exp, extractbench.Transport{FinishReason: "stop"}, Options{})
		if len(o.Fields) != 3 {
			t.Fatalf("%s: fields %+v", tt.output, o.Fields)
		}
		for i, want := range tt.want {
			if got := o.Fields[i]; got != want {
				t.Errorf("%s: field %d = %+v, want %+v", tt.output, i, got, want)
			}
		}
		for i, r := range []extractbench.FieldResult{o.Date, o.Amount, o.Category} {
			if o.Fields[i].Result != r {
				t.Errorf("%s: Fields[%d].Result %q, but the score says %q", tt.output, i, o.Fields[i].Result, r)
			}
		}
	}
}

func TestFieldSchema(t *testing.T) {
	raw, err := FieldSchema(orderFields)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	// Properties are written in the protocol's order, as guided decoding
	// will write the keys.
	last := -1
	for _, key := range []string{`"order":`, `"supplier":`, `"tax_id":`, `"name":`, `"currency":`, `"total":`, `"issued":`, `"signed":`, `"lines":`, `"a/b":`} {
		at := strings.Index(string(raw), key)
		if at < last {
			t.Errorf("%s at %d, before the field declared ahead of it (%d):\n%s", key, at, last, raw)
		}
		last = at
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	props := s["properties"].(map[string]any)
	for path, want := range map[string]string{
		"required":             `["order","supplier","currency","total","issued","signed","lines","a/b"]`,
		"order":                `{"description":"the order number, as printed","type":["string","null"]}`,
		"supplier":             `{"additionalProperties":false,"properties":{"name":{"type":["string","null"]},"tax_id":{"type":["string","null"]}},"required":["tax_id","name"],"type":"object"}`,
		"currency":             `{"enum":["EUR","USD"],"type":"string"}`,
		"total":                `{"type":["number","string","null"]}`,
		"issued":               `{"pattern":"^([0-9]{2}/[0-9]{2}/[0-9]{4}|[0-9]{4}-[0-9]{2}-[0-9]{2})$","type":["string","null"]}`,
		"signed":               `{"type":["boolean","null"]}`,
		"lines":                `{"items":{"type":["number","string"]},"type":["array","null"]}`,
		"a/b":                  `{"type":["integer","null"]}`,
		"additionalProperties": `false`,
	} {
		var got any = props[path]
		if path == "required" || path == "additionalProperties" {
			got = s[path]
		}
		if js(got) != want {
			t.Errorf("%s = %s, want %s", path, js(got), want)
		}
	}
	compiled, _, err := CompileFieldSchema(orderFields)
	if err != nil {
		t.Fatal(err)
	}
	for out, valid := range map[string]bool{
		rightOrder: true,
		strings.Replace(rightOrder, `"14/03/2025"`, `"2025-03-14"`, 1):        true,
		strings.Replace(rightOrder, `"14/03/2025"`, `"14.03.2025"`, 1):        false,
		strings.Replace(rightOrder, `"currency":"EUR"`, `"currency":null`, 1): false, // required: never null
		strings.Replace(rightOrder, `"total":1234.5`, `"total":null`, 1):      true,
		strings.Replace(rightOrder, `"a/b":2`, `"a/b":2.5`, 1):                false,
	} {
		res, err := compiled.Validate(gojsonschema.NewStringLoader(out))
		if err != nil || res.Valid() != valid {
			t.Errorf("%s: valid %v (%v), want %v", out, res != nil && res.Valid(), err, valid)
		}
	}
	if _, err := FieldSchema([]extractbench.Field{{Name: "a", Type: extractbench.FieldString}, {Name: "b", Pointer: "/a/b", Type: extractbench.FieldString}}); err == nil {
		t.Error("a pointer through another field's value: no error")
	}
}

func TestCheckFieldSchema(t *testing.T) {
	generated, err := FieldSchema(orderFields)
	if err != nil {
		t.Fatal(err)
	}
	if problems := CheckFieldSchema(orderFields, generated); problems != nil {
		t.Errorf("the generated schema disagrees with its fields: %v", problems)
	}
	tests := []struct {
		schema string
		want   string // "" for agreement
	}{
		{`{"type":"object","properties":{"total":{"type":"number"},"supplier":{"type":"object","properties":{"tax_id":{"type":"string"}}}}}`, ""},
		{`{"type":"object","properties":{"total":{"type":"integer"}}}`, ""},
		{`{"type":"object","properties":{"total":{"type":"boolean"}}}`, `field total (/total): the schema's type boolean does not hold a decimal`},
		{`{"type":"object","properties":{}}`, `field total (/total): the schema has no property "total" at /`},
		{`{"type":"object","properties":{"supplier":{"type":"string"}}}`, `field tax_id (/supplier/tax_id): the schema at /supplier is not an object`},
		{`{"type":"object","properties":{"supplier":{"type":"object","properties":{}}}}`, `the schema has no property "tax_id" at /supplier`},
		{`{"type":"object","properties":{"currency":{"type":"string","enum":["EUR"]}}}`, `field currency (/currency): the schema's enum lacks the value "USD"`},
		{`{"type":"object","properties":{"lines":{"type":"array","items":{"type":"string"}}}}`, ""},
		{`{"type":"object","properties":{"lines":{"type":"array","items":{"type":"boolean"}}}}`, `field lines (/lines): items: the schema's type boolean`},
		{`{"type":"object","properties":{"lines":{"$ref":"#/definitions/x"}}}`, ""},
		{`[1]`, "not a JSON object"},
	}
	for _, tt := range tests {
		fields := orderFields
		switch {
		case strings.Contains(tt.schema, "total"):
			fields = orderFields[4:5]
		case strings.Contains(tt.schema, "supplier"):
			fields = orderFields[1:2]
		case strings.Contains(tt.schema, "currency"):
			fields = orderFields[3:4]
		case strings.Contains(tt.schema, "lines"):
			fields = orderFields[7:8]
		}
		got := strings.Join(CheckFieldSchema(fields, []byte(tt.schema)), "; ")
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.schema, got, tt.want)
		}
	}
}

// TestEvaluate_OddNames: field names that are SQL keywords and pointers
// holding quotes, markup and SQL punctuation generate a schema that
// compiles, and are read and scored like any other.
func TestEvaluate_OddNames(t *testing.T) {
	fields := []extractbench.Field{
		{Name: "select", Type: extractbench.FieldString},
		{Name: "from", Pointer: `/it's <b>&"x" --; drop/~0~1`, Type: extractbench.FieldInteger},
	}
	s, raw, err := CompileFieldSchema(fields)
	if err != nil {
		t.Fatal(err)
	}
	exp := corpus.Expected{Object: `{"select":"<i>a</i>","from":3}`}
	out := `{"select":"<i>a</i>","it's <b>&\"x\" --; drop":{"~/":3}}`
	o := Evaluate(out, exp, extractbench.Transport{FinishReason: "stop"}, Options{Schema: s, Fields: fields})
	if !o.Accepted || len(o.Fields) != 2 || o.Fields[0].Got != `"<i>a</i>"` || o.Fields[1].Got != `3` {
		t.Errorf("score %+v (%s), want accepted; schema %s", o.Fields, o.FailureDetail, raw)
	}
}
