package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/pipeline"
)

// fieldsProtocol is a protocol that declares its own fields, over corpus.
func fieldsProtocol(corpusPath string) string {
	return fmt.Sprintf(`name: po
corpus: %s
fields:
  - {name: order_no, type: string}
  - {name: total, type: decimal, locale: pt}
  - {name: signed, type: boolean, required: true}
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64}
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
variants:
  - name: good
    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0}}
`, corpusPath)
}

// TestRun_CorpusDisagreesWithFields: a corpus whose expectations do not
// follow the protocol's declared fields stops the run before anything is
// measured: one ValidationError naming each file:line and field, and no
// results directory.
func TestRun_CorpusDisagreesWithFields(t *testing.T) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "po.jsonl")
	lines := []string{
		`{"id":"po-1","text":"Pedido A-1, total 1.234,50, assinado","length_class":"short","expected":{"order_no":"A-1","total":"1.234,50","signed":true}}`,
		`{"id":"po-2","text":"Pedido A-2, total 12,5","length_class":"short","expected":{"order_no":"A-2","total":"12.5","signed":false}}`,
		`{"id":"po-3","text":"Pedido A-3","length_class":"short","expected":{"order_no":3,"total":null,"signed":null,"currency":"BRL"}}`,
	}
	if err := os.WriteFile(docs, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	proto := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(proto, []byte(fieldsProtocol(docs)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	_, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true})
	var ve *pipeline.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v (%T), want a ValidationError", err, err)
	}
	for _, want := range []string{
		docs + `:2: expected.total: "12.5" is not a decimal in the pt form`,
		docs + `:3: expected.currency: not a declared field; the fields are order_no, total, signed`,
		docs + `:3: expected.order_no: want a string, got the number 3`,
		docs + `:3: expected.signed: null, but the field is required`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if got, want := len(ve.Problems), 4; got != want {
		t.Errorf("%d problems, want %d:\n%v", got, want, err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("results directory %s exists after a refused run (%v)", out, err)
	}
}

// TestRun_DefaultCorpusWithOtherFields: the default corpus under a
// protocol that declares other fields is refused with the difference.
func TestRun_DefaultCorpusWithOtherFields(t *testing.T) {
	dir := t.TempDir()
	proto := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(proto, []byte(fieldsProtocol("default")), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	_, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true})
	want := "field_names: the expectations follow the default fields date, amount, category; the protocol declares order_no, total, signed"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err = %v, want it to say %q", err, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("results directory %s exists after a refused run (%v)", out, err)
	}
}
