package corpus

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func str(s string) *string { return &s }

// sampleDocs is a small valid corpus.
func sampleDocs() []Document {
	return []Document{
		{ID: "doc-0001", Text: "Cloudlift, Inc.\nInvoice date: March 12, 2025\nTotal due: USD 1,234.56", LengthClass: Short,
			Expected: Expected{Date: str("2025-03-12"), Amount: str("1234.56"), Category: str("software")}},
		{ID: "doc-0002", Text: "Papelaria Central\nData de emissão: 12/03/2025\nNOTA DE CRÉDITO\nTotal: -R$ 80,00", LengthClass: Short,
			Expected: Expected{Date: str("2025-03-12"), Amount: str("-80.00"), Category: str("office_supplies")}},
		{ID: "doc-0003", Text: "DARF\nVencimento: 31/03/2025\nValor total: R$ 310,00", LengthClass: Short,
			Expected: Expected{Date: nil, Amount: str("310.00"), Category: str("taxes")}},
	}
}

// mustWriteDir writes docs as a corpus directory in a temporary directory.
func mustWriteDir(tb testing.TB, docs []Document) string {
	tb.Helper()
	dir := tb.TempDir()
	if err := WriteDir(dir, docs, DefaultCategories); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func TestLoad_Dir(t *testing.T) {
	docs := sampleDocs()
	dir := mustWriteDir(t, docs)
	c, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(c.Documents), len(docs); got != want {
		t.Fatalf("documents = %d, want %d", got, want)
	}
	if got, want := c.Manifest.SHA256, ComputeManifest(docs, DefaultCategories, nil).SHA256; got != want {
		t.Errorf("sha256 = %s, want %s", got, want)
	}
	if got, want := c.Manifest.Missing["date"], 1; got != want {
		t.Errorf("missing date = %d, want %d", got, want)
	}
	if got, want := *c.Documents[1].Expected.Amount, "-80.00"; got != want {
		t.Errorf("credit note amount = %s, want %s", got, want)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings = %q, want none", c.Warnings)
	}
}

func TestLoad_BareJSONL(t *testing.T) {
	data, err := EncodeDocuments(sampleDocs())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mine.jsonl")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(c.Manifest.Categories, ","), strings.Join(DefaultCategories, ","); got != want {
		t.Errorf("categories = %s, want the default enum", got)
	}
	if got, want := c.Manifest.SHA256, ComputeManifest(sampleDocs(), DefaultCategories, nil).SHA256; got != want {
		t.Errorf("sha256 of the bare file = %s, want %s (same records, same hash)", got, want)
	}
}

// TestLoad_BOM is issue 17's item 9: a file saved with a UTF-8 byte-order
// mark loads (same records, same hash), with a warning naming the mark.
func TestLoad_BOM(t *testing.T) {
	data, err := EncodeDocuments(sampleDocs())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bom.jsonl")
	if err := os.WriteFile(path, append([]byte("\xEF\xBB\xBF"), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatalf("Load of a file with a BOM: %v", err)
	}
	if got, want := c.Manifest.SHA256, ComputeManifest(sampleDocs(), DefaultCategories, nil).SHA256; got != want {
		t.Errorf("sha256 = %s, want %s (the mark is not part of a record)", got, want)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "byte-order mark") {
		t.Errorf("warnings = %q, want one naming the byte-order mark", c.Warnings)
	}
}

// TestLoad_Bad checks that every broken line of testdata/bad gets exactly
// one problem naming its line and field, and that nothing else is reported.
func TestLoad_Bad(t *testing.T) {
	_, err := Load("testdata/bad")
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("Load error = %v, want a *LoadError", err)
	}
	want := []struct {
		line    int
		field   string
		message string
	}{
		{3, "id", "duplicate id"},
		{4, "(line)", "not valid JSON"},
		{5, "expected.amount", "missing key"},
		{6, "text", "invalid UTF-8"},
		{7, "text", "empty text"},
		{8, "expected.category", `"groceries" is not in the category enum`},
	}
	if len(le.Problems) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(le.Problems), len(want), le)
	}
	for i, w := range want {
		p := le.Problems[i]
		if p.Line != w.line || p.Field != w.field || !strings.Contains(p.Message, w.message) {
			t.Errorf("problem %d = %s; want line %d, field %s, message containing %q", i, p, w.line, w.field, w.message)
		}
		if !strings.HasPrefix(p.String(), filepath.Join("testdata", "bad", DocumentsFile)+":") {
			t.Errorf("problem %d = %s; want FILE:LINE: field: problem", i, p)
		}
	}
}

