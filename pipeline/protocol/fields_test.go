package protocol

import (
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
)

// fieldsProtocol is validProtocol with a fields: list appended; its
// first field is on line 12.
func fieldsProtocol(fields string) string { return validProtocol + "fields:\n" + fields }

// TestParseProtocol_Fields: a protocol's fields decode with every option
// of their type, and names that are SQL keywords or odd punctuation pass
// as variant names do.
func TestParseProtocol_Fields(t *testing.T) {
	p, err := Parse([]byte(fieldsProtocol(`  - {name: select, type: string, match: normalised, normalise: [case, accents]}
  - {name: order, type: enum, values: [EUR, USD]}
  - {name: from, type: date, formats: ["DD/MM/YYYY", "YYYY-MM-DD"]}
  - {name: "-x.y_z", type: decimal, abs_tolerance: "0.01", rel_tolerance: "0.001", locale: pt}
  - {name: tax_id, pointer: /supplier/tax_id, type: string}
  - {name: name, pointer: /supplier/name, type: string, missing: skip}
  - {name: a-b, pointer: "/a~1b/c~0d", type: integer, required: true}
  - {name: signed, type: boolean}
  - {name: note, pointer: "/it's <b>&\"x\" --; drop", type: string}
  - {name: lines, type: list, order: sequence, items: {type: decimal, locale: en}}
`)), "p.yaml", ".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range p.Fields {
		names = append(names, f.Name)
	}
	if got, want := strings.Join(names, " "), "select order from -x.y_z tax_id name a-b signed note lines"; got != want {
		t.Errorf("names = %s, want %s", got, want)
	}
	if f := p.Fields[9]; f.Items == nil || f.Items.Type != extractbench.FieldDecimal || f.Order != extractbench.OrderSequence {
		t.Errorf("list field = %+v", f)
	}
	if got, want := p.Fields[8].Pointer, `/it's <b>&"x" --; drop`; got != want {
		t.Errorf("pointer %q, want %q", got, want)
	}
	if !strings.Contains(string(p.Canonical()), `"fields":[{"name":"select"`) {
		t.Errorf("canonical form lacks the fields: %s", p.Canonical())
	}
}

