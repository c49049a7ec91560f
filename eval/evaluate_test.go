package eval

import (
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/xeipuuv/gojsonschema"
)

func ptr(s string) *string { return &s }

// invoice is the expectation most cases score against.
var invoice = corpus.Expected{Date: ptr("2025-03-14"), Amount: ptr("1234.56"), Category: ptr("software")}

// creditNote has a negative amount and no date.
var creditNote = corpus.Expected{Date: nil, Amount: ptr("-80.00"), Category: ptr("telecom")}

// zeroAmount expects an amount of zero and no category.
var zeroAmount = corpus.Expected{Date: ptr("2024-02-29"), Amount: ptr("0"), Category: nil}

func TestEvaluate_Scoring(t *testing.T) {
	tests := []struct {
		name     string
		output   string
		exp      corpus.Expected
		failure  extractbench.Failure
		date     extractbench.FieldResult
		amount   extractbench.FieldResult
		category extractbench.FieldResult
		detail   string // a fragment of FailureDetail
	}{
		{"exact", `{"date":"2025-03-14","amount":1234.56,"category":"software"}`, invoice, extractbench.None, extractbench.TP, extractbench.TP, extractbench.TP, ""},
		{"surrounding whitespace", " \n\t{\"date\":\"2025-03-14\",\"amount\":1234.56,\"category\":\"software\"}\r\n", invoice, extractbench.None, extractbench.TP, extractbench.TP, extractbench.TP, ""},
		{"key order free", `{"category":"software","amount":1234.56,"date":"2025-03-14"}`, invoice, extractbench.None, extractbench.TP, extractbench.TP, extractbench.TP, ""},
		{"trailing zeros same decimal", `{"date":"2025-03-14","amount":1234.560,"category":"software"}`, invoice, extractbench.None, extractbench.TP, extractbench.TP, extractbench.TP, ""},
		{"exponent", `{"date":"2025-03-14","amount":1.23456e3,"category":"software"}`, invoice, extractbench.None, extractbench.TP, extractbench.TP, extractbench.TP, ""},
		{"within half a cent", `{"date":"2025-03-14","amount":1234.564,"category":"software"}`, invoice, extractbench.None, extractbench.TP, extractbench.TP, extractbench.TP, ""},
		{"exactly half a cent is within", `{"date":"2025-03-14","amount":1234.555,"category":"software"}`, invoice, extractbench.None, extractbench.TP, extractbench.TP, extractbench.TP, ""},
		{"beyond half a cent", `{"date":"2025-03-14","amount":1234.5651,"category":"software"}`, invoice, extractbench.Quality, extractbench.TP, extractbench.FPFN, extractbench.TP, "amount: got 1234.5651, want 1234.56"},
		{"wrong day", `{"date":"2025-03-15","amount":1234.56,"category":"software"}`, invoice, extractbench.Quality, extractbench.FPFN, extractbench.TP, extractbench.TP, "date: got 2025-03-15"},
		{"wrong category", `{"date":"2025-03-14","amount":1234.56,"category":"travel"}`, invoice, extractbench.Quality, extractbench.TP, extractbench.TP, extractbench.FPFN, "category: got travel, want software"},
		{"predicted null for a value", `{"date":null,"amount":1234.56,"category":"software"}`, invoice, extractbench.Quality, extractbench.FN, extractbench.TP, extractbench.TP, "date: got null"},
		{"value where null expected", `{"date":"2025-01-02","amount":-80,"category":"telecom"}`, creditNote, extractbench.Quality, extractbench.FP, extractbench.TP, extractbench.TP, "want null"},
		{"both null", `{"date":null,"amount":-80.00,"category":"telecom"}`, creditNote, extractbench.None, extractbench.TN, extractbench.TP, extractbench.TP, ""},
		{"sign matters", `{"date":null,"amount":80.00,"category":"telecom"}`, creditNote, extractbench.Quality, extractbench.TN, extractbench.FPFN, extractbench.TP, "amount"},
		{"-0.004 is 0", `{"date":"2024-02-29","amount":-0.004,"category":null}`, zeroAmount, extractbench.None, extractbench.TP, extractbench.TP, extractbench.TN, ""},
		{"1e3 is not 0", `{"date":"2024-02-29","amount":1e3,"category":null}`, zeroAmount, extractbench.Quality, extractbench.TP, extractbench.FPFN, extractbench.TN, ""},
		{"tiny exponent is 0", `{"date":"2024-02-29","amount":1e-999999,"category":null}`, zeroAmount, extractbench.None, extractbench.TP, extractbench.TP, extractbench.TN, ""},
		{"huge exponent is wrong", `{"date":"2024-02-29","amount":9e999999999,"category":null}`, zeroAmount, extractbench.Quality, extractbench.TP, extractbench.FPFN, extractbench.TN, ""},
		{"leap day", `{"date":"2024-02-29","amount":0,"category":null}`, zeroAmount, extractbench.None, extractbench.TP, extractbench.TP, extractbench.TN, ""},

		{"not a calendar day", `{"date":"2025-02-30","amount":1234.56,"category":"software"}`, invoice, extractbench.Format, extractbench.Unscored, extractbench.TP, extractbench.TP, `"2025-02-30" is not a calendar day`},
		{"month 13", `{"date":"2025-13-01","amount":1234.56,"category":"software"}`, invoice, extractbench.Format, extractbench.Unscored, extractbench.TP, extractbench.TP, "not a calendar day"},
		{"not a leap year", `{"date":"2025-02-29","amount":1234.56,"category":"software"}`, invoice, extractbench.Format, extractbench.Unscored, extractbench.TP, extractbench.TP, "not a calendar day"},
		{"date in another format", `{"date":"14/03/2025","amount":1234.56,"category":"software"}`, invoice, extractbench.Format, extractbench.Unscored, extractbench.TP, extractbench.TP, "is not YYYY-MM-DD"},
		{"date as a number", `{"date":20250314,"amount":1234.56,"category":"software"}`, invoice, extractbench.Format, extractbench.Unscored, extractbench.TP, extractbench.TP, "date: a number"},
		{"amount as a string", `{"date":"2025-03-14","amount":"1234.56","category":"software"}`, invoice, extractbench.Format, extractbench.TP, extractbench.Unscored, extractbench.TP, `amount: a string "1234.56"`},
		{"amount as a boolean", `{"date":"2025-03-14","amount":true,"category":"software"}`, invoice, extractbench.Format, extractbench.TP, extractbench.Unscored, extractbench.TP, "amount: a boolean"},
		{"category outside the enum", `{"date":"2025-03-14","amount":1234.56,"category":"Software"}`, invoice, extractbench.Format, extractbench.TP, extractbench.TP, extractbench.Unscored, `"Software" is not in the enum`},
		{"missing key is not null", `{"date":null,"amount":-80.00}`, creditNote, extractbench.Format, extractbench.TN, extractbench.TP, extractbench.Unscored, "category: key missing"},
		{"extra key", `{"date":"2025-03-14","amount":1234.56,"category":"software","currency":"EUR"}`, invoice, extractbench.Format, extractbench.TP, extractbench.TP, extractbench.TP, "schema"},
		{"schema failure and wrong value is format", `{"date":"2025-03-15","amount":"1234.56","category":"software"}`, invoice, extractbench.Format, extractbench.FPFN, extractbench.Unscored, extractbench.TP, "amount"},
		{"duplicate key", `{"date":"2025-03-14","date":"2025-03-15","amount":1234.56,"category":"software"}`, invoice, extractbench.Format, extractbench.Unscored, extractbench.Unscored, extractbench.Unscored, `duplicate key "date"`},
		{"array", `[{"date":"2025-03-14","amount":1234.56,"category":"software"}]`, invoice, extractbench.Format, extractbench.Unscored, extractbench.Unscored, extractbench.Unscored, "strict parse"},
		{"not JSON", `The date is 2025-03-14.`, invoice, extractbench.Format, extractbench.Unscored, extractbench.Unscored, extractbench.Unscored, "no JSON object"},
		{"empty", ``, invoice, extractbench.Format, extractbench.Unscored, extractbench.Unscored, extractbench.Unscored, "no JSON object"},
		{"stopped inside the object", `{"date":"2025-03-14","amount":12`, invoice, extractbench.Format, extractbench.Unscored, extractbench.Unscored, extractbench.Unscored, "ends inside a JSON object"},
		{"fenced under strict", "```json\n{\"date\":\"2025-03-14\",\"amount\":1234.56,\"category\":\"software\"}\n```", invoice, extractbench.Format, extractbench.Unscored, extractbench.Unscored, extractbench.Unscored, "lenient rule would parse it"},
		{"invalid UTF-8", "{\"date\":\"2025-03-14\",\"amount\":1234.56,\"category\":\"soft\xffware\"}", invoice, extractbench.Format, extractbench.Unscored, extractbench.Unscored, extractbench.Unscored, "UTF-8"},
		{"leading plus", `{"date":"2025-03-14","amount":+1234.56,"category":"software"}`, invoice, extractbench.Format, extractbench.Unscored, extractbench.Unscored, extractbench.Unscored, "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Evaluate(tt.output, tt.exp, extractbench.Transport{FinishReason: "stop"}, Options{})
			if got.Failure != tt.failure || got.Date != tt.date || got.Amount != tt.amount || got.Category != tt.category {
				t.Errorf("got failure %q fields %q/%q/%q (%s), want %q %q/%q/%q",
					got.Failure, got.Date, got.Amount, got.Category, got.FailureDetail,
					tt.failure, tt.date, tt.amount, tt.category)
			}
			if got.Accepted != (tt.failure == extractbench.None) {
				t.Errorf("got Accepted %v with failure %q", got.Accepted, got.Failure)
			}
			if !strings.Contains(got.FailureDetail, tt.detail) {
				t.Errorf("got detail %q, want it to contain %q", got.FailureDetail, tt.detail)
			}
			if tt.failure == extractbench.None && got.FailureDetail != "" {
				t.Errorf("accepted with detail %q", got.FailureDetail)
			}
			if got.Expected != tt.exp {
				t.Errorf("got Expected %+v, want the expectation scored against", got.Expected)
			}
		})
	}
}

