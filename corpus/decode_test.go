package corpus

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// hasDuplicateKey is the reference: a token-by-token decode that sees each
// object's keys.
func hasDuplicateKey(dec *json.Decoder) bool {
	tok, err := dec.Token()
	if err != nil {
		return false
	}
	switch tok {
	case json.Delim('{'):
		seen, dup := map[string]bool{}, false
		for dec.More() {
			k, _ := dec.Token()
			key, _ := k.(string)
			dup = dup || seen[key]
			seen[key] = true
			dup = hasDuplicateKey(dec) || dup
		}
		dec.Token()
		return dup
	case json.Delim('['):
		dup := false
		for dec.More() {
			dup = hasDuplicateKey(dec) || dup
		}
		dec.Token()
		return dup
	}
	return false
}

// FuzzDecodeRecord: walking a valid line in place decodes it as
// encoding/json does (the last of duplicate keys wins in both) and finds a
// duplicate key exactly when a token-by-token decode does.
func FuzzDecodeRecord(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","text":"x\ny\u00e9","length_class":"short","expected":{"date":null,"amount":"1.5","category":"rent"}}`,
		`{"a":1,"a":2}`, `[{"a":{"b":[1,{"c":true,"c":false}]}}]`, `"just a string"`, ` {"t\u0065xt":"a","text":"b"} `,
		`{"text":"\"\\\/\b\f\n\r\t\ud83d\ude00","x":[],"y":{}}`, `{"":0,"":1e5}`, `12`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !json.Valid(line) {
			return
		}
		got, dups := decodeRecord(line)
		var want any
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeRecord(%q) = %#v, want %#v", line, got, want)
		}
		if ref := hasDuplicateKey(json.NewDecoder(bytes.NewReader(line))); ref != (len(dups) > 0) {
			t.Fatalf("decodeRecord(%q) found duplicates %q; the token decode says %v", line, dups, ref)
		}
	})
}
