package main

import (
	"strings"
	"testing"
)

// poProtocol declares purchase-order fields over the corpus %CORPUS%.
const poProtocol = `name: po
corpus: %CORPUS%
fields:
  - {name: order_no, type: string}
  - {name: total, type: decimal, locale: pt}
  - {name: currency, type: enum, values: [BRL, USD]}
  - {name: issued, type: date}
  - {name: lines, type: list, items: {type: integer}}
  - {name: signed, type: boolean, required: true}
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64}
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
variants:
  - name: good
    engine: {url: builtin, model: sim-8b}
`

// TestCorpusCheck_Protocol: corpus check -protocol judges every
// expectation by the declared fields: one summary line and exit 0 for a
// corpus that follows them, every FILE:LINE: FIELD: WHY and exit 2 else.
// The old command took no -protocol and judged date, amount, category.
func TestCorpusCheck_Protocol(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "good.jsonl", strings.Join([]string{
		`{"id":"po-1","text":"Pedido A-1","length_class":"short","expected":{"order_no":"A-1","total":"1.234,50","currency":"BRL","issued":"2025-03-01","lines":[1,2],"signed":true}}`,
		`{"id":"po-2","text":"Order B-2","length_class":"short","expected":{"order_no":null,"total":12,"currency":null,"issued":null,"lines":[],"signed":false}}`,
	}, "\n")+"\n")
	bad := writeFile(t, dir, "bad.jsonl", strings.Join([]string{
		`{"id":"po-1","text":"Pedido A-1","length_class":"short","expected":{"order_no":"A-1","total":"1,234.50","currency":"EUR","issued":"01/03/2025","lines":[1.5],"signed":"yes"}}`,
		`{"id":"po-2","text":"Order B-2","length_class":"short","expected":{"order_no":"B-2","total":null,"currency":null,"issued":null,"signed":false}}`,
	}, "\n")+"\n")
	proto := writeFile(t, dir, "po.yaml", strings.Replace(poProtocol, "%CORPUS%", "good.jsonl", 1))

	code, out, stderr := runCLI(t, "corpus", "check", "-protocol", proto)
	if code != exitOK {
		t.Fatalf("good corpus (the protocol's own): exit %d: %s%s", code, out, stderr)
	}
	if got := strings.TrimSpace(out); strings.Count(got, "\n") != 0 || !strings.Contains(got, "ok: 2 documents, every expectation follows the fields order_no, total, currency, issued, lines, signed") {
		t.Errorf("want one summary line, got:\n%s", out)
	}

	code, out, stderr = runCLI(t, "corpus", "check", "-protocol", proto, bad)
	if code != exitUsage {
		t.Fatalf("bad corpus: exit %d, want %d: %s%s", code, exitUsage, out, stderr)
	}
	want := []string{
		bad + `:1: expected.total: "1,234.50" is not a decimal in the pt form (1.234,56 or 1234,56)`,
		bad + `:1: expected.currency: "EUR" is not one of the field's values (BRL, USD)`,
		bad + `:1: expected.issued: "01/03/2025" is not a real day written YYYY-MM-DD`,
		bad + `:1: expected.lines: item 0: 1.5 is not a whole number`,
		bad + `:1: expected.signed: want true or false, got the string "yes"`,
		bad + `:2: expected.lines: missing key; write null when the document lacks it`,
	}
	if got := strings.TrimSpace(out); got != strings.Join(want, "\n") {
		t.Errorf("stdout:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	if !strings.Contains(stderr, "6 problem(s) under "+proto) {
		t.Errorf("stderr = %q, want the count of problems", stderr)
	}

	// The default protocol's fields over the default corpus: unchanged.
	def := writeFile(t, dir, "def.yaml", strings.NewReplacer("%CORPUS%", "default", "%MIN%", "0.5").Replace(smallProtocol))
	if code, out, stderr := runCLI(t, "corpus", "check", "-protocol", def, "../../corpus/default"); code != exitOK || !strings.Contains(out, "ok: 300 documents, every expectation follows the fields date, amount, category") {
		t.Errorf("default corpus: exit %d: %s%s", code, out, stderr)
	}
	if code, _, stderr := runCLI(t, "corpus", "check"); code != exitUsage || !strings.Contains(stderr, "want exactly one PATH") {
		t.Errorf("no PATH, no -protocol: exit %d, %s", code, stderr)
	}
}
