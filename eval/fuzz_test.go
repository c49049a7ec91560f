package eval

import (
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/shopspring/decimal"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"date":"2025-03-14","amount":1234.56,"category":"software"}`,
		"```json\n{\"date\":null,\"amount\":-80,\"category\":\"Telecom \"}\n```",
		`Here: {"date":"2025-02-30","amount":"1","category":null} and {"x":1}`,
		`{"date":"2025-03-14","date":"2025-03-14"}`,
		`{"a":"}{\"","b":[1,{"c":2}]}`,
		`{"date":"2025-03-14","amount":1e999999999,"category":"software"`,
		"{\"category\":\"\xff\"}",
		``, `{`, `}`, `"`, `[]`,
	} {
		f.Add(s)
	}
	exp := invoice
	f.Fuzz(func(t *testing.T, output string) {
		strict, serr := ParseStrict(output)
		lenient, lerr := ParseLenient(output)
		EndsInsideObject(output)
		if serr == nil {
			if !json.Valid([]byte(output)) {
				t.Fatalf("strict parse accepted invalid JSON %q", output)
			}
			if lerr != nil {
				t.Fatalf("strict parse accepted %q but lenient refused it: %v", output, lerr)
			}
			// Writing the object back and parsing it again gives the same object.
			raw, err := json.Marshal(strict)
			if err != nil {
				t.Fatalf("marshal %v: %v", strict, err)
			}
			again, err := ParseStrict(string(raw))
			if err != nil || !reflect.DeepEqual(again, strict) {
				t.Fatalf("round trip of %q: got %v (%v), want %v", raw, again, err, strict)
			}
		}
		if lerr == nil {
			if c, ok := lenient["category"].(string); ok && c != NormalizeCategory(c) {
				t.Fatalf("lenient category %q is not normalised", c)
			}
		}
		for _, rule := range []extractbench.ParseRule{extractbench.Strict, extractbench.Lenient} {
			o := Evaluate(output, exp, extractbench.Transport{}, Options{Rule: rule})
			if o.Accepted != (o.Failure == extractbench.None) {
				t.Fatalf("%s: accepted %v with failure %q", rule, o.Accepted, o.Failure)
			}
			if o.StrictParseOK != (serr == nil) || o.LenientParseOK != (lerr == nil) {
				t.Fatalf("%s: outcome parse flags %v/%v, parsers say %v/%v", rule, o.StrictParseOK, o.LenientParseOK, serr, lerr)
			}
			if o.Accepted && (o.Prediction.Date == nil || *o.Prediction.Date != *exp.Date) {
				t.Fatalf("%s: accepted %q with date %v", rule, output, o.Prediction.Date)
			}
			if o.Failure == extractbench.None && o.FailureDetail != "" || o.Failure != extractbench.None && o.FailureDetail == "" {
				t.Fatalf("%s: failure %q with detail %q", rule, o.Failure, o.FailureDetail)
			}
		}
	})
}

func FuzzDate(f *testing.F) {
	f.Add("2025-03-14", 2025, 3, 14)
	f.Add("2024-02-29", 2024, 2, 29)
	f.Add("2025-02-30", 1900, 2, 29)
	f.Add("12/03/2025", 0, 13, 0)
	f.Add("0000-01-01", -1, -1, 32)
	f.Fuzz(func(t *testing.T, s string, y, m, d int) {
		py, pm, pd, ok := ParseDate(s)
		_, terr := time.Parse("2006-01-02", s)
		// time.Parse also takes a signed year ("+025"); the scorer does not.
		digitsYear := len(s) == 10 && strings.Trim(s[:4], "0123456789") == ""
		if ok != (terr == nil && digitsYear) {
			t.Fatalf("ParseDate(%q) ok=%v, time.Parse says %v", s, ok, terr)
		}
		if ok && FormatDate(py, pm, pd) != s {
			t.Fatalf("FormatDate(ParseDate(%q)) = %q", s, FormatDate(py, pm, pd))
		}
		// From numbers: a formatted real day parses back to itself.
		y = ((y % 10000) + 10000) % 10000
		txt := FormatDate(y, m, d)
		gy, gm, gd, gok := ParseDate(txt)
		real := m >= 1 && m <= 12 && d >= 1 && d <= time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
		if gok != real {
			t.Fatalf("ParseDate(FormatDate(%d, %d, %d) = %q): ok=%v, want %v", y, m, d, txt, gok, real)
		}
		if gok && (gy != y || gm != m || gd != d) {
			t.Fatalf("ParseDate(%q) = %d-%d-%d, want %d-%d-%d", txt, gy, gm, gd, y, m, d)
		}
	})
}

