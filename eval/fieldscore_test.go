package eval

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

// decode reads a JSON literal as scoring sees it (numbers as json.Number);
// "" is an absent key.
func decode(t *testing.T, s string) (any, bool) {
	t.Helper()
	if s == "" {
		return nil, false
	}
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v, true
}

// fieldCase is one field scored: the expectation and the answer as JSON
// ("" for an absent key), the result and F1 counts wanted, and a
// fragment of the reason.
type fieldCase struct {
	name       string
	want, got  string
	result     extractbench.FieldResult
	tp, fp, fn int
	reason     string
}

func runFieldCases(t *testing.T, f extractbench.Field, cases []fieldCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			want, _ := decode(t, tt.want)
			got, present := decode(t, tt.got)
			s := ScoreField(f, want, got, present)
			if s.Result != tt.result || s.TP != tt.tp || s.FP != tt.fp || s.FN != tt.fn {
				t.Errorf("%s vs %s: result %q tp/fp/fn %d/%d/%d (reason %q), want %q %d/%d/%d",
					tt.got, tt.want, s.Result, s.TP, s.FP, s.FN, s.Reason, tt.result, tt.tp, tt.fp, tt.fn)
			}
			if !strings.Contains(s.Reason, tt.reason) || (s.Correct() && s.Reason != "") {
				t.Errorf("reason %q, want %q", s.Reason, tt.reason)
			}
			wantGot := ""
			if present {
				wantGot = compactJSON(got)
			}
			if s.Name != f.Name || s.Expected != compactJSON(want) || s.Got != wantGot {
				t.Errorf("name/expected/got = %q %q %q, want %q %q %q", s.Name, s.Expected, s.Got, f.Name, tt.want, tt.got)
			}
		})
	}
}

const (
	tp   = extractbench.TP
	fpfn = extractbench.FPFN
	fn   = extractbench.FN
	fp   = extractbench.FP
	tn   = extractbench.TN
	none = extractbench.Unscored
)

func TestScoreField_Decimal(t *testing.T) {
	en := extractbench.Field{Name: "total", Type: extractbench.FieldDecimal}
	runFieldCases(t, en, []fieldCase{
		{"same number", `1234.56`, `1234.56`, tp, 1, 0, 0, ""},
		{"trailing zeros and exponent", `1234.56`, `1.23456e3`, tp, 1, 0, 0, ""},
		{"within the default half cent", `1234.56`, `1234.565`, tp, 1, 0, 0, ""},
		{"beyond it", `1234.56`, `1234.5651`, fpfn, 0, 1, 1, "got 1234.5651, want 1234.56"},
		{"en string answer", `1234.56`, `"1,234.56"`, tp, 1, 0, 0, ""},
		{"en string expectation", `"1,234.56"`, `1234.56`, tp, 1, 0, 0, ""},
		{"pt string in an en field", `1234.56`, `"1.234,56"`, none, 0, 0, 1, `"1.234,56" is not a decimal in the en form`},
		{"leading zeros in a string", `12.5`, `"0012.50"`, tp, 1, 0, 0, ""},
		{"sign matters", `-80`, `80`, fpfn, 0, 1, 1, ""},
		{"huge exponent is wrong, not endless", `1`, `9e999999999`, fpfn, 0, 1, 1, "beyond 10^40"},
		{"tiny exponent is zero", `0`, `1e-999999999`, tp, 1, 0, 0, ""},
		{"huge expectation matches nothing", `1e999999999`, `1e999999999`, fpfn, 0, 1, 1, ""},
		{"a boolean", `1`, `true`, none, 0, 0, 1, "a boolean true, want a number"},
		{"null answer", `1`, `null`, fn, 0, 0, 1, "no value"},
		{"absent key", `1`, ``, fn, 0, 0, 1, "key missing"},
		{"null expectation, null answer", `null`, `null`, tn, 0, 0, 0, ""},
		{"null expectation, absent answer", `null`, ``, tn, 0, 0, 0, ""},
		{"null expectation, a value", `null`, `0`, fp, 0, 1, 0, "a value where none is expected"},
		{"null expectation, a broken value", `null`, `"x"`, none, 0, 0, 0, "not a decimal"},
	})
	pt := extractbench.Field{Name: "total", Type: extractbench.FieldDecimal, Locale: extractbench.LocalePT}
	runFieldCases(t, pt, []fieldCase{
		{"pt grouped", `"1.234,56"`, `"1.234,56"`, tp, 1, 0, 0, ""},
		{"pt string vs number", `"1.234,56"`, `1234.56`, tp, 1, 0, 0, ""},
		{"pt point always groups", `1234`, `"1.234"`, tp, 1, 0, 0, ""},
		{"pt 12.5 refused, not guessed", `12.5`, `"12.5"`, none, 0, 0, 1, "not a decimal in the pt form"},
		{"pt comma decimal", `12.5`, `"12,50"`, tp, 1, 0, 0, ""},
		{"en form in a pt field", `1234.56`, `"1,234.56"`, none, 0, 0, 1, "pt form"},
	})
	abs := extractbench.Field{Name: "total", Type: extractbench.FieldDecimal, AbsTolerance: "1"}
	runFieldCases(t, abs, []fieldCase{
		{"within abs 1", `100`, `101`, tp, 1, 0, 0, ""},
		{"beyond abs 1", `100`, `101.01`, fpfn, 0, 1, 1, ""},
	})
	rel := extractbench.Field{Name: "total", Type: extractbench.FieldDecimal, RelTolerance: "0.01"}
	runFieldCases(t, rel, []fieldCase{
		{"within 1%", `-200`, `-198`, tp, 1, 0, 0, ""},
		{"beyond 1%", `-200`, `-197.99`, fpfn, 0, 1, 1, ""},
		{"no default abs beside rel", `0`, `0.001`, fpfn, 0, 1, 1, ""},
	})
	exact := extractbench.Field{Name: "total", Type: extractbench.FieldDecimal, AbsTolerance: "0"}
	runFieldCases(t, exact, []fieldCase{
		{"exact arithmetic, no float error", `0.3`, `0.30000000000000000001`, fpfn, 0, 1, 1, ""},
		{"equal in decimal though not in float", `0.3`, `0.3000`, tp, 1, 0, 0, ""},
	})
	// A float64 (a test or a caller that decodes without UseNumber) is read too.
	if s := ScoreField(en, 1234.56, 1234.56, true); s.Result != tp {
		t.Errorf("float64 expectation and answer: %+v", s)
	}
}