// TestCheck_Golden pins what `extractbench corpus check` prints for the bad corpus.
func TestCheck_Golden(t *testing.T) {
	r, err := Check("testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	if r.OK() {
		t.Fatal("Check of a bad corpus is OK")
	}
	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "bad.check.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden (run with -update): %v", err)
	}
	if got := buf.String(); got != string(want) {
		t.Errorf("Check output differs from %s (run with -update if intended):\n%s", golden, got)
	}
	if got, want := len(r.DuplicateTexts), 1; got != want {
		t.Errorf("duplicate texts = %d, want %d (doc-0009 repeats doc-0001)", got, want)
	}
}

func TestLoad_ManifestMismatch(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(docs []Document) []Document
		fields []string
	}{
		{"edited text", func(d []Document) []Document { d[0].Text += " (edited)"; return d }, []string{"record_sha256.doc-0001"}},
		{"changed expectation", func(d []Document) []Document { d[1].Expected.Amount = str("-8.00"); return d }, []string{"record_sha256.doc-0002"}},
		{"removed record", func(d []Document) []Document { return d[:2] }, []string{"count", "classes.short", "category_counts.taxes", "missing.date", "record_sha256.doc-0003"}},
		{"reordered", func(d []Document) []Document { d[0], d[1] = d[1], d[0]; return d }, []string{"sha256"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := mustWriteDir(t, sampleDocs())
			data, err := EncodeDocuments(tt.edit(sampleDocs()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, DocumentsFile), data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = Load(dir)
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("Load error = %v, want a *LoadError", err)
			}
			var got []string
			for _, p := range le.Problems {
				got = append(got, p.Field)
				if p.File != filepath.Join(dir, ManifestFile) {
					t.Errorf("problem %s: want it on %s", p, ManifestFile)
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.fields, " ") {
				t.Errorf("problem fields = %v, want %v\n%v", got, tt.fields, le)
			}
		})
	}
}

