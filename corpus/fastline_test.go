package corpus

import (
	"bytes"
	"reflect"
	"testing"
	"unicode/utf8"
)

// TestParseFast_EveryDefaultRecord: every record of the default corpus and
// of the samples, as EncodeDocuments writes it, takes the one-pass decode
// with canonical spans, decodes as parseLine does and hashes as
// RecordHash does.
func TestParseFast_EveryDefaultRecord(t *testing.T) {
	c, err := LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	enum := map[string]bool{}
	for _, cat := range DefaultCategories {
		enum[cat] = true
	}
	var sh spanHasher
	for _, d := range append(c.Documents, sampleDocs()...) {
		line, err := EncodeDocuments([]Document{d})
		if err != nil {
			t.Fatal(err)
		}
		line = line[:len(line)-1]
		var f fastLine
		if !parseFast(line, enum, &f, false) || !f.canonical {
			t.Fatalf("%s: the one-pass decode refused %.80q (canonical %v)", d.ID, line, f.canonical)
		}
		want, probs := parseLine(line, enum, nil)
		if len(probs) > 0 || !reflect.DeepEqual(f.doc, *want) {
			t.Fatalf("%s: one pass %+v, parseLine %+v %v", d.ID, f.doc, want, probs)
		}
		if got, want := sh.recordHash(&f), RecordHash(d); got != want {
			t.Fatalf("%s: hash from the spans %s, RecordHash %s", d.ID, got, want)
		}
		var lent fastLine
		if !parseFast(line, enum, &lent, true) || !reflect.DeepEqual(lent.doc, f.doc) || !lent.canonical {
			t.Fatalf("%s: the text borrowed: %+v (canonical %v), want %+v", d.ID, lent.doc, lent.canonical, f.doc)
		}
	}
}

// TestParseFast_LeavesProblemsToParseLine: lines with a problem, or a
// shape the one-pass decode does not read, are refused by it, so that
// parseLine names the problem (file:line: field).
func TestParseFast_LeavesProblemsToParseLine(t *testing.T) {
	enum := map[string]bool{"software": true}
	good := `{"id":"a-1","text":"x","length_class":"short","expected":{"date":"2024-02-29","amount":"-0012.50","category":"software"},"lang":"pt-BR"}`
	var f fastLine
	if !parseFast([]byte(good), enum, &f, false) {
		t.Fatalf("refused %s", good)
	}
	for _, line := range []string{
		`{"id":"a-1","text":"x","length_class":"short","expected":{"date":"2023-02-29","amount":null,"category":"software"}}`,  // no such day
		`{"id":"a-1","text":"x","length_class":"short","expected":{"date":null,"amount":"1.","category":"software"}}`,          // not a decimal
		`{"id":"a-1","text":"x","length_class":"short","expected":{"date":null,"amount":null,"category":"rent"}}`,              // not in the enum
		`{"id":"a-1","text":"x","length_class":"short","expected":{"date":null,"amount":null,"category":""}}`,                  // empty category
		`{"id":"a-1","text":"x","length_class":"short","expected":{"date":null,"amount":null}}`,                                // missing key
		`{"id":"a-1","text":"x","length_class":"short","expected":{"date":null,"amount":null,"category":null,"x":1}}`,          // another key
		`{"id":"-a","text":"x","length_class":"short","expected":{"date":null,"amount":null,"category":null}}`,                 // id pattern
		`{"id":"a","text":" \n ","length_class":"short","expected":{"date":null,"amount":null,"category":null}}`,               // blank text
		`{"id":"a","text":"x","length_class":"tiny","expected":{"date":null,"amount":null,"category":null}}`,                   // class
		`{"id":"a","text":"x","length_class":"short","expected":{"date":null,"amount":null,"category":null},"lang":"english"}`, // lang pattern
		`{"id":"a","text":"x","text":"y","length_class":"short","expected":{"date":null,"amount":null,"category":null}}`,       // key twice
		`{"id":"a","text":"x","length_class":"short","expected":{"date":null,"amount":null,"category":null}} x`,                // text after
		`{"id":"a","text":"x","length_class":"short"}`,                                                                         // no expected
		`{"id":"a","text":"x","length_class":"short","expected":{"date":null,"amount":"` + "1" + string(bytes.Repeat([]byte("1"), 41)) + `","category":null}}`,
	} {
		if parseFast([]byte(line), enum, &f, false) {
			t.Errorf("accepted %s", line)
		}
		if _, probs := parseLine([]byte(line), enum, nil); len(probs) == 0 {
			t.Errorf("parseLine finds no problem in %s", line)
		}
	}
}