func TestScoreField_Date(t *testing.T) {
	iso := extractbench.Field{Name: "d", Type: extractbench.FieldDate}
	runFieldCases(t, iso, []fieldCase{
		{"same day", `"2025-03-14"`, `"2025-03-14"`, tp, 1, 0, 0, ""},
		{"another day", `"2025-03-14"`, `"2025-03-15"`, fpfn, 0, 1, 1, "got 2025-03-15, want 2025-03-14"},
		{"not a calendar day", `"2025-03-14"`, `"2025-02-30"`, none, 0, 0, 1, "is not a real day written YYYY-MM-DD"},
		{"another format than stated", `"2025-03-14"`, `"14/03/2025"`, none, 0, 0, 1, "YYYY-MM-DD"},
		{"leap day", `"2024-02-29"`, `"2024-02-29"`, tp, 1, 0, 0, ""},
		{"not a leap year", `"2025-02-28"`, `"2025-02-29"`, none, 0, 0, 1, ""},
		{"a number", `"2025-03-14"`, `20250314`, none, 0, 0, 1, "want a date string"},
		{"trailing text", `"2025-03-14"`, `"2025-03-14T00:00"`, none, 0, 0, 1, ""},
	})
	eu := extractbench.Field{Name: "d", Type: extractbench.FieldDate, Formats: []string{"DD/MM/YYYY", "DD.MM.YYYY", "YYYY-MM-DD"}}
	runFieldCases(t, eu, []fieldCase{
		{"DD/MM/YYYY", `"2025-03-14"`, `"14/03/2025"`, tp, 1, 0, 0, ""},
		{"DD.MM.YYYY", `"2025-03-14"`, `"14.03.2025"`, tp, 1, 0, 0, ""},
		{"ISO still stated", `"2025-03-14"`, `"2025-03-14"`, tp, 1, 0, 0, ""},
		{"day and month swapped is another day", `"2025-03-04"`, `"03/04/2025"`, fpfn, 0, 1, 1, "got 2025-04-03"},
		{"31 April", `"2025-04-30"`, `"31/04/2025"`, none, 0, 0, 1, "DD/MM/YYYY or DD.MM.YYYY or YYYY-MM-DD"},
		{"one-digit day", `"2025-03-04"`, `"4/03/2025"`, none, 0, 0, 1, ""},
		{"month 13", `"2025-03-04"`, `"04/13/2025"`, none, 0, 0, 1, ""},
	})
}