func TestEvaluate_StrictAndLenient(t *testing.T) {
	const answer = `{"date":"2025-03-14","amount":1234.56,"category":"software"}`
	tests := []struct {
		name                string
		output              string
		strictOK, lenientOK bool
		strictFail          extractbench.Failure // under the strict rule
		lenientFail         extractbench.Failure // under the lenient rule
	}{
		{"plain", answer, true, true, extractbench.None, extractbench.None},
		{"json fence", "```json\n" + answer + "\n```", false, true, extractbench.Format, extractbench.None},
		{"bare fence", "```\n" + answer + "\n```", false, true, extractbench.Format, extractbench.None},
		{"preamble and epilogue", "Here is the extraction:\n" + answer + "\nHope this helps {really}.", false, true, extractbench.Format, extractbench.None},
		{"brace prose before", "Answer {as asked}: " + answer, false, true, extractbench.Format, extractbench.None},
		{"two objects", answer + "\n" + answer, false, false, extractbench.Format, extractbench.Format},
		{"category case and spaces", `{"date":"2025-03-14","amount":1234.56,"category":"  SOFTWARE "}`, true, true, extractbench.Format, extractbench.None},
		{"duplicate key in fence", "```json\n{\"date\":\"2025-03-14\",\"date\":null,\"amount\":1234.56,\"category\":\"software\"}\n```", false, false, extractbench.Format, extractbench.Format},
		{"no object", "I could not find the values.", false, false, extractbench.Format, extractbench.Format},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Evaluate(tt.output, invoice, extractbench.Transport{}, Options{Rule: extractbench.Strict})
			l := Evaluate(tt.output, invoice, extractbench.Transport{}, Options{Rule: extractbench.Lenient})
			for _, o := range []extractbench.Score{s, l} {
				if o.StrictParseOK != tt.strictOK || o.LenientParseOK != tt.lenientOK {
					t.Errorf("got strict/lenient parse %v/%v, want %v/%v", o.StrictParseOK, o.LenientParseOK, tt.strictOK, tt.lenientOK)
				}
			}
			if s.Failure != tt.strictFail {
				t.Errorf("strict rule: got %q (%s), want %q", s.Failure, s.FailureDetail, tt.strictFail)
			}
			if l.Failure != tt.lenientFail {
				t.Errorf("lenient rule: got %q (%s), want %q", l.Failure, l.FailureDetail, tt.lenientFail)
			}
		})
	}
}

