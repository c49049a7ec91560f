package extractbench

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// CheckExpectation says why v, a decoded JSON value (encoding/json's any,
// numbers as float64 or json.Number), cannot be f's expected value in a
// corpus; nil when it can. Expectations are written canonically: a date as
// YYYY-MM-DD (Formats are what an answer may use), a decimal as a JSON
// number or a string in the field's Locale, an integer as a whole number.
func (f Field) CheckExpectation(v any) error {
	if v == nil {
		if f.Required {
			return fmt.Errorf("null, but the field is required (every document has a value)")
		}
		return nil
	}
	switch f.Type {
	case FieldString:
		if _, ok := v.(string); !ok {
			return fmt.Errorf("want a string, got %s", jsonKind(v))
		}
	case FieldEnum:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("want one of %s, got %s", strings.Join(f.Values, ", "), jsonKind(v))
		}
		if !slices.Contains(f.Values, s) {
			return fmt.Errorf("%q is not one of the field's values (%s)", s, strings.Join(f.Values, ", "))
		}
	case FieldDate:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("want a date string YYYY-MM-DD, got %s", jsonKind(v))
		}
		if _, err := time.Parse(time.DateOnly, s); err != nil || len(s) != len(time.DateOnly) {
			return fmt.Errorf("%q is not a real day written YYYY-MM-DD", s)
		}
	case FieldDecimal:
		switch x := v.(type) {
		case float64, json.Number:
			if _, ok := numberText(x); !ok {
				return fmt.Errorf("%v is not a finite number", x)
			}
		case string:
			if _, ok := f.DecimalText(x); !ok {
				return fmt.Errorf("%q is not a decimal in the %s form (%s)", x, f.locale(), localeExample(f.locale()))
			}
		default:
			return fmt.Errorf("want a number or a decimal string, got %s", jsonKind(v))
		}
	case FieldInteger:
		t, ok := numberText(v)
		if !ok {
			return fmt.Errorf("want a whole number, got %s", jsonKind(v))
		}
		if !wholeNumber.MatchString(t) {
			return fmt.Errorf("%s is not a whole number", t)
		}
	case FieldBoolean:
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("want true or false, got %s", jsonKind(v))
		}
	case FieldList:
		items, ok := v.([]any)
		if !ok {
			return fmt.Errorf("want a list, got %s", jsonKind(v))
		}
		if f.Items == nil {
			return fmt.Errorf("the list field declares no items rule")
		}
		item := *f.Items
		item.Required = true // an item of a list is a value, never null
		for i, x := range items {
			if err := item.CheckExpectation(x); err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
		}
	default:
		return fmt.Errorf("unknown field type %q", f.Type)
	}
	return nil
}

// DecimalText reads s, a decimal written in the field's Locale, and
// returns it plain: an optional minus, digits, an optional point and digits
// ("1.234,56" under LocalePT is "1234.56"). Thousands separators must group
// by three; under LocalePT a point is always one ("1.234" is 1234), so a
// string "12.5" is refused rather than guessed.
func (f Field) DecimalText(s string) (string, bool) {
	s = strings.TrimSpace(s)
	group, point, re := ",", ".", groupedEN
	if f.locale() == LocalePT {
		group, point, re = ".", ",", groupedPT
	}
	if !re.MatchString(s) {
		return "", false
	}
	s = strings.ReplaceAll(s, group, "")
	return strings.Replace(s, point, ".", 1), true
}

func (f Field) locale() string {
	if f.Locale == "" {
		return LocaleEN
	}
	return f.Locale
}

func localeExample(locale string) string {
	if locale == LocalePT {
		return "1.234,56 or 1234,56"
	}
	return "1,234.56 or 1234.56"
}

var (
	groupedEN   = regexp.MustCompile(`^-?([0-9]{1,3}(,[0-9]{3})+|[0-9]+)(\.[0-9]+)?$`)
	groupedPT   = regexp.MustCompile(`^-?([0-9]{1,3}(\.[0-9]{3})+|[0-9]+)(,[0-9]+)?$`)
	wholeNumber = regexp.MustCompile(`^-?[0-9]+$`)
)

// numberText is a JSON number's text; false for a non-number or a
// non-finite float.
func numberText(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		return x.String(), true
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return "", false
		}
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}

// jsonKind names the JSON kind of a decoded value, for messages.
func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	case float64, json.Number:
		return fmt.Sprintf("the number %v", x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