func TestParseDateLayout(t *testing.T) {
	for _, tt := range []struct {
		layout, s string
		want      string
	}{
		{"YYYY-MM-DD", "2025-03-14", "2025-03-14"},
		{"DD/MM/YYYY", "29/02/2024", "2024-02-29"},
		{"MM/DD/YYYY", "02/29/2024", "2024-02-29"},
		{"YYYYMMDD", "20250314", "2025-03-14"},
		{"DD de MM de YYYY", "14 de 03 de 2025", "2025-03-14"},
		{"DD/MM/YYYY", "29/02/2025", ""},
		{"DD/MM/YYYY", "00/01/2025", ""},
		{"DD/MM/YYYY", "1/01/2025", ""},
		{"DD/MM/YYYY", "01/01/2025 ", ""},
		{"DD/MM/YYYY", "０1/01/2025", ""},
	} {
		y, m, d, ok := ParseDateLayout(tt.layout, tt.s)
		got := ""
		if ok {
			got = FormatDate(y, m, d)
		}
		if got != tt.want {
			t.Errorf("ParseDateLayout(%q, %q) = %q, want %q", tt.layout, tt.s, got, tt.want)
		}
	}
	for layout, ok := range map[string]bool{"YYYY-MM-DD": true, "DD.MM.YYYY": true, "YYYYMMDD": true, "MM/DD/YY": false, "YYYY-MM": false, "YYYY-MM-DD DD": false, "": false} {
		if err := CheckDateLayout(layout); (err == nil) != ok {
			t.Errorf("CheckDateLayout(%q) = %v, want ok %v", layout, err, ok)
		}
	}
}

func TestScoreField_String(t *testing.T) {
	exact := extractbench.Field{Name: "s", Type: extractbench.FieldString}
	runFieldCases(t, exact, []fieldCase{
		{"same", `"ACME Lda."`, `"ACME Lda."`, tp, 1, 0, 0, ""},
		{"case differs", `"ACME Lda."`, `"acme lda."`, fpfn, 0, 1, 1, `got "acme lda.", want "ACME Lda."`},
		{"NFD is not NFC under exact", `"Jos\u00e9"`, `"Jose\u0301"`, fpfn, 0, 1, 1, ""},
		{"a number", `"12"`, `12`, none, 0, 0, 1, "a number 12, want a string"},
		{"empty string is a value", `null`, `""`, fp, 0, 1, 0, ""},
		{"markup kept as is", `"<b>&x"`, `"<b>&x"`, tp, 1, 0, 0, ""},
	})
	all := extractbench.Field{Name: "s", Type: extractbench.FieldString, Match: extractbench.MatchNormalised}
	runFieldCases(t, all, []fieldCase{
		{"case", `"ACME Lda"`, `"acme lda"`, tp, 1, 0, 0, ""},
		{"NFD vs NFC", `"Jos\u00e9"`, `"Jose\u0301"`, tp, 1, 0, 0, ""},
		{"accents dropped", `"São Paulo"`, `"SAO PAULO"`, tp, 1, 0, 0, ""},
		{"punctuation and whitespace", `"ACME, Lda."`, `"  acme   lda "`, tp, 1, 0, 0, ""},
		{"punctuation between words", `"a - b"`, `"a b"`, tp, 1, 0, 0, ""},
		{"unicode whitespace", `"a\u00a0b"`, `"a\tb"`, tp, 1, 0, 0, ""},
		{"full case folding: ß is ss", `"STRASSE"`, `"straße"`, tp, 1, 0, 0, ""},
		{"other letters differ", `"Lda"`, `"Ltda"`, fpfn, 0, 1, 1, ""},
	})
	caseOnly := extractbench.Field{Name: "s", Type: extractbench.FieldString, Match: extractbench.MatchNormalised, Normalise: []string{"case"}}
	runFieldCases(t, caseOnly, []fieldCase{
		{"case folded", `"Ação"`, `"AÇÃO"`, tp, 1, 0, 0, ""},
		{"NFD still equal (canonical equivalence)", `"ação"`, `"AC\u0327A\u0303O"`, tp, 1, 0, 0, ""},
		{"accents kept", `"ação"`, `"acao"`, fpfn, 0, 1, 1, ""},
		{"punctuation kept", `"a.b"`, `"ab"`, fpfn, 0, 1, 1, ""},
		{"whitespace kept", `"a b"`, `"a  b"`, fpfn, 0, 1, 1, ""},
	})
}

