package corpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTestFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func problemLines(ps []Problem) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return strings.Join(out, "\n")
}

// TestImportJSONL: records become documents with canonical expected
// objects, a class derived when absent, lang kept; the written corpus
// loads back with the same fields.
func TestImportJSONL(t *testing.T) {
	dir := t.TempDir()
	src := writeTestFile(t, filepath.Join(dir, "po.jsonl"), strings.Join([]string{
		`{"id":"po-1","text":"Pedido A-1","expected":{"signed":true,"order_no":"A-1","total":"1.234,50","items":[1,2]},"lang":"pt-BR"}`,
		``,
		`{"id":"po-2","text":"Order B-2","class":"usual","expected":{"order_no":null,"total":12,"signed":false,"items":[]}}`,
	}, "\n")+"\n")
	got, err := ImportJSONL(src, &Expectations{Names: poNames, Check: poCheck})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Problems) > 0 {
		t.Fatalf("problems:\n%s", problemLines(got.Problems))
	}
	if got, want := got.Docs[0].Expected.Object, `{"order_no":"A-1","total":"1.234,50","signed":true,"items":[1,2]}`; got != want {
		t.Errorf("Object = %s, want %s", got, want)
	}
	if got, want := got.Docs[0].LengthClass, Short; got != want {
		t.Errorf("derived class = %s, want %s", got, want)
	}
	if got, want := got.Docs[1].LengthClass, Usual; got != want {
		t.Errorf("given class = %s, want %s", got, want)
	}
	out := filepath.Join(dir, "out")
	if err := WriteDirFields(out, got.Docs, got.Names, nil); err != nil {
		t.Fatal(err)
	}
	c, err := LoadFields(out, poExp())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Manifest.Langs["pt-BR"], 1; got != want {
		t.Errorf("langs pt-BR = %d, want %d", got, want)
	}

	// A corpus's own documents.jsonl imports to the same corpus.
	again, err := ImportJSONL(filepath.Join(out, DocumentsFile), &Expectations{Names: poNames, Check: poCheck})
	if err != nil || len(again.Problems) > 0 {
		t.Fatalf("import of the written documents.jsonl: %v %s", err, problemLines(again.Problems))
	}
	if got, want := ComputeManifestFields(again.Docs, again.Names, nil).SHA256, c.Manifest.SHA256; got != want {
		t.Errorf("re-imported sha256 = %s, want %s", got, want)
	}

	// Without expectations, the first record's keys in their order.
	got, err = ImportJSONL(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(got.Names, ","), "signed,order_no,total,items"; got != want {
		t.Errorf("names from the first record = %s, want %s", got, want)
	}
}

func TestImportJSONL_BadRecords(t *testing.T) {
	dir := t.TempDir()
	src := writeTestFile(t, filepath.Join(dir, "po.jsonl"), strings.Join([]string{
		`{"id":"po-1","text":"a","expected":{"order_no":"A-1","total":"1","signed":true,"items":[]}}`,
		`{"id":"po-1","text":"b","expected":{"order_no":"A-2","total":"2","signed":true,"items":[]}}`,
		`{"id":"po 3","text":"","class":"huge","lang":"Portuguese!","expected":{"order_no":"A-3","total":"3","signed":"yes","items":[]},"source":"x"}`,
		`{"id":"po-4","text":"d"}`,
		`{"id":"po-5","text":"e","expected":{"order_no":"A-5","total":"5","signed":true}`,
	}, "\n")+"\n")
	got, err := ImportJSONL(src, &Expectations{Names: poNames, Check: poCheck})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		src + `:2: id: duplicate id "po-1", first on line 1; every id must be unique`,
		src + `:3: source: unknown key; a record has id, text, expected and optionally class and lang`,
		src + `:3: expected.signed: wrong type a string`,
		src + `:3: id: "po 3": an id is 1 to 200 letters, digits, '.', '_', ':' or '-', starting with a letter or digit`,
		src + `:3: text: empty text; a document needs its text`,
		src + `:3: lang: "Portuguese!" is not a language tag such as en or pt-BR`,
		src + `:3: class: "huge" is not short, usual or long`,
		src + `:4: expected: missing; every record needs its expected object`,
		src + `:5: (line): not valid JSON: unexpected EOF`,
	}
	if g, w := problemLines(got.Problems), strings.Join(want, "\n"); g != w {
		t.Errorf("problems:\n%s\nwant:\n%s", g, w)
	}
}

