package eval

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	doc, _ := decode(t, `{"supplier":{"tax_id":"PT123","name":null},"a/b":{"c~d":1},"lines":[{"sku":"x"},{"sku":"y"}],"":{"":2},"0":"zero"}`)
	for _, tt := range []struct {
		pointer string
		want    string // the value as JSON; "" for absent
	}{
		{"/supplier/tax_id", `"PT123"`},
		{"/supplier/name", `null`},
		{"/supplier/missing", ``},
		{"/supplier/tax_id/deeper", ``},
		{"/a~1b/c~0d", `1`},
		{"/a/b", ``},
		{"/lines/1/sku", `"y"`},
		{"/lines/2/sku", ``},
		{"/lines/01", ``},
		{"/lines/-", ``},
		{"/0", `"zero"`},
		{"//", `2`},
		{"", compactJSON(doc)},
	} {
		v, present, err := Lookup(doc, tt.pointer)
		if err != nil {
			t.Errorf("Lookup(%q): %v", tt.pointer, err)
			continue
		}
		got := ""
		if present {
			got = compactJSON(v)
		}
		if got != tt.want {
			t.Errorf("Lookup(%q) = %s, want %s", tt.pointer, got, tt.want)
		}
	}
	for _, bad := range []string{"supplier", "/a~2", "/a~"} {
		if _, _, err := Lookup(doc, bad); err == nil {
			t.Errorf("Lookup(%q): no error", bad)
		}
	}
}

// FuzzLookup: a pointer built from any key, escaped by RFC 6901, reads
// that key back; any pointer reads without panicking, and a pointer that
// PointerTokens accepts has no ~ left unescaped.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{"tax_id", "a/b", "c~d", "~1", "~0~1", "", "0", "-", "01", "é/ü"} {
		f.Add(s, "/supplier/"+s)
	}
	f.Fuzz(func(t *testing.T, key, pointer string) {
		escaped := strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
		doc := map[string]any{"supplier": map[string]any{key: json.Number("1")}}
		v, present, err := Lookup(doc, "/supplier/"+escaped)
		if err != nil || !present || v != json.Number("1") {
			t.Fatalf("key %q as %q: %v %v %v", key, escaped, v, present, err)
		}
		tokens, err := PointerTokens("/supplier/" + escaped)
		if err != nil || !reflect.DeepEqual(tokens, []string{"supplier", key}) {
			t.Fatalf("tokens of %q: %q %v", escaped, tokens, err)
		}
		var other any
		_ = json.Unmarshal([]byte(key), &other)
		for _, d := range []any{doc, other, []any{doc, other}} {
			_, _, err := Lookup(d, pointer)
			if _, terr := PointerTokens(pointer); (err == nil) != (terr == nil) {
				t.Fatalf("Lookup(%q) error %v, PointerTokens error %v", pointer, err, terr)
			}
		}
	})
}
