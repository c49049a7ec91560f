package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/pipeline/protocol"
)

// TestLoadCorpus_DeclaredFields: under declared fields the corpus is
// opened by them, and a document sent carries its expected object; the
// default corpus under fields that declare date, amount, category keeps
// its hash.
func TestLoadCorpus_DeclaredFields(t *testing.T) {
	dir := t.TempDir()
	line := `{"id":"po-1","text":"Pedido A-1","length_class":"short","expected":{"total":"1.234,50","order_no":"A-1"}}`
	if err := os.WriteFile(filepath.Join(dir, "po.jsonl"), []byte(line+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	parse := func(corpusPath, fields string) *protocol.Protocol {
		t.Helper()
		p, err := protocol.Parse([]byte(`name: po
corpus: `+corpusPath+`
fields:
`+fields+`
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64}
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
variants:
  - name: good
    engine: {url: builtin, model: sim-8b}
`), "p.yaml", dir)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	c, err := loadCorpus(parse("po.jsonl", "  - {name: order_no, type: string}\n  - {name: total, type: decimal, locale: pt}"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Resolve(c.Doc(0))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Expected.Object, `{"order_no":"A-1","total":"1.234,50"}`; got != want {
		t.Errorf("Object = %s, want %s", got, want)
	}
	if got, want := strings.Join(c.Fields, ","), "order_no,total"; got != want {
		t.Errorf("Fields = %s, want %s", got, want)
	}

	def, err := corpus.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	c, err = loadCorpus(parse("default", "  - {name: date, type: date}\n  - {name: amount, type: decimal}\n  - {name: category, type: enum, values: [utilities, telecom, software, office_supplies, travel, meals, rent, professional_services, taxes, healthcare]}"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Manifest.SHA256, def.Manifest.SHA256; got != want {
		t.Errorf("default corpus under declared date, amount, category: sha256 %s, want %s", got, want)
	}
}
