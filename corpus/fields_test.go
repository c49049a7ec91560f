package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// poNames are the declared fields of the tests' purchase orders.
var poNames = []string{"order_no", "total", "signed", "items"}

// poCheck is a stand-in for extractbench.Field.CheckExpectation (corpus
// cannot import the root package): order_no a string, total a number or
// string, signed a boolean and required, items a list.
func poCheck(name string, v any) error {
	if v == nil {
		if name == "signed" {
			return errors.New("null, but the field is required")
		}
		return nil
	}
	ok := true
	switch name {
	case "order_no":
		_, ok = v.(string)
	case "total":
		switch v.(type) {
		case json.Number, string:
		default:
			ok = false
		}
	case "signed":
		_, ok = v.(bool)
	case "items":
		_, ok = v.([]any)
	}
	if !ok {
		return fmt.Errorf("wrong type %s", kindOf(v))
	}
	return nil
}

func poExp() Expectations { return Expectations{Names: poNames, Check: poCheck} }

func poDocs(t *testing.T) []Document {
	t.Helper()
	obj := func(values map[string]any) string {
		s, err := ExpectedObject(poNames, values)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return []Document{
		{ID: "po-1", Text: "Order PO-77 <signed>, total 1,234.50", LengthClass: Short, Lang: "en",
			Expected: Expected{Object: obj(map[string]any{"items": []string{"bolts", "nuts"}, "order_no": "PO-77", "total": "1234.50", "signed": true})}},
		{ID: "po-2", Text: "Pedido 12, total R$ 80,00", LengthClass: Short, Lang: "pt-BR",
			Expected: Expected{Object: obj(map[string]any{"order_no": "12", "total": json.Number("80.00"), "signed": false})}},
	}
}

func TestWriteDirFields_LoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	docs := poDocs(t)
	if err := WriteDirFields(dir, docs, poNames, nil); err != nil {
		t.Fatal(err)
	}
	c, err := LoadFields(dir, poExp())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Documents[0].Expected.Object, `{"order_no":"PO-77","total":"1234.50","signed":true,"items":["bolts","nuts"]}`; got != want {
		t.Errorf("Object = %s, want %s (keys in the declared order)", got, want)
	}
	if got, want := c.Documents[1].Expected.Object, `{"order_no":"12","total":80.00,"signed":false,"items":null}`; got != want {
		t.Errorf("Object = %s, want %s (a number as written, an absent value null)", got, want)
	}
	m := c.Manifest
	if got, want := strings.Join(m.FieldNames, ","), strings.Join(poNames, ","); got != want {
		t.Errorf("field_names = %s, want %s", got, want)
	}
	if got, want := m.Missing["items"], 1; got != want {
		t.Errorf("missing items = %d, want %d", got, want)
	}
	if got, want := m.Langs["pt-BR"], 1; got != want {
		t.Errorf("langs pt-BR = %d, want %d", got, want)
	}
	if m.Categories != nil || m.CategoryCounts != nil {
		t.Errorf("categories %v, counts %v: want none for declared fields", m.Categories, m.CategoryCounts)
	}
	if got, want := m.SHA256, ComputeManifestFields(c.Documents, poNames, nil).SHA256; got != want {
		t.Errorf("sha256 = %s, want %s", got, want)
	}
	raw, err := os.ReadFile(filepath.Join(dir, DocumentsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte(`"text":"Order PO-77 <signed>, total 1,234.50","length_class":"short","expected":{"order_no":"PO-77",`)) {
		t.Errorf("documents.jsonl does not hold the expected object unescaped:\n%s", raw)
	}

	// By reference: Resolve reads the expected object back.
	exp := poExp()
	o, err := open(dir, &exp, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range o.Len() {
		d, err := o.Resolve(o.Doc(i))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := d.Expected.Object, c.Documents[i].Expected.Object; got != want {
			t.Errorf("resolved %s: Object = %s, want %s", d.ID, got, want)
		}
		if got, want := d.Lang, docs[i].Lang; got != want {
			t.Errorf("resolved %s: Lang = %q, want %q", d.ID, got, want)
		}
	}
}

// TestManifest_HashCoversFieldNames: the same records under other field
// names (or another order) hash differently; the default three hash as a
// corpus of the default fields.
func TestManifest_HashCoversFieldNames(t *testing.T) {
	docs := []Document{{ID: "a", Text: "x", LengthClass: Short, Expected: Expected{Object: `{"p":1,"q":2}`}}}
	pq := ComputeManifestFields(docs, []string{"p", "q"}, nil).SHA256
	qp := ComputeManifestFields(docs, []string{"q", "p"}, nil).SHA256
	if pq == qp {
		t.Errorf("sha256 is the same for field_names [p q] and [q p]: the hash must cover them")
	}
	def := sampleDocs()
	declared := make([]Document, len(def))
	for i, d := range def {
		b, err := marshalNoEscape(d.Expected)
		if err != nil {
			t.Fatal(err)
		}
		declared[i] = Document{ID: d.ID, Text: d.Text, LengthClass: d.LengthClass, Expected: Expected{Object: string(b)}}
	}
	if got, want := ComputeManifestFields(declared, []string{"date", "amount", "category"}, nil).SHA256, ComputeManifest(def, DefaultCategories, nil).SHA256; got != want {
		t.Errorf("declared date, amount, category: sha256 %s, want the default rule's %s", got, want)
	}
}

// TestDefaultManifest_Unchanged: the committed default corpus's manifest
// is what the loader computes, byte for byte (no field_names, no langs),
// and a protocol that declares date, amount, category loads it with the
// same hash.
func TestDefaultManifest_Unchanged(t *testing.T) {
	c, err := Load("default")
	if err != nil {
		t.Fatal(err)
	}
	m := ComputeManifest(c.Documents, c.Manifest.Categories, nil)
	got, err := EncodeManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("default", ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("manifest of the default corpus changed:\n%s", got)
	}
	data, err := EncodeDocuments(c.Documents)
	if err != nil {
		t.Fatal(err)
	}
	if wantDocs, _ := os.ReadFile(filepath.Join("default", DocumentsFile)); !bytes.Equal(data, wantDocs) {
		t.Errorf("documents.jsonl of the default corpus encodes differently")
	}
	f, err := LoadDefaultFields(Expectations{Names: []string{"date", "amount", "category"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := f.Manifest.SHA256, c.Manifest.SHA256; got != want {
		t.Errorf("default corpus read with declared date, amount, category: sha256 %s, want %s", got, want)
	}
	if got, want := f.Documents[0].Expected.Object, string(mustJSON(t, c.Documents[0].Expected)); got != want {
		t.Errorf("Object = %s, want %s", got, want)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := marshalNoEscape(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoadFields_Problems: every line's expected object is judged by the
// declared fields, every problem named file:line: field.
func TestLoadFields_Problems(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		`{"id":"ok","text":"a","length_class":"short","expected":{"order_no":null,"total":"1.00","signed":true,"items":[]}}`,
		`{"id":"unknown","text":"b","length_class":"short","expected":{"order_no":"1","total":1,"signed":true,"items":[],"colour":"red"}}`,
		`{"id":"absent","text":"c","length_class":"short","expected":{"order_no":"1","signed":true,"items":[]}}`,
		`{"id":"typed","text":"d","length_class":"short","expected":{"order_no":7,"total":true,"signed":null,"items":"x"}}`,
		`{"id":"flat","text":"e","length_class":"short","expected":["PO-1"]}`,
		`{"id":"date-amount","text":"f","length_class":"short","expected":{"date":"2025-01-01","amount":"1","category":"rent"}}`,
	}
	if err := os.WriteFile(filepath.Join(dir, DocumentsFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFields(dir, poExp())
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want a *LoadError", err)
	}
	var got []string
	for _, p := range le.Problems {
		got = append(got, p.String())
	}
	file := filepath.Join(dir, DocumentsFile)
	want := []string{
		file + ":2: expected.colour: not a declared field; the fields are order_no, total, signed, items",
		file + ":3: expected.total: missing key; write null when the document lacks it",
		file + ":4: expected.order_no: wrong type a number",
		file + ":4: expected.total: wrong type a boolean",
		file + ":4: expected.signed: null, but the field is required",
		file + ":4: expected.items: wrong type a string",
		file + ":5: expected: want an object keyed by the field names (order_no, total, signed, items), got a list",
		file + ":6: expected.amount: not a declared field; the fields are order_no, total, signed, items",
		file + ":6: expected.category: not a declared field; the fields are order_no, total, signed, items",
		file + ":6: expected.date: not a declared field; the fields are order_no, total, signed, items",
		file + ":6: expected.order_no: missing key; write null when the document lacks it",
		file + ":6: expected.total: missing key; write null when the document lacks it",
		file + ":6: expected.signed: missing key; write null when the document lacks it",
		file + ":6: expected.items: missing key; write null when the document lacks it",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The same file read for the default fields is refused as before.
	if _, err := Load(dir); !errors.As(err, &le) || !strings.Contains(err.Error(), ":1: expected.date: missing key") {
		t.Errorf("Load for the default fields: %v, want expected.date missing on line 1", err)
	}
}

// TestLoadFields_Capped: a corpus written for other fields lists the first
// MaxFieldProblems expectation problems and counts the rest.
func TestLoadFields_Capped(t *testing.T) {
	var b strings.Builder
	n := MaxFieldProblems + 30
	for i := range n {
		fmt.Fprintf(&b, `{"id":"d%d","text":"t%d","length_class":"short","expected":{"order_no":1,"total":null,"signed":true,"items":null}}`+"\n", i, i)
	}
	path := filepath.Join(t.TempDir(), "c.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFields(path, poExp())
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want a *LoadError", err)
	}
	if got, want := len(le.Problems), MaxFieldProblems+1; got != want {
		t.Fatalf("problems = %d, want %d", got, want)
	}
	if got, want := le.Problems[MaxFieldProblems].String(), fmt.Sprintf("%s: expected: 30 more expectation problems not listed (the first %d are)", path, MaxFieldProblems); got != want {
		t.Errorf("last problem = %q, want %q", got, want)
	}
}

// TestLoadFields_ManifestFieldNames: a run's corpus is opened only with
// the fields its manifest names, and a declared corpus is not opened as a
// default one; Load and Check read it by its manifest's fields.
func TestLoadFields_ManifestFieldNames(t *testing.T) {
	dir := t.TempDir()
	if err := WriteDirFields(dir, poDocs(t), poNames, nil); err != nil {
		t.Fatal(err)
	}
	man := filepath.Join(dir, ManifestFile)
	cases := []struct {
		name string
		load func() (*Corpus, error)
		want string
	}{
		{"default protocol", func() (*Corpus, error) { return Open(dir) },
			man + ": field_names: the expectations follow the declared fields order_no, total, signed, items; read it with the protocol that declares them (its fields:)"},
		{"other order", func() (*Corpus, error) {
			return LoadFields(dir, Expectations{Names: []string{"total", "order_no", "signed", "items"}, Check: poCheck})
		}, man + ": field_names: the expectations follow the fields order_no, total, signed, items; the protocol declares total, order_no, signed, items (same names in the same order wanted)"},
		{"default corpus, declared fields", func() (*Corpus, error) {
			return LoadDefaultFields(poExp())
		}, "default/manifest.json: field_names: the expectations follow the default fields date, amount, category; the protocol declares order_no, total, signed, items"},
	}
	// Load and Check read a corpus as written: by its manifest's fields.
	c, err := Load(dir)
	if err != nil {
		t.Fatalf("Load of a declared corpus: %v", err)
	}
	if got, want := strings.Join(c.Fields, ","), strings.Join(poNames, ","); got != want {
		t.Errorf("Load: Fields = %s, want %s", got, want)
	}
	if rep, err := Check(dir); err != nil || !rep.OK() {
		t.Errorf("Check of a declared corpus: %v, %v", err, rep.Problems)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.load()
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want a *LoadError", err)
			}
			if got := le.Problems[0].String(); got != tc.want || len(le.Problems) != 1 {
				t.Errorf("problems = %v, want only %q", le.Problems, tc.want)
			}
		})
	}
}

func TestCanonicalObject(t *testing.T) {
	names := []string{"b", "a"}
	for _, tc := range []struct{ in, want, err string }{
		{`{"a": 1.50, "b": "<x>"}`, `{"b":"<x>","a":1.50}`, ""},
		{`{"a": null, "b": {"z":1,"y":[true]}}`, `{"b":{"y":[true],"z":1},"a":null}`, ""},
		{`{"a": 1}`, "", `no key "b"`},
		{`{"a": 1, "b": 2, "c": 3}`, "", `"c" is not a declared field`},
		{`[1]`, "", "got a list"},
		{``, "", "EOF"},
	} {
		got, err := CanonicalObject(names, tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("CanonicalObject(%s) err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("CanonicalObject(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

// FuzzCanonicalObject: a canonical object is valid JSON, canonical again
// as it is, and means what the input meant.
func FuzzCanonicalObject(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":null}`, `{"b":"<&>","a":[1.50,{"y":1,"x":"\u2028"}]}`, `{"a":1e400,"b":-0}`, `{"a":"\ud800","b":true}`} {
		f.Add(s)
	}
	names := []string{"a", "b"}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := CanonicalObject(names, in)
		if err != nil {
			return
		}
		if !json.Valid([]byte(got)) {
			t.Fatalf("CanonicalObject(%q) = %q: not valid JSON", in, got)
		}
		again, err := CanonicalObject(names, got)
		if err != nil || again != got {
			t.Fatalf("CanonicalObject of %q = %q, %v; want it unchanged", got, again, err)
		}
		var a, b any
		if json.Unmarshal([]byte(in), &a) == nil && json.Unmarshal([]byte(got), &b) == nil && fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("CanonicalObject(%q) = %q: means %v, want %v", in, got, b, a)
		}
	})
}
