package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorpusImport_JSONL: import writes a corpus directory that a run of
// the protocol loads (corpus check -protocol passes on it), its manifest
// counting classes and naming the fields. The old command had no import.
func TestCorpusImport_JSONL(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, dir, "orders.jsonl", strings.Join([]string{
		`{"id":"po-1","text":"Pedido A-1","lang":"pt-BR","expected":{"order_no":"A-1","total":"1.234,50","currency":"BRL","issued":"2025-03-01","lines":[1,2],"signed":true}}`,
		`{"id":"po-2","text":"Order B-2","class":"usual","expected":{"order_no":null,"total":12,"currency":null,"issued":null,"lines":[],"signed":false}}`,
	}, "\n")+"\n")
	out := filepath.Join(dir, "corpus")
	proto := writeFile(t, dir, "po.yaml", strings.Replace(poProtocol, "%CORPUS%", "corpus", 1))
	code, stdout, stderr := runCLI(t, "corpus", "import", "-protocol", proto, "-out", out, src)
	if code != exitOK {
		t.Fatalf("import: exit %d: %s%s", code, stdout, stderr)
	}
	if want := "wrote " + out + ": 2 documents (short 1, usual 1, long 0), fields order_no, total, currency, issued, lines, signed; sha256 "; !strings.HasPrefix(stdout, want) {
		t.Errorf("stdout = %q, want it to start %q", stdout, want)
	}
	man, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"field_names": [`, `"pt-BR": 1`, `"usual": 1`} {
		if !strings.Contains(string(man), want) {
			t.Errorf("manifest.json lacks %s:\n%s", want, man)
		}
	}
	if code, stdout, stderr := runCLI(t, "corpus", "check", "-protocol", proto); code != exitOK {
		t.Errorf("check of the imported corpus: exit %d: %s%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runCLI(t, "corpus", "check", out); code != exitOK || !strings.Contains(stdout, "fields     order_no, total, currency, issued, lines, signed") {
		t.Errorf("check without -protocol (by the manifest's fields): exit %d: %s%s", code, stdout, stderr)
	}
	if code, _, stderr := runCLI(t, "corpus", "import", "-protocol", proto, "-out", out, src); code != exitUsage || !strings.Contains(stderr, "is not empty") {
		t.Errorf("import into the written directory: exit %d, %s; want it refused", code, stderr)
	}
}

// TestCorpusImport_CSVBadRows: a CSV with bad rows prints every
// FILE:LINE: FIELD: WHY, exits 2 and writes nothing.
func TestCorpusImport_CSVBadRows(t *testing.T) {
	dir := t.TempDir()
	texts := filepath.Join(dir, "texts")
	if err := os.MkdirAll(texts, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, texts, "po-1.txt", "Pedido A-1")
	writeFile(t, texts, "po-2.txt", "Order B-2")
	src := writeFile(t, dir, "expected.csv", "id,order_no,total,currency,issued,lines,signed\n"+
		"po-1,A-1,\"1.234,50\",BRL,2025-03-01,\"[1,2]\",true\n"+
		"po-1,A-1,\"1.234,50\",BRL,2025-03-01,\"[1,2]\",true\n"+
		"po-2,B-2,12.5,EUR,2025-02-30,[x],\n")
	proto := writeFile(t, dir, "po.yaml", strings.Replace(poProtocol, "%CORPUS%", "corpus", 1))
	out := filepath.Join(dir, "corpus")
	code, stdout, stderr := runCLI(t, "corpus", "import", "-protocol", proto, "-texts", texts, "-out", out, src)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d: %s%s", code, exitUsage, stdout, stderr)
	}
	want := []string{
		src + `:3: id: duplicate id "po-1", first on line 2; every id must be unique`,
		src + `:4: total: "12.5" is not a decimal in the pt form (1.234,56 or 1234,56)`,
		src + `:4: currency: "EUR" is not one of the field's values (BRL, USD)`,
		src + `:4: issued: "2025-02-30" is not a real day written YYYY-MM-DD`,
		src + `:4: lines: "[x]" is not valid JSON (a list or object is written as JSON in its cell)`,
		src + `:4: signed: null, but the field is required (every document has a value)`,
	}
	if got := strings.TrimSpace(stdout); got != strings.Join(want, "\n") {
		t.Errorf("stdout:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if !strings.Contains(stderr, "6 problem(s); nothing written") {
		t.Errorf("stderr = %q", stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s exists after a refused import (%v)", out, err)
	}
	if code, _, stderr := runCLI(t, "corpus", "import", "-out", out, src); code != exitUsage || !strings.Contains(stderr, "needs -texts DIR") {
		t.Errorf("CSV without -texts: exit %d, %s", code, stderr)
	}
}
