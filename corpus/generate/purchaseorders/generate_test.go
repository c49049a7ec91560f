package purchaseorders

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/corpus"
)

// TestGenerate_Plan checks the corpus's make-up: 300 documents in the
// default corpus's classes, each inside its class's token range, half of
// them Portuguese, the missing values and unsigned orders in their counts,
// every expected object keyed by FieldNames in order.
func TestGenerate_Plan(t *testing.T) {
	docs, err := Generate(DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != Count {
		t.Fatalf("%d documents, want %d", len(docs), Count)
	}
	classes, langs, nulls, unsigned := map[corpus.LengthClass]int{}, map[string]int{}, map[string]int{}, 0
	ids := map[string]bool{}
	for _, d := range docs {
		classes[d.LengthClass]++
		langs[d.Lang]++
		if ids[d.ID] {
			t.Errorf("%s: duplicate id", d.ID)
		}
		ids[d.ID] = true
		if c, ok := corpus.ClassOf(corpus.ApproxTokens(d.Text)); !ok || c != d.LengthClass {
			t.Errorf("%s: %d tokens, class %s, want %s", d.ID, corpus.ApproxTokens(d.Text), c, d.LengthClass)
		}
		dec := json.NewDecoder(strings.NewReader(d.Expected.Object))
		var keys []string
		var m map[string]any
		if err := json.Unmarshal([]byte(d.Expected.Object), &m); err != nil {
			t.Fatalf("%s: expected %s: %v", d.ID, d.Expected.Object, err)
		}
		dec.Token()
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, k.(string))
			var skip json.RawMessage
			dec.Decode(&skip)
		}
		if !reflect.DeepEqual(keys, FieldNames) {
			t.Errorf("%s: expected keys %v, want %v", d.ID, keys, FieldNames)
		}
		for k, v := range m {
			if v == nil {
				nulls[k]++
			}
		}
		if m["signed"] == false {
			unsigned++
		}
		if lines, _ := m["lines"].([]any); len(lines) == 0 {
			t.Errorf("%s: no lines", d.ID)
		}
	}
	want := map[corpus.LengthClass]int{corpus.Short: 100, corpus.Usual: 150, corpus.Long: 50}
	if !reflect.DeepEqual(classes, want) {
		t.Errorf("classes %v, want %v", classes, want)
	}
	if langs["pt-BR"] != PTCount || langs["en"] != Count-PTCount {
		t.Errorf("languages %v, want %d pt-BR", langs, PTCount)
	}
	if wantNulls := map[string]int{"supplier_tax_id": NoTaxIDCount, "delivery_date": NoDeliveryCount}; !reflect.DeepEqual(nulls, wantNulls) {
		t.Errorf("null expectations %v, want %v", nulls, wantNulls)
	}
	if unsigned != UnsignedCount {
		t.Errorf("%d unsigned orders, want %d", unsigned, UnsignedCount)
	}
}

// TestGenerate_Deterministic: the same seed gives the same corpus, another
// seed another one.
func TestGenerate_Deterministic(t *testing.T) {
	a, _ := Generate(DefaultSeed)
	b, _ := Generate(DefaultSeed)
	c, _ := Generate(DefaultSeed + 1)
	if !reflect.DeepEqual(a, b) {
		t.Error("two generations with one seed differ")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("two seeds give the same corpus")
	}
}

// TestGenerate_LocaleForms: Portuguese orders write totals 1.234,56 and
// English ones 1,234.56, and the supplier's name is written in capitals
// (some without accents) on a share of orders, for the normalised match.
func TestGenerate_LocaleForms(t *testing.T) {
	docs, _ := Generate(DefaultSeed)
	upper := 0
	for _, d := range docs {
		var m map[string]any
		_ = json.Unmarshal([]byte(d.Expected.Object), &m)
		total := m["total"].(string)
		whole, cents, _ := strings.Cut(total, ".")
		if len(whole) < 4 {
			continue
		}
		grouped := whole[:len(whole)-3] + "," + whole[len(whole)-3:] + "." + cents
		if d.Lang == "pt-BR" {
			grouped = whole[:len(whole)-3] + "." + whole[len(whole)-3:] + "," + cents
		}
		if len(whole) < 7 && !strings.Contains(d.Text, grouped) {
			t.Errorf("%s (%s): total %s not written %s", d.ID, d.Lang, total, grouped)
		}
		name := m["supplier_name"].(string)
		if !strings.Contains(d.Text, name) {
			upper++
		}
	}
	if upper < 40 || upper > 110 {
		t.Errorf("%d orders write the supplier's name otherwise than registered: want about a quarter", upper)
	}
}