func TestNormaliseString(t *testing.T) {
	for _, tt := range []struct {
		in    string
		steps []string
		want  string
	}{
		{"  Crème   Brûlée!  ", nil, "creme brulee"},
		{"Crème", []string{"accents"}, "Creme"},
		{"A  B\n", []string{"whitespace"}, "A B"},
		{"«Olá», disse", []string{"punctuation"}, "Olá disse"},
		{"ÅNGSTRÖM", []string{"case"}, "ångström"},
	} {
		if got := NormaliseString(tt.in, tt.steps); got != tt.want {
			t.Errorf("NormaliseString(%q, %v) = %q, want %q", tt.in, tt.steps, got, tt.want)
		}
	}
}

func TestScoreField_EnumIntegerBoolean(t *testing.T) {
	enum := extractbench.Field{Name: "currency", Type: extractbench.FieldEnum, Values: []string{"EUR", "USD"}}
	runFieldCases(t, enum, []fieldCase{
		{"same", `"EUR"`, `"EUR"`, tp, 1, 0, 0, ""},
		{"another value", `"EUR"`, `"USD"`, fpfn, 0, 1, 1, `got "USD", want "EUR"`},
		{"outside the values is wrong", `"EUR"`, `"eur"`, fpfn, 0, 1, 1, "(not one of the values)"},
		{"null expected", `null`, `"EUR"`, fp, 0, 1, 0, ""},
	})
	integer := extractbench.Field{Name: "n", Type: extractbench.FieldInteger}
	runFieldCases(t, integer, []fieldCase{
		{"equal", `42`, `42`, tp, 1, 0, 0, ""},
		{"written with an exponent", `4200`, `4.2e3`, tp, 1, 0, 0, ""},
		{"whole though written with a point", `42`, `42.0`, tp, 1, 0, 0, ""},
		{"not whole", `42`, `42.5`, none, 0, 0, 1, "42.5 is not a whole number"},
		{"another number", `42`, `43`, fpfn, 0, 1, 1, "got 43, want 42"},
		{"a string", `42`, `"42"`, none, 0, 0, 1, "want a whole number"},
		{"huge", `42`, `1e999999999`, fpfn, 0, 1, 1, ""},
		{"beyond float precision", `9007199254740993`, `9007199254740992`, fpfn, 0, 1, 1, ""},
	})
	boolean := extractbench.Field{Name: "signed", Type: extractbench.FieldBoolean}
	runFieldCases(t, boolean, []fieldCase{
		{"true", `true`, `true`, tp, 1, 0, 0, ""},
		{"false", `false`, `false`, tp, 1, 0, 0, ""},
		{"false is a value, not null", `false`, `null`, fn, 0, 0, 1, ""},
		{"wrong", `true`, `false`, fpfn, 0, 1, 1, ""},
		{"a string", `true`, `"true"`, none, 0, 0, 1, "want true or false"},
	})
}

// TestScoreField_Missing: an absent key and null are both no value; a
// null expectation means "null is right" (missing: null, the default)
// or "not reviewed" (missing: skip), which scores nothing either way.
func TestScoreField_Missing(t *testing.T) {
	null := extractbench.Field{Name: "po", Type: extractbench.FieldString}
	runFieldCases(t, null, []fieldCase{
		{"null expected, absent", `null`, ``, tn, 0, 0, 0, ""},
		{"null expected, null", `null`, `null`, tn, 0, 0, 0, ""},
		{"null expected, a value", `null`, `"PO-1"`, fp, 0, 1, 0, ""},
		{"value expected, absent", `"PO-1"`, ``, fn, 0, 0, 1, "key missing"},
		{"value expected, null", `"PO-1"`, `null`, fn, 0, 0, 1, "no value"},
	})
	skip := extractbench.Field{Name: "po", Type: extractbench.FieldString, Missing: extractbench.MissingSkip}
	runFieldCases(t, skip, []fieldCase{
		{"not reviewed, absent", `null`, ``, none, 0, 0, 0, ReasonNotReviewed},
		{"not reviewed, a value", `null`, `"PO-1"`, none, 0, 0, 0, ReasonNotReviewed},
		{"reviewed value, null answer", `"PO-1"`, `null`, fn, 0, 0, 1, "no value"},
		{"reviewed value, right", `"PO-1"`, `"PO-1"`, tp, 1, 0, 0, ""},
	})
	skipList := extractbench.Field{Name: "tags", Type: extractbench.FieldList, Missing: extractbench.MissingSkip, Items: &extractbench.Field{Type: extractbench.FieldString}}
	runFieldCases(t, skipList, []fieldCase{
		{"list not reviewed", `null`, `["a"]`, none, 0, 0, 0, ReasonNotReviewed},
	})
}

