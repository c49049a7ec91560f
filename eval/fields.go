package eval

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/extractbench/extractbench"
	"github.com/shopspring/decimal"
)

// AmountTolerance is how far a predicted amount may be from the expected one
// and still be correct: half a cent, inclusive (MEASUREMENT.md section 7).
var AmountTolerance = decimal.RequireFromString("0.005")

// amountMagnitudeLimit bounds the decimal exponent of amounts the scorer does
// arithmetic on. JSON allows 1e999999999; rescaling that to compare with
// 12.50 would allocate without end. Beyond 10^±40 no invoice lives, so a
// larger number is simply wrong and a smaller one is zero.
const amountMagnitudeLimit = 40

// ParseDate reads a date under the scorer's rule: exactly YYYY-MM-DD, ASCII
// digits, and a real day of the proleptic Gregorian calendar (so 2025-02-30
// and 2025-13-01 are refused, 2024-02-29 is accepted). Year 0000 is allowed,
// as RFC 3339 full-date allows it.
func ParseDate(s string) (year, month, day int, ok bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, 0, 0, false
	}
	num := func(t string) (int, bool) {
		n := 0
		for i := 0; i < len(t); i++ {
			if t[i] < '0' || t[i] > '9' {
				return 0, false
			}
			n = n*10 + int(t[i]-'0')
		}
		return n, true
	}
	y, ok1 := num(s[0:4])
	m, ok2 := num(s[5:7])
	d, ok3 := num(s[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, 0, 0, false
	}
	return y, m, d, true
}

// FormatDate writes a date as YYYY-MM-DD; ParseDate(FormatDate(y, m, d))
// returns y, m, d for every real day with 0 <= y <= 9999.
func FormatDate(year, month, day int) string {
	return fmt.Sprintf("%04d-%02d-%02d", year, month, day)
}

// daysIn returns the number of days of month m in year y (Gregorian rule).
func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// Amount is a predicted amount read as a decimal. Out of range amounts (more
// than 10^40 in magnitude) keep Huge set and Value zero: they are wrong
// against any expectation but still a number.
type Amount struct {
	Value decimal.Decimal
	Huge  bool
}

// ParseAmount reads the text of a JSON number as a decimal, never through
// float64: "1234.560", "1234.56" and "1.23456e3" are the same amount. Text
// that is not a JSON number (RFC 8259 section 6: no leading '+', no leading
// zeros, no bare '.', no hex) is refused.
func ParseAmount(s string) (Amount, error) {
	mag, zero, ok := jsonNumberShape(s)
	if !ok {
		return Amount{}, fmt.Errorf("%q is not a JSON number", s)
	}
	switch {
	case zero || mag < -amountMagnitudeLimit:
		return Amount{Value: decimal.Zero}, nil
	case mag > amountMagnitudeLimit:
		return Amount{Huge: true}, nil
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return Amount{}, fmt.Errorf("read amount %q: %w", s, err)
	}
	return Amount{Value: d}, nil
}

// Close reports whether the amount is within AmountTolerance of want. Sign
// matters: -80.00 is not 80.00.
func (a Amount) Close(want decimal.Decimal) bool {
	if a.Huge {
		return false
	}
	return a.Value.Sub(want).Abs().Cmp(AmountTolerance) <= 0
}