// jsonNumber is the JSON number grammar of RFC 8259 section 6, written as a
// regular expression: an implementation independent of jsonNumberShape.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

func FuzzAmount(f *testing.F) {
	for _, s := range []string{"1234.56", "1234.560", "1e3", "-0.004", "-0", "01", "1.", ".5", "+1", "1e-41", "9e999999999", "0.000"} {
		f.Add(s, int64(123456), int32(-2))
	}
	f.Fuzz(func(t *testing.T, s string, coef int64, exp int32) {
		a, err := ParseAmount(s)
		if (err == nil) != jsonNumber.MatchString(s) {
			t.Fatalf("ParseAmount(%q) error %v, grammar match %v", s, err, jsonNumber.MatchString(s))
		}
		if err == nil && !a.Huge {
			back, err := ParseAmount(a.Value.String())
			if err != nil || !back.Value.Equal(a.Value) {
				t.Fatalf("ParseAmount(%q) = %v, which reads back as %v (%v)", s, a.Value, back.Value, err)
			}
			// In range, the value is exactly the number the text writes,
			// checked with math/big, which shares no code with decimal.
			if a.Value.Sign() != 0 {
				want, ok := new(big.Rat).SetString(s)
				if !ok || a.Value.Rat().Cmp(want) != 0 {
					t.Fatalf("ParseAmount(%q) = %v, want %v", s, a.Value, want)
				}
			}
		}
		// From a decimal: its text reads back as the same decimal.
		d := decimal.New(coef, exp%20) // at most 19 digits and 10^19: in range
		got, err := ParseAmount(jsonText(d))
		if err != nil || got.Huge || !got.Value.Equal(d) {
			t.Fatalf("ParseAmount(%q) = %v (huge %v, %v), want %v", jsonText(d), got.Value, got.Huge, err, d)
		}
		if !got.Close(d) || got.Close(d.Add(decimal.RequireFromString("0.0051"))) {
			t.Fatalf("Close around %v is wrong", d)
		}
	})
}

// jsonText writes a decimal the way a JSON encoder would: plain digits.
func jsonText(d decimal.Decimal) string { return d.String() }

// FuzzParseLenient checks the linear lenient search against the reference
// (the candidate-by-candidate scan it replaced) on inputs small enough for
// the reference, and that it is deterministic on any input.
func FuzzParseLenient(f *testing.F) {
	for _, s := range []string{
		`{"k":"v"}`, "```json\n{\"k\":\"v\"}\n```", `{not json} then {"k":"v"}`, `{"k":"v"} {"k":"w"}`,
		`{"a":"}{\""}`, `"{"}`, `\"{"}"}`, `{"a":"\\"}"}`, `{{{`, `{}{}`, "{\"a\":\"\xff\"} {\"b\":1}",
		noisyOutput(300),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, output string) {
		a, aerr := ParseLenient(output)
		b, berr := ParseLenient(output)
		if fmt.Sprint(aerr) != fmt.Sprint(berr) || !reflect.DeepEqual(a, b) {
			t.Fatalf("ParseLenient(%q) gave %v, %v then %v, %v", output, a, aerr, b, berr)
		}
		if len(output) <= 4096 {
			agreeWithReference(t, output)
		}
	})
}
