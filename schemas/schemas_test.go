package schemas

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/xeipuuv/gojsonschema"
)

func TestEmbedded_Compile(t *testing.T) {
	entries, err := files.ReadDir(".")
	if err != nil {
		t.Fatalf("list embedded schemas: %v", err)
	}
	if len(entries) < 3 {
		t.Fatalf("got %d embedded schemas, want at least 3", len(entries))
	}
	for _, e := range entries {
		t.Run(e.Name(), func(t *testing.T) {
			raw := Raw(e.Name())
			if !json.Valid(raw) {
				t.Fatalf("%s is not valid JSON", e.Name())
			}
			if _, err := gojsonschema.NewSchema(gojsonschema.NewBytesLoader(raw)); err != nil {
				t.Fatalf("compile %s: %v", e.Name(), err)
			}
		})
	}
	for name, get := range map[string]func() *gojsonschema.Schema{
		ExtractionFile: Extraction, CorpusRecordFile: CorpusRecord, ProtocolFile: Protocol,
	} {
		if get() == nil {
			t.Errorf("%s: got a nil compiled schema", name)
		}
	}
}

// TestExtraction_DateFormat records what gojsonschema v1.2.0 does with
// "format": "date": it enforces it, through time.Parse("2006-01-02"), which
// refuses days that do not exist. The evaluator checks dates itself anyway
// (eval.ParseDate), so that a user schema without the format is no weaker.
func TestExtraction_DateFormat(t *testing.T) {
	tests := []struct {
		date  string
		valid bool
	}{
		{"2025-03-14", true},
		{"2024-02-29", true},
		{"2025-02-30", false}, // no such day
		{"2025-02-29", false}, // 2025 is not a leap year
		{"2025-13-01", false}, // no such month
		{"2025-00-10", false},
		{"12/03/2025", false}, // another format
		{"2025-3-14", false},
		{"2025-03-14T00:00:00Z", false},
	}
	for _, tt := range tests {
		t.Run(tt.date, func(t *testing.T) {
			doc := `{"date":"` + tt.date + `","amount":1,"category":"software"}`
			got := Validate(Extraction(), doc)
			if (got == nil) != tt.valid {
				t.Errorf("got violations %q, want valid=%v", got, tt.valid)
			}
		})
	}

	// The format check alone, without the schema's pattern: is it the format
	// or the pattern that refuses 2025-02-30?
	formatOnly, err := gojsonschema.NewSchema(gojsonschema.NewStringLoader(`{"type":"string","format":"date"}`))
	if err != nil {
		t.Fatalf("compile format-only schema: %v", err)
	}
	for _, d := range []string{"2025-02-30", "2025-13-01", "12/03/2025"} {
		res, err := formatOnly.Validate(gojsonschema.NewGoLoader(d))
		if err != nil {
			t.Fatalf("validate %s: %v", d, err)
		}
		if res.Valid() {
			t.Errorf("format date accepted %s: gojsonschema does not enforce it", d)
		}
	}
}

func TestExtraction_Rules(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string // a fragment of the violations; "" means valid
	}{
		{"all null", `{"date":null,"amount":null,"category":null}`, ""},
		{"negative amount", `{"date":null,"amount":-80.5,"category":"telecom"}`, ""},
		{"missing key", `{"date":null,"amount":null}`, "category"},
		{"extra key", `{"date":null,"amount":null,"category":null,"x":1}`, "Additional property x"},
		{"amount string", `{"date":null,"amount":"12.50","category":null}`, "amount"},
		{"category outside enum", `{"date":null,"amount":null,"category":"Software"}`, "category"},
		{"not an object", `[1]`, "(root)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Validate(Extraction(), tt.doc)
			if tt.want == "" {
				if got != nil {
					t.Errorf("got violations %q, want none", got)
				}
				return
			}
			if !strings.Contains(strings.Join(got, "\n"), tt.want) {
				t.Errorf("got violations %q, want one mentioning %q", got, tt.want)
			}
		})
	}
}
