package jsonscan

import (
	"encoding/json"
	"testing"
)

func TestScanner_Str(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{`"plain"`, "plain", true},
		{`""`, "", true},
		{`"a\"b\\c\/d"`, `a"b\c/d`, true},
		{`"\b\f\n\r\t"`, "\b\f\n\r\t", true},
		{`"caf\u00e9 ok"`, "café ok", true},
		{`"já \n é"`, "já \n é", true},
		{`"\ud83d\ude00"`, "", false}, // a surrogate pair: json.Unmarshal decides
		{"\"\xc3\"", "", false},       // invalid UTF-8, which json.Unmarshal replaces
		{"\"\xc3\\n\"", "", false},    // the same before an escape
		{"\"a\nb\"", "", false},       // a control byte
		{`"\x"`, "", false},
		{`"\u12"`, "", false},
		{`"open`, "", false},
		{`plain`, "", false},
	}
	for _, tt := range tests {
		s := Scanner{B: []byte(tt.in)}
		got, ok := s.Str()
		if got != tt.want || ok != tt.ok {
			t.Errorf("Str(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		if ok && !s.Done() {
			t.Errorf("Str(%q) left %q", tt.in, tt.in[s.I:])
		}
	}
}

func TestScanner_Skip(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{`{"a": [1, -2.5e3, true, false, null, "x\u0041"], "b": {}}`, true},
		{`[]`, true},
		{`0`, true},
		{`{"a":[1,2,]}`, false}, // a trailing comma, which a lax decoder accepts
		{`{"a" 1}`, false},
		{`01`, true}, // Skip reads the 0; Done then finds the 1
		{`-`, false},
		{`1.`, false},
		{`"\q"`, false},
		{`tru`, false},
		{`{"\u0061": 1}`, false}, // an escaped key is left to json.Unmarshal
	}
	for _, tt := range tests {
		s := Scanner{B: []byte(tt.in)}
		if got := s.Skip(0); got != tt.ok {
			t.Errorf("Skip(%q) = %v, want %v", tt.in, got, tt.ok)
		}
	}
	s := Scanner{B: []byte(`01`)}
	if s.Skip(0) && s.Done() {
		t.Error(`Skip then Done accepted "01"`)
	}
}

func TestScanner_Integer(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 0, true}, {"-17", -17, true}, {"123456789012345", 123456789012345, true},
		{"1234567890123456", 0, false}, {"01", 0, false}, {"1.0", 0, false}, {"1e3", 0, false}, {"null", 0, false}, {"-", 0, false},
	}
	for _, tt := range tests {
		s := Scanner{B: []byte(tt.in)}
		var got int
		if ok := s.Integer(&got); got != tt.want || ok != tt.ok {
			t.Errorf("Integer(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestScanner_ObjectOnce(t *testing.T) {
	read := func(in string) (a, b string, ok bool) {
		s := Scanner{B: []byte(in)}
		var seen uint8
		s.WS() // as the callers do: Object starts at its brace
		ok = s.Object(func(key []byte) bool {
			switch string(key) {
			case "a":
				v, ok := s.Str()
				a = v
				return s.Once(&seen, 1) && ok
			case "b":
				v, null, ok := s.OptStr()
				if !null {
					b = v
				}
				return s.Once(&seen, 2) && ok
			}
			return !FoldsTo(key, "a", "b") && s.Skip(1)
		}) && s.Done()
		return a, b, ok
	}
	tests := []struct {
		in   string
		a, b string
		ok   bool
	}{
		{` {"a": "x", "b": null, "c": [1]} `, "x", "", true},
		{`{"b":"y","a":"x"}`, "x", "y", true},
		{`{"a": "x", "a": "y"}`, "y", "", false}, // a duplicate key
		{`{"A": "x"}`, "", "", false},            // json.Unmarshal folds case
		{`{"a": "x"} {}`, "x", "", false},
	}
	for _, tt := range tests {
		a, b, ok := read(tt.in)
		if a != tt.a || b != tt.b || ok != tt.ok {
			t.Errorf("%s: a %q, b %q, %v; want %q, %q, %v", tt.in, a, b, ok, tt.a, tt.b, tt.ok)
		}
	}
}

// FuzzStr holds Str to json.Unmarshal: a string Str reads whole is the
// string json.Unmarshal decodes.
func FuzzStr(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\"b\n\u00e9"`, `"\ud83d"`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := Scanner{B: b}
		got, ok := s.Str()
		if !ok || !s.Done() {
			return
		}
		var want string
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("Str read %q as %q; json.Unmarshal: %v", b, got, err)
		}
		if got != want {
			t.Fatalf("Str(%q) = %q, json.Unmarshal %q", b, got, want)
		}
	})
}
