package eval

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseStrict(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		ok    bool
		error string
	}{
		{"object", `{"a":1}`, true, ""},
		{"whitespace around", "\r\n\t {\"a\":1} \n", true, ""},
		{"empty object", `{}`, true, ""},
		{"nested duplicate", `{"a":{"b":1,"b":2}}`, false, `duplicate key "b"`},
		{"escaped duplicate", `{"date":1,"d\u0061te":2}`, false, `duplicate key "date"`},
		{"trailing text", `{"a":1} ok`, false, ""},
		{"two objects", `{"a":1}{"a":2}`, false, "text after"},
		{"trailing comma", `{"a":1,}`, false, "invalid JSON"},
		{"no-break space", "\u00a0{\"a\":1}", false, ""},
		{"string", `"a"`, false, "no JSON object"},
		{"too deep", strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40), false, "nested deeper"},
		{"cut", `{"a":`, false, "invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseStrict(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("got error %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), tt.error) {
				t.Errorf("got error %q, want it to contain %q", err, tt.error)
			}
		})
	}
}

func TestParseStrict_NumbersStayDecimal(t *testing.T) {
	obj, err := ParseStrict(`{"amount":12345678901234567890.123456789}`)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := obj["amount"].(json.Number)
	if !ok || string(got) != "12345678901234567890.123456789" {
		t.Errorf("got %#v, want the json.Number with every digit", obj["amount"])
	}
}

func TestParseLenient(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // the "k" value found; "" means the parse fails
	}{
		{"strict", `{"k":"v"}`, "v"},
		{"json fence", "```json\n{\"k\":\"v\"}\n```", "v"},
		{"JSON fence upper", "```JSON\n{\"k\":\"v\"}\n```", "v"},
		{"prose", `Sure! {"k":"v"} Anything else?`, "v"},
		{"braces in strings", `{"k":"v}{"}`, "v}{"},
		{"prose brace first", `{not json} then {"k":"v"}`, "v"},
		{"nested object is one object", `x {"k":"v","n":{"a":1}} y`, "v"},
		{"two objects", `{"k":"v"} {"k":"w"}`, ""},
		{"none", `nothing here`, ""},
		{"cut", `{"k":"v`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, err := ParseLenient(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("got %v, want an error", obj)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want k=%q", err, tt.want)
			}
			if got := obj["k"]; got != tt.want {
				t.Errorf("got k=%v, want %q", got, tt.want)
			}
		})
	}
}

func TestNormalizeCategory(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Software", "software"},
		{"  TRAVEL\n", "travel"},
		{"Cafe\u0301", "caf\u00e9"}, // NFD to NFC
		{"office_supplies", "office_supplies"},
	}
	for _, tt := range tests {
		if got := NormalizeCategory(tt.in); got != tt.want {
			t.Errorf("NormalizeCategory(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEndsInsideObject(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`{"date":"2025-`, true},
		{"```json\n{\"date\":", true},
		{`{"a":"}"`, true}, // the brace is inside a string
		{`{"a":1}`, false},
		{`{"a":1} and {"b":`, true},
		{`no json`, false},
		{``, false},
	}
	for _, tt := range tests {
		if got := EndsInsideObject(tt.in); got != tt.want {
			t.Errorf("EndsInsideObject(%q): got %v, want %v", tt.in, got, tt.want)
		}
	}
}
