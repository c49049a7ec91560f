package eval

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/extractbench/extractbench"
	"github.com/shopspring/decimal"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// The rules of declared fields (docs/fields.md): how one value of a
// field's type is read, from the corpus's expectation or from an answer,
// and when two values are the same. ScoreField (fieldscore.go) puts
// them together.

// DefaultDateFormat is the answer layout of a date field that states none.
const DefaultDateFormat = "YYYY-MM-DD"

// DefaultAbsTolerance is a decimal field's tolerance when it states
// neither abs_tolerance nor rel_tolerance: half a cent, as the default
// amount's (AmountTolerance).
const DefaultAbsTolerance = "0.005"

// day is a date field's value.
type day struct{ y, m, d int }

func (d day) String() string { return FormatDate(d.y, d.m, d.d) }

// readValue reads v, a decoded JSON value that is not null, under f's
// scalar rule. answer says whether v is the engine's (a date in one of
// f's formats) or the corpus's (a date written YYYY-MM-DD). The value
// is a string, day, Amount or bool; problem says why v breaks the rule.
func readValue(f extractbench.Field, v any, answer bool) (val any, problem string) {
	switch f.Type {
	case extractbench.FieldString, extractbench.FieldEnum:
		s, ok := v.(string)
		if !ok {
			return nil, jsonKind(v) + ", want a string"
		}
		return s, ""
	case extractbench.FieldDate:
		s, ok := v.(string)
		if !ok {
			return nil, jsonKind(v) + ", want a date string"
		}
		formats := []string{DefaultDateFormat}
		if answer && len(f.Formats) > 0 {
			formats = f.Formats
		}
		for _, layout := range formats {
			if y, m, d, ok := ParseDateLayout(layout, s); ok {
				return day{y, m, d}, ""
			}
		}
		return nil, fmt.Sprintf("%q is not a real day written %s", clip(s), strings.Join(formats, " or "))
	case extractbench.FieldDecimal:
		return readDecimal(f, v)
	case extractbench.FieldInteger:
		var a Amount
		switch x := v.(type) {
		case json.Number, float64:
			var err error
			if a, err = ParseAmount(numberString(x)); err != nil {
				return nil, err.Error()
			}
		default:
			return nil, jsonKind(v) + ", want a whole number"
		}
		if !a.Huge && !a.Value.IsInteger() {
			return nil, fmt.Sprintf("%s is not a whole number", clip(numberString(v)))
		}
		return a, ""
	case extractbench.FieldBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, jsonKind(v) + ", want true or false"
		}
		return b, ""
	}
	return nil, fmt.Sprintf("no scalar rule for type %q", f.Type)
}

// readDecimal reads a decimal: a JSON number, or a string in the field's
// locale. Both are bounded as amounts are (amountMagnitudeLimit), so that
// 1e999999999 is a wrong value, not an endless allocation.
func readDecimal(f extractbench.Field, v any) (Amount, string) {
	switch x := v.(type) {
	case json.Number, float64:
		a, err := ParseAmount(numberString(x))
		if err != nil {
			return Amount{}, err.Error()
		}
		return a, ""
	case string:
		plain, ok := f.DecimalText(x)
		if !ok {
			locale := f.Locale
			if locale == "" {
				locale = extractbench.LocaleEN
			}
			return Amount{}, fmt.Sprintf("%q is not a decimal in the %s form", clip(x), locale)
		}
		a, err := ParseAmount(jsonNumberText(plain))
		if err != nil {
			return Amount{}, err.Error()
		}
		return a, ""
	}
	return Amount{}, jsonKind(v) + ", want a number or a decimal string"
}

// numberString is the text of a decoded JSON number; "" for a
// non-finite float, which ParseAmount refuses.
func numberString(v any) string {
	switch x := v.(type) {
	case json.Number:
		return string(x)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return ""
}

// jsonNumberText turns a plain decimal (DecimalText's: -?[0-9]+(\.[0-9]+)?)
// into a JSON number by dropping its integer part's leading zeros.
func jsonNumberText(plain string) string {
	sign := ""
	if strings.HasPrefix(plain, "-") {
		sign, plain = "-", plain[1:]
	}
	intPart, frac, hasFrac := strings.Cut(plain, ".")
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	if hasFrac {
		return sign + intPart + "." + frac
	}
	return sign + intPart
}

// sameValue reports whether two values read by readValue are the same
// under f's rule: a string exact or normalised, a date the same day, a
// decimal within tolerance, an integer or boolean equal.
func sameValue(f extractbench.Field, want, got any) bool {
	switch w := want.(type) {
	case string:
		g := got.(string)
		if f.Type == extractbench.FieldString && f.Match == extractbench.MatchNormalised {
			return NormaliseString(w, f.Normalise) == NormaliseString(g, f.Normalise)
		}
		return w == g
	case day, bool:
		return want == got
	case Amount:
		g := got.(Amount)
		if w.Huge || g.Huge {
			return false
		}
		if f.Type == extractbench.FieldInteger {
			return w.Value.Equal(g.Value)
		}
		return withinTolerance(f, w.Value, g.Value)
	}
	return false
}

// withinTolerance: |got-want| <= abs_tolerance, or <= rel_tolerance*|want|;
// either suffices. With neither stated, DefaultAbsTolerance.
func withinTolerance(f extractbench.Field, want, got decimal.Decimal) bool {
	return got.Sub(want).Abs().Cmp(tolerance(f, want)) <= 0
}

// tolerance is how far an answer may be from want: the larger of the
// field's absolute tolerance and its relative one times |want|.
func tolerance(f extractbench.Field, want decimal.Decimal) decimal.Decimal {
	abs, rel := f.AbsTolerance, f.RelTolerance
	if abs == "" && rel == "" {
		abs = DefaultAbsTolerance
	}
	t := decimal.Zero
	if a, err := decimal.NewFromString(abs); abs != "" && err == nil {
		t = a
	}
	if r, err := decimal.NewFromString(rel); rel != "" && err == nil {
		t = decimal.Max(t, r.Mul(want.Abs()))
	}
	return t
}

// valueKey is a value's identity under f's rule when the rule is an
// equivalence (every type but a decimal with a tolerance): lists are
// matched as multisets of keys then.
func valueKey(f extractbench.Field, v any) (string, bool) {
	switch x := v.(type) {
	case string:
		if f.Type == extractbench.FieldString && f.Match == extractbench.MatchNormalised {
			return NormaliseString(x, f.Normalise), true
		}
		return x, true
	case day:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	case Amount:
		if f.Type == extractbench.FieldInteger && !x.Huge {
			return x.Value.String(), true
		}
	}
	return "", false
}

// showValue writes a value read by readValue for a reason.
func showValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(clip(x))
	case Amount:
		if x.Huge {
			return "a number beyond 10^40"
		}
		return clip(x.Value.String())
	}
	return fmt.Sprint(v)
}

