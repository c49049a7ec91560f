package extractbench

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestField_CheckExpectation(t *testing.T) {
	decimalPT := Field{Name: "total", Type: FieldDecimal, Locale: LocalePT}
	decimalEN := Field{Name: "total", Type: FieldDecimal}
	lines := Field{Name: "lines", Type: FieldList, Items: &Field{Type: FieldInteger}}
	for _, tc := range []struct {
		f    Field
		json string
		want string // "" for accepted, else a part of the error
	}{
		{Field{Type: FieldString}, `"ABC-1"`, ""},
		{Field{Type: FieldString}, `12`, "want a string"},
		{Field{Type: FieldString}, `null`, ""},
		{Field{Type: FieldString, Required: true}, `null`, "required"},
		{Field{Type: FieldEnum, Values: []string{"EUR", "BRL"}}, `"BRL"`, ""},
		{Field{Type: FieldEnum, Values: []string{"EUR", "BRL"}}, `"USD"`, "not one of"},
		{Field{Type: FieldDate}, `"2024-02-29"`, ""},
		{Field{Type: FieldDate}, `"2025-02-29"`, "not a real day"},
		{Field{Type: FieldDate}, `"29/02/2024"`, "not a real day"},
		{Field{Type: FieldDate}, `"2024-2-9"`, "not a real day"},
		{decimalEN, `1234.5`, ""},
		{decimalEN, `"1,234.56"`, ""},
		{decimalEN, `"1.234,56"`, "not a decimal in the en form"},
		{decimalPT, `"1.234,56"`, ""},
		{decimalPT, `"1234,56"`, ""},
		{decimalPT, `"12,34,5"`, "not a decimal in the pt form"},
		{decimalEN, `true`, "want a number"},
		{Field{Type: FieldInteger}, `42`, ""},
		{Field{Type: FieldInteger}, `4.5`, "not a whole number"},
		{Field{Type: FieldInteger}, `"42"`, "want a whole number"},
		{Field{Type: FieldBoolean}, `false`, ""},
		{Field{Type: FieldBoolean}, `"yes"`, "want true or false"},
		{lines, `[]`, ""},
		{lines, `[1, 2]`, ""},
		{lines, `[1, null]`, "item 1: null"},
		{lines, `[1, "x"]`, "item 1: want a whole number"},
		{Field{Type: FieldList}, `[]`, "no items rule"},
		{Field{Type: "money"}, `1`, "unknown field type"},
	} {
		for _, useNumber := range []bool{false, true} {
			d := json.NewDecoder(strings.NewReader(tc.json))
			if useNumber {
				d.UseNumber()
			}
			var v any
			if err := d.Decode(&v); err != nil {
				t.Fatal(err)
			}
			err := tc.f.CheckExpectation(v)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s %s (UseNumber %t): %v, want accepted", tc.f.Type, tc.json, useNumber, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%s %s (UseNumber %t): %v, want an error with %q", tc.f.Type, tc.json, useNumber, err, tc.want)
			}
		}
	}
}

func TestField_DecimalText(t *testing.T) {
	for _, tc := range []struct {
		locale, in, want string
	}{
		{"", "1,234.56", "1234.56"},
		{"", "-7", "-7"},
		{LocalePT, "1.234.567,8", "1234567.8"},
		{LocalePT, "0,05", "0.05"},
		{LocalePT, "12.5", ""}, // a pt grouping must be by three
	} {
		got, ok := Field{Type: FieldDecimal, Locale: tc.locale}.DecimalText(tc.in)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("DecimalText(%q, %q) = %q, %t; want %q", tc.locale, tc.in, got, ok, tc.want)
		}
	}
}
