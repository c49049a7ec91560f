package eval

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// scanObjectSeeds are answers of every shape the fast path takes or leaves.
var scanObjectSeeds = []string{
	`{"date":"2025-03-14","amount":1234.56,"category":"software"}`,
	`{"date": null, "amount": -80, "category": "Telecom "}`,
	`{ "a" : [ 1 , {"b":[]} , "x\n\u00e9\"" , true , false , null ] , "c" : {} }`,
	`{"amount":0.5e-3,"n":-0,"big":123456789012345678901234567890}`,
	`{"date":"2025-03-14","date":"2025-03-14"}`, // duplicate: refused
	`{"a":{"b":1,"b":2}}`,                          // nested duplicate
	`{"k\u0065y":1}`,                               // escaped key: left to encoding/json
	`{"s":"\ud83d\ude00"}`,                         // surrogate pair: left to encoding/json
	`{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":tru}`, // bad literals
	`{"a":1,}`, `{"a" 1}`, `{"a":1} x`, `{"a":1} {}`, // bad syntax, text after
	`{"a":1}  ` + "\n", `{}`, `{"a":[]}`, `{"a":"\t"}`, // space after, empty, control byte
	`{"a":` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `}`, // deeper than maxDepth
	`{"a":` + strings.Repeat(`[`, 31) + strings.Repeat(`]`, 31) + `}`, // at maxDepth
}

// TestScanObject_AgreesWithTokens checks the fast path on the seeds: it
// takes the common answers and gives the tokens' value where it does.
func TestScanObject_AgreesWithTokens(t *testing.T) {
	took := 0
	for _, text := range scanObjectSeeds {
		if checkScanObject(t, text) {
			took++
		}
	}
	if took < 6 {
		t.Errorf("the fast path took %d of the seeds, want the 6 well-formed ones at least", took)
	}
}

// FuzzScanObject holds scanObject to json.Decoder's tokens: where the fast
// path gives a value, the tokens give the same one, and the answers it
// refuses are exactly the ones the tokens refuse or that it leaves to them.
func FuzzScanObject(f *testing.F) {
	for _, s := range scanObjectSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if text == "" || text[0] != '{' || !utf8.ValidString(text) {
			return // decodeObject refuses these before either path
		}
		checkScanObject(t, text)
	})
}

// checkScanObject reports whether the fast path took text, failing t where
// it disagrees with the tokens.
func checkScanObject(t *testing.T, text string) bool {
	t.Helper()
	fast, ok := scanObject(text)
	slow, err := decodeTokens(text)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("%q: the fast path took it, the tokens refuse it: %v", text, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q: fast path %#v, tokens %#v", text, fast, slow)
	}
	return true
}