// NormaliseString applies a normalised string match's steps (all of
// extractbench.NormaliseSteps when steps is empty) to s. The text is first
// put in NFC, so that canonically equivalent strings (an "é" written as
// one code point or as "e" and a combining accent) are the same under any
// steps; then case is folded, accents dropped (NFD, marks removed),
// punctuation (Unicode P*) dropped, and whitespace collapsed and trimmed
// last, so that "a - b" and "a b" agree.
func NormaliseString(s string, steps []string) string {
	if len(steps) == 0 {
		steps = extractbench.NormaliseSteps
	}
	s = norm.NFC.String(s)
	if slices.Contains(steps, "case") {
		s = cases.Fold().String(s)
	}
	if slices.Contains(steps, "accents") {
		s = norm.NFC.String(strings.Map(func(r rune) rune {
			if unicode.Is(unicode.Mn, r) {
				return -1
			}
			return r
		}, norm.NFD.String(s)))
	}
	if slices.Contains(steps, "punctuation") {
		s = strings.Map(func(r rune) rune {
			if unicode.IsPunct(r) {
				return -1
			}
			return r
		}, s)
	}
	if slices.Contains(steps, "whitespace") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}

// ParseDateLayout reads s as a date written in layout, whose tokens YYYY,
// MM and DD stand for the year, month and day in ASCII digits, and every
// other character stands for itself ("DD/MM/YYYY" reads 31/12/2025). The
// day must be real (ParseDate's rule).
func ParseDateLayout(layout, s string) (year, month, day int, ok bool) {
	rest := s
	year, month, day = -1, -1, -1
	for _, tok := range dateLayoutTokens(layout) {
		width := map[string]int{"YYYY": 4, "MM": 2, "DD": 2}[tok]
		if width == 0 {
			if !strings.HasPrefix(rest, tok) {
				return 0, 0, 0, false
			}
			rest = rest[len(tok):]
			continue
		}
		if len(rest) < width {
			return 0, 0, 0, false
		}
		n := 0
		for i := 0; i < width; i++ {
			if rest[i] < '0' || rest[i] > '9' {
				return 0, 0, 0, false
			}
			n = n*10 + int(rest[i]-'0')
		}
		rest = rest[width:]
		switch tok {
		case "YYYY":
			year = n
		case "MM":
			month = n
		case "DD":
			day = n
		}
	}
	if rest != "" || year < 0 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return 0, 0, 0, false
	}
	return year, month, day, true
}

// CheckDateLayout says why layout cannot be a date field's format: it
// must hold each of YYYY, MM and DD exactly once.
func CheckDateLayout(layout string) error {
	count := map[string]int{}
	for _, tok := range dateLayoutTokens(layout) {
		count[tok]++
	}
	for _, tok := range []string{"YYYY", "MM", "DD"} {
		if count[tok] != 1 {
			return fmt.Errorf("layout %q must hold %s exactly once (tokens YYYY, MM, DD; anything else is literal, e.g. DD/MM/YYYY)", layout, tok)
		}
	}
	return nil
}

// dateLayoutTokens splits a layout into its tokens (YYYY, MM, DD) and the
// literal runs between them.
func dateLayoutTokens(layout string) []string {
	var out []string
	lit := 0
	for i := 0; i < len(layout); {
		tok := ""
		for _, t := range []string{"YYYY", "MM", "DD"} {
			if strings.HasPrefix(layout[i:], t) {
				tok = t
				break
			}
		}
		if tok == "" {
			i++
			continue
		}
		if lit < i {
			out = append(out, layout[lit:i])
		}
		out = append(out, tok)
		i += len(tok)
		lit = i
	}
	if lit < len(layout) {
		out = append(out, layout[lit:])
	}
	return out
}