// TestImportCSV: a CSV of expectations beside a folder of ID.txt texts;
// cells typed by the declared fields.
func TestImportCSV(t *testing.T) {
	dir := t.TempDir()
	texts := filepath.Join(dir, "texts")
	writeTestFile(t, filepath.Join(texts, "po-1.txt"), "Pedido A-1\r\nTotal 1.234,50")
	writeTestFile(t, filepath.Join(texts, "po-2.txt"), "\xEF\xBB\xBFOrder 00042")
	writeTestFile(t, filepath.Join(texts, "stray.txt"), "not in the CSV")
	src := writeTestFile(t, filepath.Join(dir, "expected.csv"), "id,total,order_no,signed,items\n"+
		"po-1,\"1.234,50\",A-1,true,\"[1, 2]\"\n"+
		"po-2,,00042,false,\n")
	got, err := ImportCSV(src, texts, &Expectations{Names: poNames, Check: poCheck})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Problems) > 0 {
		t.Fatalf("problems:\n%s", problemLines(got.Problems))
	}
	for i, want := range []string{
		`{"order_no":"A-1","total":"1.234,50","signed":true,"items":[1,2]}`,
		`{"order_no":"00042","total":null,"signed":false,"items":null}`,
	} {
		if got := got.Docs[i].Expected.Object; got != want {
			t.Errorf("document %d: Object = %s, want %s", i, got, want)
		}
	}
	if got, want := got.Docs[1].Text, "Order 00042"; got != want {
		t.Errorf("text = %q, want %q (byte-order mark dropped)", got, want)
	}
	if got, want := strings.Join(got.Warnings, "\n"), filepath.Join(texts, "stray.txt")+": no row of "+src+" names it: not imported"; got != want {
		t.Errorf("warnings = %q, want %q", got, want)
	}

	// Without expectations: cells are text unless they start with [ or {.
	got, err = ImportCSV(src, texts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := got.Docs[0].Expected.Object, `{"total":"1.234,50","order_no":"A-1","signed":"true","items":[1,2]}`; got != want {
		t.Errorf("untyped Object = %s, want %s", got, want)
	}
}

func TestImportCSV_BadRows(t *testing.T) {
	dir := t.TempDir()
	texts := filepath.Join(dir, "texts")
	writeTestFile(t, filepath.Join(texts, "po-1.txt"), "a")
	writeTestFile(t, filepath.Join(texts, "po-3.txt"), "c")
	src := writeTestFile(t, filepath.Join(dir, "expected.csv"), "id,order_no,total,signed,items\n"+
		"po-1,A-1,1,true,[]\n"+
		"po-1,A-1,1,true,[]\n"+
		"po-2,A-2,2,true,[]\n"+
		"po-3,A-3,3,maybe,[1\n"+
		"po-4,A-4\n")
	got, err := ImportCSV(src, texts, &Expectations{Names: poNames, Check: poCheck})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		src + `:3: id: duplicate id "po-1", first on line 2; every id must be unique`,
		src + `:4: id: no text ` + filepath.Join(texts, "po-2.txt") + ` for document "po-2": the folder of texts holds ID.txt per row`,
		src + `:5: signed: wrong type a string`,
		src + `:5: items: "[1" is not valid JSON (a list or object is written as JSON in its cell)`,
		src + `:6: (row): wrong number of fields`,
	}
	if g, w := problemLines(got.Problems), strings.Join(want, "\n"); g != w {
		t.Errorf("problems:\n%s\nwant:\n%s", g, w)
	}

	header := writeTestFile(t, filepath.Join(dir, "header.csv"), "id,order_no,colour,signed,signed\npo-1,A,red,true,true\n")
	got, err = ImportCSV(header, texts, &Expectations{Names: poNames, Check: poCheck})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		header + `:1: signed: column given twice`,
		header + `:1: colour: not a declared field; the fields are order_no, total, signed, items`,
		header + `:1: total: no column for this declared field; add it (empty cells are null)`,
		header + `:1: items: no column for this declared field; add it (empty cells are null)`,
	}
	if g, w := problemLines(got.Problems), strings.Join(want, "\n"); g != w {
		t.Errorf("header problems:\n%s\nwant:\n%s", g, w)
	}
}

// FuzzImportJSONL: any line imports as documents whose expected objects
// are canonical, or as problems naming a line of the file; never a panic.
func FuzzImportJSONL(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","text":"x","expected":{"order_no":"1","total":"2","signed":true,"items":[]}}`,
		`{"id":"a","text":"x","expected":{"order_no":1}}`, `[{"id":1}]`, `{"id":"a","expected":[]}`, `{"id":"a","text":"x","expected":{"a":1,"a":2}}`,
	} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, line string) {
		path := filepath.Join(dir, "in.jsonl")
		if err := os.WriteFile(path, []byte(line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, exp := range []*Expectations{nil, {Names: poNames, Check: poCheck}} {
			got, err := ImportJSONL(path, exp)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range got.Docs {
				if canon, err := CanonicalObject(got.Names, d.Expected.Object); err != nil || canon != d.Expected.Object {
					t.Fatalf("%q: Object %q not canonical (%q, %v)", line, d.Expected.Object, canon, err)
				}
			}
			for _, p := range got.Problems {
				if p.File != path || p.Line > strings.Count(line, "\n")+1 {
					t.Fatalf("%q: problem %v names no line of the file", line, p)
				}
			}
		}
	})
}