// FuzzParseFast holds the one-pass decode to parseLine: whatever it
// accepts, parseLine accepts without a problem and decodes to the same
// document, and a hash taken from canonical spans is RecordHash's.
func FuzzParseFast(f *testing.F) {
	for _, d := range sampleDocs() {
		line, _ := EncodeDocuments([]Document{d})
		f.Add(line[:len(line)-1])
	}
	for _, s := range []string{
		`{"id":"a","text":"x\ny \u00e9 \u2028 \ud83d\ude00","length_class":"short","expected":{"date":null,"amount":"1","category":"software"}}`,
		`{"id":"a","text":"\/\b\f\r\t\"\\ ` + "\u2029" + `","length_class":"long","expected":{"date":"2024-01-01","amount":null,"category":null}} `,
		` { "id" : "a" , "text" : "x" , "length_class" : "usual" , "expected" : { "category" : "rent" , "amount" : "00.1" , "date" : null } , "lang" : "en" } `,
		`{"id":"a","text":"` + "\xff" + `","length_class":"short","expected":{"date":null,"amount":null,"category":null}}`,
	} {
		f.Add([]byte(s))
	}
	enum := map[string]bool{"software": true, "rent": true}
	var sh spanHasher
	f.Fuzz(func(t *testing.T, line []byte) {
		var fl, lent fastLine
		lentOK := parseFast(line, enum, &lent, true)
		if !parseFast(line, enum, &fl, false) {
			if lentOK {
				t.Fatalf("%q: accepted with its text borrowed only", line)
			}
			return
		}
		if lentOK && (!reflect.DeepEqual(lent.doc, fl.doc) || lent.canonical != fl.canonical || !bytes.Equal(lent.text, fl.text)) {
			t.Fatalf("%q: borrowed %+v (canonical %v), decoded %+v (canonical %v)", line, lent.doc, lent.canonical, fl.doc, fl.canonical)
		}
		want, probs := parseLine(line, enum, nil)
		if len(probs) > 0 || want == nil {
			t.Fatalf("one pass accepted %q, parseLine: %v", line, probs)
		}
		if !reflect.DeepEqual(fl.doc, *want) {
			t.Fatalf("%q: one pass %+v, parseLine %+v", line, fl.doc, *want)
		}
		if fl.canonical {
			if got, want := sh.recordHash(&fl), RecordHash(*want); got != want {
				t.Fatalf("%q: hash from the spans %s, RecordHash %s", line, got, want)
			}
		}
	})
}

// FuzzStringStopAt holds the word-at-a-time scan to a byte loop and
// utf8.Valid: the same stop, and the bytes before it judged alike.
func FuzzStringStopAt(f *testing.F) {
	f.Add([]byte(`plain ASCII text long enough for words"`), 0)
	f.Add([]byte("emiss\xc3\xa3o \xe2\x80\x94 ok\\n more\x01"), 3)
	f.Add([]byte("bad \xc3( byte \xed\xa0\x80 here\""), 1)
	f.Fuzz(func(t *testing.T, b []byte, j int) {
		if j < 0 || j > len(b) {
			return
		}
		stop := j
		for stop < len(b) && !stringStop[b[stop]] {
			stop++
		}
		got, valid := stringStopAt(b, j)
		if wantValid := utf8.Valid(b[j:stop]); valid != wantValid || valid && got != stop {
			t.Fatalf("stringStopAt(%q, %d) = %d, %v; want %d, %v", b, j, got, valid, stop, wantValid)
		}
	})
}