func TestEvaluate_LenientNormalisesCategory(t *testing.T) {
	// "Café" in NFD (e + combining acute) must become NFC before the enum check.
	nfd := "Cafe\u0301"
	exp := corpus.Expected{Date: nil, Amount: nil, Category: ptr("café")}
	out := `{"date":null,"amount":null,"category":" ` + nfd + `\t"}`
	got := Evaluate(out, exp, extractbench.Transport{}, Options{Rule: extractbench.Lenient, Categories: []string{"café", "bar"}, Schema: openSchema(t)})
	if !got.Accepted || got.Prediction.Category == nil || *got.Prediction.Category != "café" {
		t.Fatalf("got %+v, want accepted with category café", got)
	}
	strict := Evaluate(out, exp, extractbench.Transport{}, Options{Rule: extractbench.Strict, Categories: []string{"café", "bar"}, Schema: openSchema(t)})
	if strict.Failure != extractbench.Format {
		t.Errorf("strict rule: got %q, want format", strict.Failure)
	}
}

func TestEvaluate_Prediction(t *testing.T) {
	got := Evaluate(`{"date":"2025-03-14","amount":1234.560,"category":null}`, invoice, extractbench.Transport{}, Options{})
	if got.Prediction.Date == nil || *got.Prediction.Date != "2025-03-14" {
		t.Errorf("got date %v, want 2025-03-14", got.Prediction.Date)
	}
	if got.Prediction.Amount == nil || *got.Prediction.Amount != "1234.560" {
		t.Errorf("got amount %v, want the number as sent, 1234.560", got.Prediction.Amount)
	}
	if got.Prediction.Category != nil {
		t.Errorf("got category %q, want nil", *got.Prediction.Category)
	}
	if !got.SchemaOK || got.Category != extractbench.FN || got.Failure != extractbench.Quality {
		t.Errorf("got schema %v category %q failure %q, want true fn quality", got.SchemaOK, got.Category, got.Failure)
	}
}