// jsonNumberShape checks the JSON number grammar
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? and returns the decimal
// magnitude of the value (the power of ten of its leading digit, clamped to
// avoid overflow) and whether every digit is zero.
func jsonNumberShape(s string) (mag int, zero, ok bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	intStart := i
	nInt := digits()
	if nInt == 0 || (nInt > 1 && s[intStart] == '0') {
		return 0, false, false
	}
	fracStart, nFrac := i, 0
	if i < len(s) && s[i] == '.' {
		i++
		fracStart = i
		if nFrac = digits(); nFrac == 0 {
			return 0, false, false
		}
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		neg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			neg = s[i] == '-'
			i++
		}
		expStart := i
		if digits() == 0 {
			return 0, false, false
		}
		e, err := strconv.Atoi(s[expStart:i])
		if err != nil || e > 1<<20 {
			e = 1 << 20 // beyond any limit; keeps the sum below from overflowing
		}
		if neg {
			e = -e
		}
		exp = e
	}
	if i != len(s) {
		return 0, false, false
	}
	// The leading non-zero digit fixes the magnitude.
	for k := intStart; k < intStart+nInt; k++ {
		if s[k] != '0' {
			return (intStart + nInt - 1 - k) + exp, false, true
		}
	}
	for k := fracStart; k < fracStart+nFrac; k++ {
		if s[k] != '0' {
			return -(k - fracStart + 1) + exp, false, true
		}
	}
	return 0, true, true
}

// fieldCheck is one field of a parsed object after the field rules: its
// value as text (nil for JSON null) or the problem that makes it a format
// failure.
type fieldCheck struct {
	value   *string
	amount  Amount // the amount, when the field is "amount" and valid
	problem string // "" when the value obeys the rule
}

// checkDate applies the date rule to a decoded value.
func checkDate(v any, present bool) fieldCheck {
	switch d := v.(type) {
	case nil:
		if !present {
			return fieldCheck{problem: "date: key missing (null must be written)"}
		}
		return fieldCheck{}
	case string:
		if _, _, _, ok := ParseDate(d); !ok {
			if len(d) == 10 && d[4] == '-' && d[7] == '-' {
				return fieldCheck{problem: fmt.Sprintf("date: %q is not a calendar day", clip(d))}
			}
			return fieldCheck{problem: fmt.Sprintf("date: %q is not YYYY-MM-DD", clip(d))}
		}
		return fieldCheck{value: &d}
	}
	return fieldCheck{problem: "date: " + jsonKind(v) + ", want a string or null"}
}

// checkAmount applies the amount rule: a JSON number or null; a string that
// looks like a number is still a format failure.
func checkAmount(v any, present bool) fieldCheck {
	switch a := v.(type) {
	case nil:
		if !present {
			return fieldCheck{problem: "amount: key missing (null must be written)"}
		}
		return fieldCheck{}
	case json.Number:
		s := string(a)
		amt, err := ParseAmount(s)
		if err != nil {
			return fieldCheck{problem: "amount: " + err.Error()}
		}
		return fieldCheck{value: &s, amount: amt}
	}
	return fieldCheck{problem: "amount: " + jsonKind(v) + ", want a number or null"}
}

// checkCategory applies the category rule: a string of the enum, or null.
func checkCategory(v any, present bool, enum []string) fieldCheck {
	switch c := v.(type) {
	case nil:
		if !present {
			return fieldCheck{problem: "category: key missing (null must be written)"}
		}
		return fieldCheck{}
	case string:
		if !slices.Contains(enum, c) {
			return fieldCheck{problem: fmt.Sprintf("category: %q is not in the enum", clip(c))}
		}
		return fieldCheck{value: &c}
	}
	return fieldCheck{problem: "category: " + jsonKind(v) + ", want a string or null"}
}

// jsonKind names the JSON type of a decoded value, with the value when short.
func jsonKind(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("a string %q", clip(x))
	case json.Number:
		return "a number " + clip(string(x))
	case bool:
		return fmt.Sprintf("a boolean %t", x)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

// clip shortens s for a FailureDetail, which is read by people, not parsed.
func clip(s string) string {
	const max = 40
	if len(s) <= max {
		return s
	}
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max]) + "…"
}

// judge turns an expectation and a valid prediction into a FieldResult, as
// in MEASUREMENT.md section 7.
func judge(expected, predicted *string, same func() bool) extractbench.FieldResult {
	switch {
	case expected == nil && predicted == nil:
		return extractbench.TN
	case expected == nil:
		return extractbench.FP
	case predicted == nil:
		return extractbench.FN
	case same():
		return extractbench.TP
	}
	return extractbench.FPFN
}