func TestScoreField_List(t *testing.T) {
	set := extractbench.Field{Name: "skus", Type: extractbench.FieldList, Items: &extractbench.Field{Type: extractbench.FieldString}}
	runFieldCases(t, set, []fieldCase{
		{"same items, another order", `["a","b","c"]`, `["c","a","b"]`, tp, 3, 0, 0, ""},
		{"one missed", `["a","b","c"]`, `["a","b"]`, fpfn, 2, 0, 1, "1 of 3 items missed"},
		{"one extra", `["a","b"]`, `["a","b","x"]`, fpfn, 2, 1, 0, "1 of 3 answered items wrong"},
		{"duplicates count as a multiset", `["a","a","b"]`, `["a","b","b"]`, fpfn, 2, 1, 1, ""},
		{"duplicate answered once", `["a","a"]`, `["a"]`, fpfn, 1, 0, 1, ""},
		{"both empty", `[]`, `[]`, tp, 0, 0, 0, ""},
		{"empty expected, items answered", `[]`, `["a"]`, fpfn, 0, 1, 0, ""},
		{"items expected, empty answered", `["a","b"]`, `[]`, fpfn, 0, 0, 2, ""},
		{"empty expected, null answered", `[]`, `null`, fn, 0, 0, 1, "no value"},
		{"items expected, absent", `["a","b"]`, ``, fn, 0, 0, 2, "key missing"},
		{"null expected, empty answered", `null`, `[]`, fp, 0, 1, 0, ""},
		{"null expected, items answered", `null`, `["a","b"]`, fp, 0, 2, 0, ""},
		{"null expected, null", `null`, `null`, tn, 0, 0, 0, ""},
		{"not a list", `["a"]`, `"a"`, none, 0, 0, 1, "want a list"},
		{"an unreadable item matches nothing", `["a","b"]`, `["a",2]`, fpfn, 1, 1, 1, "item 1: a number 2, want a string"},
		{"a null item matches nothing", `["a"]`, `["a",null]`, fpfn, 1, 1, 0, "item 1: null"},
	})
	seq := extractbench.Field{Name: "skus", Type: extractbench.FieldList, Order: extractbench.OrderSequence, Items: &extractbench.Field{Type: extractbench.FieldString}}
	runFieldCases(t, seq, []fieldCase{
		{"same order", `["a","b","c"]`, `["a","b","c"]`, tp, 3, 0, 0, ""},
		{"another order", `["a","b","c"]`, `["c","a","b"]`, fpfn, 0, 3, 3, ""},
		{"one swapped pair", `["a","b","c"]`, `["b","a","c"]`, fpfn, 1, 2, 2, ""},
		{"duplicates by position", `["a","a"]`, `["a","a","a"]`, fpfn, 2, 1, 0, ""},
		{"shorter", `["a","b","c"]`, `["a","b"]`, fpfn, 2, 0, 1, ""},
	})
	// Decimals with a tolerance are not an equivalence: 1.00 is near
	// 0.996 and 1.004, and a greedy match of 1.00 to 0.996 would leave
	// 0.992 unmatched; the largest matching pairs all three.
	dec := extractbench.Field{Name: "prices", Type: extractbench.FieldList, Items: &extractbench.Field{Type: extractbench.FieldDecimal, AbsTolerance: "0.005"}}
	runFieldCases(t, dec, []fieldCase{
		{"best matching, not greedy", `[1.00, 0.992, 1.008]`, `[0.996, 1.004, 1.003]`, tp, 3, 0, 0, ""},
		{"within tolerance, any order", `[10, 20]`, `[20.001, 9.999]`, tp, 2, 0, 0, ""},
		{"one beyond", `[10, 20]`, `[20.001, 9.9]`, fpfn, 1, 1, 1, ""},
	})
	norm := extractbench.Field{Name: "names", Type: extractbench.FieldList, Items: &extractbench.Field{Type: extractbench.FieldString, Match: extractbench.MatchNormalised}}
	runFieldCases(t, norm, []fieldCase{
		{"items normalised", `["São Paulo","Lisboa"]`, `["lisboa","SAO PAULO."]`, tp, 2, 0, 0, ""},
	})
	dates := extractbench.Field{Name: "due", Type: extractbench.FieldList, Items: &extractbench.Field{Type: extractbench.FieldDate, Formats: []string{"DD/MM/YYYY"}}}
	runFieldCases(t, dates, []fieldCase{
		{"items in the stated format", `["2025-03-14","2025-04-01"]`, `["01/04/2025","14/03/2025"]`, tp, 2, 0, 0, ""},
	})
}