func TestParseProtocol_FieldErrors(t *testing.T) {
	tests := []struct {
		name   string
		fields string
		want   []string
	}{
		{"duplicate name", "  - {name: total, type: decimal}\n  - {name: total, type: string, pointer: /t}\n",
			[]string{`p.yaml:13: fields.1.name: duplicate field name "total" (fields.0 has it)`}},
		{"duplicate pointer", "  - {name: a, type: string, pointer: /x}\n  - {name: b, type: string, pointer: /x}\n",
			[]string{"p.yaml:13: fields.1.pointer: field b answers at /x, as field a does"}},
		{"pointer equal to another's name", "  - {name: x, type: string}\n  - {name: b, type: string, pointer: /x}\n",
			[]string{"p.yaml:13: fields.1.pointer: field b answers at /x, as field x does"}},
		{"pointer inside another field", "  - {name: supplier, type: string}\n  - {name: tax, type: string, pointer: /supplier/tax_id}\n",
			[]string{"p.yaml:13: fields.1.pointer: /supplier/tax_id lies inside /supplier, the value of field supplier"}},
		{"values outside enum", "  - {name: c, type: string, values: [a]}\n",
			[]string{"p.yaml:12: fields.0.values: only for type enum (this field's type is string)"}},
		{"enum without values", "  - {name: c, type: enum}\n",
			[]string{"p.yaml:12: fields.0.type: an enum lists its values"}},
		{"items outside list", "  - {name: c, type: string, items: {type: string}}\n",
			[]string{"p.yaml:12: fields.0.items: only for type list"}},
		{"list without items", "  - {name: c, type: list}\n",
			[]string{"p.yaml:12: fields.0.type: a list states its items' rule"}},
		{"list of lists", "  - {name: c, type: list, items: {type: list, items: {type: string}}}\n",
			[]string{"p.yaml:12: fields.0.items.type: a list's items are scalars"}},
		{"items with a name", "  - {name: c, type: list, items: {type: string, name: x, pointer: /x}}\n",
			[]string{"fields.0.items.name: not for a list's items", "fields.0.items.pointer: not for a list's items"}},
		{"items option of the wrong type", "  - {name: c, type: list, items: {type: string, locale: pt}}\n",
			[]string{"p.yaml:12: fields.0.items.locale: only for type decimal (this field's type is string)"}},
		{"formats outside date", "  - {name: c, type: string, formats: [YYYY-MM-DD]}\n",
			[]string{"p.yaml:12: fields.0.formats: only for type date"}},
		{"bad date layout", "  - name: d\n    type: date\n    formats: [DD/MM/YYYY, MM/YY, YYYY-MM-DD-DD]\n",
			[]string{`p.yaml:14: fields.0.formats.1: layout "MM/YY" must hold YYYY exactly once`, `fields.0.formats.2: layout "YYYY-MM-DD-DD" must hold DD exactly once`}},
		{"tolerance outside decimal", "  - {name: n, type: integer, abs_tolerance: \"1\"}\n",
			[]string{"p.yaml:12: fields.0.abs_tolerance: only for type decimal (this field's type is integer)"}},
		{"locale outside decimal", "  - {name: n, type: date, locale: pt}\n",
			[]string{"fields.0.locale: only for type decimal"}},
		{"match outside string", "  - {name: c, type: enum, values: [a], match: normalised}\n",
			[]string{"fields.0.match: only for type string (this field's type is enum)"}},
		{"normalise with exact match", "  - {name: c, type: string, normalise: [case]}\n",
			[]string{"fields.0.normalise: only with match: normalised"}},
		{"order outside list", "  - {name: c, type: string, order: set}\n",
			[]string{"fields.0.order: only for type list"}},
		{"skip and required", "  - {name: c, type: string, missing: skip, required: true}\n",
			[]string{"fields.0.missing: skip is for a null expectation"}},
		{"name with a space (schema)", "  - {name: \"drop table\", type: string}\n",
			[]string{"p.yaml:12: fields.0.name:"}},
		{"name with markup (schema)", "  - {name: \"<b>\", type: string}\n",
			[]string{"p.yaml:12: fields.0.name:"}},
		{"bad pointer escape (schema)", "  - {name: c, type: string, pointer: /a~2}\n",
			[]string{"p.yaml:12: fields.0.pointer:"}},
		{"schema and semantic problems, all reported", "  - {name: c, type: string, order: set}\n  - {name: d, type: decimel}\n",
			[]string{"p.yaml:12: fields.0.order: only for type list", "p.yaml:13: fields.1.type"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(fieldsProtocol(tt.fields)), "p.yaml", ".")
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestParseProtocol_NoFields: a protocol without fields keeps its
// canonical form free of the key, so its fingerprint does not change.
func TestParseProtocol_NoFields(t *testing.T) {
	p, err := Parse([]byte(validProtocol), "p.yaml", ".")
	if err != nil {
		t.Fatal(err)
	}
	if p.Fields != nil || strings.Contains(string(p.Canonical()), `"fields"`) {
		t.Errorf("fields = %v, canonical %s", p.Fields, p.Canonical())
	}
}

// TestParseProtocol_FieldsNeedTheirPrompt: a protocol that declares other
// fields than the default's and leaves the prompt out (a minimal protocol
// takes the default's, which asks for date, amount and category) is
// refused at prompt.user; the default fields may keep it.
func TestParseProtocol_FieldsNeedTheirPrompt(t *testing.T) {
	minimal := "variants:\n  - {name: a, engine: {url: builtin, model: sim-8b}}\nfields:\n"
	_, err := Parse([]byte(minimal+"  - {name: total, type: decimal}\n"), "p.yaml", ".")
	if err == nil || !strings.Contains(err.Error(), "prompt.user: the default prompt asks for date, amount and category, not the declared fields: write a prompt that names them (total)") {
		t.Errorf("err = %v, want prompt.user refused", err)
	}
	defaults := "  - {name: date, type: date}\n  - {name: amount, type: decimal}\n  - {name: category, type: string}\n"
	if _, err := Parse([]byte(minimal+defaults), "p.yaml", "."); err != nil {
		t.Errorf("the default fields with the default prompt: %v", err)
	}
}