func TestLoad_ManifestCategoryEnum(t *testing.T) {
	dir := mustWriteDir(t, sampleDocs())
	// A manifest with its own enum: categories outside it are errors.
	m := ComputeManifest(sampleDocs(), []string{"software", "taxes", "office_supplies"}, nil)
	b, err := EncodeManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err != nil {
		t.Fatalf("custom enum holding every category: %v", err)
	}
	m.Categories = []string{"software", "taxes"}
	if b, err = EncodeManifest(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(dir)
	if err == nil || !strings.Contains(err.Error(), ":2: expected.category:") {
		t.Errorf("Load error = %v, want line 2 category outside the enum", err)
	}
}

func TestParseLine(t *testing.T) {
	enum := map[string]bool{"software": true}
	tests := []struct {
		name   string
		line   string
		fields []string
	}{
		{"valid", `{"id":"a","text":"x","length_class":"short","expected":{"date":null,"amount":null,"category":"software"}}`, nil},
		{"blank", `   `, []string{"(line)"}},
		{"not an object", `[1,2]`, []string{"(root)"}},
		{"two values", `{} {}`, []string{"(line)"}},
		{"unreal day", `{"id":"a","text":"x","length_class":"short","expected":{"date":"2025-02-30","amount":null,"category":"software"}}`, []string{"expected.date"}},
		{"amount as number", `{"id":"a","text":"x","length_class":"short","expected":{"date":null,"amount":12.5,"category":"software"}}`, []string{"expected.amount"}},
		{"amount with comma", `{"id":"a","text":"x","length_class":"short","expected":{"date":null,"amount":"1.234,56","category":"software"}}`, []string{"expected.amount"}},
		{"unknown class", `{"id":"a","text":"x","length_class":"huge","expected":{"date":null,"amount":null,"category":"software"}}`, []string{"length_class"}},
		{"extra key", `{"id":"a","text":"x","length_class":"short","source":"pt","expected":{"date":null,"amount":null,"category":"software"}}`, []string{"(root)"}},
		{"bad lang", `{"id":"a","text":"x","length_class":"short","lang":"english!","expected":{"date":null,"amount":null,"category":"software"}}`, []string{"lang"}},
		{"blank text", `{"id":"a","text":"  \n ","length_class":"short","expected":{"date":null,"amount":null,"category":"software"}}`, []string{"text"}},
		{"closing brace after", `{"id":"a","text":"x","length_class":"short","expected":{"date":null,"amount":null,"category":"software"}}}`, []string{"(line)"}},
		// Duplicate keys: eval refuses an answer with one; a record is refused too.
		{"duplicate key", `{"id":"a","text":"x","text":"y","length_class":"short","expected":{"date":null,"amount":null,"category":"software"}}`, []string{"text"}},
		{"duplicate key, escaped", `{"id":"a","text":"x","length_class":"short","expected":{"date":null,"amount":null,"category":"software","c\u0061tegory":null}}`, []string{"expected.category"}},
		{"duplicate nested key", `{"id":"a","text":"x","length_class":"short","expected":{"date":null,"amount":"1.00","amount":"2.00","category":"software"}}`, []string{"expected.amount"}},
		{"same key in two objects", `{"id":"a","text":"x","length_class":"short","expected":{"date":null,"amount":null,"category":"software"},"x":[{"id":1},{"id":2}]}`, []string{"(root)"}},
		// Amounts the scorer could never accept an answer for (over 41 digits before the point).
		{"amount of 10^60", `{"id":"a","text":"x","length_class":"short","expected":{"date":null,"amount":"1` + strings.Repeat("0", 60) + `","category":"software"}}`, []string{"expected.amount"}},
		{"amount of 42 digits", `{"id":"a","text":"x","length_class":"short","expected":{"date":null,"amount":"-` + strings.Repeat("9", 42) + `.5","category":"software"}}`, []string{"expected.amount"}},
		{"amount of 41 digits", `{"id":"a","text":"x","length_class":"short","expected":{"date":null,"amount":"-` + strings.Repeat("9", 41) + `.99","category":"software"}}`, nil},
		{"amount with leading zeros", `{"id":"a","text":"x","length_class":"short","expected":{"date":null,"amount":"` + strings.Repeat("0", 60) + `12.50","category":"software"}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, probs := ParseLine([]byte(tt.line), enum)
			var got []string
			for _, p := range probs {
				got = append(got, p.Field)
			}
			if strings.Join(got, " ") != strings.Join(tt.fields, " ") {
				t.Errorf("fields = %v, want %v (%v)", got, tt.fields, probs)
			}
		})
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add([]byte(`{"id":"a","text":"x","length_class":"short","expected":{"date":null,"amount":null,"category":"software"}}`))
	f.Add([]byte(`{"id":"a","text":"\xff","length_class":"long","expected":{}}`))
	f.Add([]byte(`{"id":`))
	enum := map[string]bool{"software": true}
	f.Fuzz(func(t *testing.T, line []byte) {
		d, probs := ParseLine(line, enum)
		if d == nil && len(probs) == 0 {
			t.Fatal("no document and no problem")
		}
		if d != nil && len(probs) == 0 {
			// A clean line must round-trip through the writer to an equal record.
			b, err := EncodeDocuments([]Document{*d})
			if err != nil {
				t.Fatal(err)
			}
			d2, probs2 := ParseLine(bytes.TrimSuffix(b, []byte("\n")), enum)
			if len(probs2) != 0 || RecordHash(*d2) != RecordHash(*d) {
				t.Fatalf("round trip of %q: %v", line, probs2)
			}
		}
	})
}