// openSchema compiles an extraction schema whose category enum is café and bar.
func openSchema(t *testing.T) *gojsonschema.Schema {
	t.Helper()
	s, err := gojsonschema.NewSchema(gojsonschema.NewStringLoader(`{
		"type": "object", "additionalProperties": false,
		"required": ["date", "amount", "category"],
		"properties": {
			"date": {"type": ["string", "null"], "format": "date"},
			"amount": {"type": ["number", "null"]},
			"category": {"enum": ["café", "bar", null]}
		}}`))
	if err != nil {
		t.Fatalf("compile test schema: %v", err)
	}
	return s
}

func BenchmarkEvaluate(b *testing.B) {
	const out = "```json\n{\"date\":\"2025-03-14\",\"amount\":1234.56,\"category\":\"Software\"}\n```"
	for _, rule := range []extractbench.ParseRule{extractbench.Strict, extractbench.Lenient} {
		b.Run(string(rule), func(b *testing.B) {
			for b.Loop() {
				Evaluate(out, invoice, extractbench.Transport{FinishReason: "stop"}, Options{Rule: rule})
			}
		})
	}
}

func TestEvaluate_UserSchemaConstraint(t *testing.T) {
	// A user schema can be stricter than the field rules: amounts up to 1000.
	s, err := gojsonschema.NewSchema(gojsonschema.NewStringLoader(`{
		"type": "object", "required": ["date", "amount", "category"],
		"properties": {"amount": {"type": ["number", "null"], "maximum": 1000}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := Evaluate(`{"date":"2025-03-14","amount":1234.56,"category":"software"}`, invoice, extractbench.Transport{}, Options{Schema: s})
	if got.Failure != extractbench.Format || got.SchemaOK || !strings.Contains(got.FailureDetail, "schema: amount") {
		t.Errorf("got %q schema %v (%s), want a format failure quoting the schema", got.Failure, got.SchemaOK, got.FailureDetail)
	}
	// The field rules still hold under a lax user schema.
	got = Evaluate(`{"date":"2025-02-30","amount":12,"category":"software"}`, invoice, extractbench.Transport{}, Options{Schema: s})
	if got.Failure != extractbench.Format || !got.SchemaOK {
		t.Errorf("got %q schema %v (%s), want format with the schema passing", got.Failure, got.SchemaOK, got.FailureDetail)
	}
}