// TestScoreField_ExpectedAndGot: Expected and Got are compact JSON, markup
// and non-ASCII kept as they are; Got is "" for an absent key, "null" for
// null.
func TestScoreField_ExpectedAndGot(t *testing.T) {
	f := extractbench.Field{Name: "s", Type: extractbench.FieldString}
	s := ScoreField(f, "<b>Café & \"Bar\"</b>", map[string]any{"b": []any{json.Number("1.50"), nil, true}}, true)
	if s.Expected != `"<b>Café & \"Bar\"</b>"` || s.Got != `{"b":[1.50,null,true]}` {
		t.Errorf("expected %s, got %s", s.Expected, s.Got)
	}
	if s := ScoreField(f, nil, nil, false); s.Expected != "null" || s.Got != "" {
		t.Errorf("absent: expected %q, got %q", s.Expected, s.Got)
	}
	if s := ScoreField(f, nil, nil, true); s.Got != "null" {
		t.Errorf("null: got %q", s.Got)
	}
}

// FuzzScoreField: any expectation and answer under any type scores
// without panicking, and the result agrees with the counts: a correct
// field has no FP or FN, a wrong one at least one (or is not scored).
func FuzzScoreField(f *testing.F) {
	for _, s := range [][2]string{
		{`"2025-03-14"`, `"14/03/2025"`}, {`1234.56`, `"1.234,56"`}, {`["a","b"]`, `["b",null,1]`},
		{`null`, `1e999999999`}, {`"Jos\u00e9"`, `"JOSE\u0301"`}, {`[1.0, 0.996]`, `[1.004, 1e-400]`}, {`true`, `"x"`},
	} {
		f.Add(s[0], s[1], uint8(0))
	}
	f.Fuzz(fuzzScoreField)
}

func fuzzScoreField(t *testing.T, want, got string, variant uint8) {
	dec := func(s string) (any, bool) {
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var v any
		return v, d.Decode(&v) == nil
	}
	w, ok1 := dec(want)
	g, present := dec(got)
	if !ok1 {
		return
	}
	types := extractbench.FieldTypes
	typ := types[int(variant)%len(types)]
	field := extractbench.Field{Name: "f", Type: typ, Values: []string{"a", "b"}, Formats: []string{"DD/MM/YYYY", "YYYY-MM-DD"},
		Match: extractbench.MatchNormalised, Locale: []string{"en", "pt"}[variant/16%2], RelTolerance: "0.01",
		Order: []string{"set", "sequence"}[variant/32%2], Missing: []string{"null", "skip"}[variant/64%2]}
	if typ == extractbench.FieldList {
		item := field
		item.Type, item.Name = types[int(variant/8)%(len(types)-1)], ""
		field.Items = &item
	}
	s := ScoreField(field, w, g, present)
	switch {
	case s.Correct() && (s.FP != 0 || s.FN != 0 || s.Reason != ""):
		t.Fatalf("%s vs %s: correct with %+v", got, want, s)
	case !s.Correct() && s.Result != extractbench.Unscored && s.FP+s.FN == 0:
		t.Fatalf("%s vs %s: wrong with no FP or FN: %+v", got, want, s)
	case s.Result == extractbench.Unscored && s.Reason == "":
		t.Fatalf("%s vs %s: unscored without a reason", got, want)
	case s.TP < 0 || s.FP < 0 || s.FN < 0:
		t.Fatalf("%s vs %s: negative counts %+v", got, want, s)
	}
}
