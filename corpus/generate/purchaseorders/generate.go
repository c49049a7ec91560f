// Package purchaseorders writes the purchase-order example corpus
// deterministically: Brazilian Portuguese (and, for a share of suppliers,
// European Portuguese) and English purchase orders, in the default
// corpus's three length classes and proportions, with their reviewed
// expectations for the declared fields FieldNames (a nested supplier, a
// list of line items, a currency, a decimal total, two dates, a boolean,
// and legitimately missing values). The same seed always gives the same
// bytes, so that the committed examples/purchase-orders/corpus can be
// proved equal to the generator's output.
package purchaseorders

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/corpus/generate"
)

// DefaultSeed is the seed the committed example corpus was generated with.
const DefaultSeed int64 = 1

// Count is the size of the corpus, in the default corpus's classes.
const Count = generate.ShortCount + generate.UsualCount + generate.LongCount

// Shares of documents that legitimately lack a value, or say no.
const (
	NoTaxIDCount    = 36  // the supplier's tax id is not on the order
	NoDeliveryCount = 90  // no delivery date (or "to be agreed")
	UnsignedCount   = 75  // signed: false
	PTCount         = 150 // Portuguese documents; the rest are English
)

// FieldNames are the declared fields, in the protocol's order: the keys
// of every document's expected object.
var FieldNames = []string{
	"order_number", "supplier_name", "supplier_tax_id", "lines", "currency",
	"total", "order_date", "delivery_date", "signed",
}

// FieldDefinitions say what each field is; the manifest carries them.
var FieldDefinitions = map[string]string{
	"order_number":    "The purchase order's number, as written.",
	"supplier_name":   "The supplier's registered name (case, accents and punctuation as the registry writes them).",
	"supplier_tax_id": "The supplier's tax id (CNPJ, NIF or EIN) as written; null when the order does not show it.",
	"lines":           "The SKUs (codes) of the ordered lines, as a set.",
	"currency":        "The order's currency: BRL, EUR or USD.",
	"total":           "The order total after freight and taxes, as a plain decimal string.",
	"order_date":      "The date the order was issued, YYYY-MM-DD.",
	"delivery_date":   "The requested delivery date, YYYY-MM-DD; null when the order states none.",
	"signed":          "Whether the order carries an authorised signature.",
}

// spec is what the plan decides for one document.
type spec struct {
	class                         corpus.LengthClass
	pt                            bool
	noTaxID, noDelivery, unsigned bool
}

// plan assigns classes, languages and the missing values, each from its
// own shuffle so that they spread over one another.
func plan(r *rand.Rand) []spec {
	specs := make([]spec, 0, Count)
	for range generate.ShortCount {
		specs = append(specs, spec{class: corpus.Short})
	}
	for range generate.UsualCount {
		specs = append(specs, spec{class: corpus.Usual})
	}
	for range generate.LongCount {
		specs = append(specs, spec{class: corpus.Long})
	}
	r.Shuffle(len(specs), func(i, j int) { specs[i], specs[j] = specs[j], specs[i] })
	mark := func(n int, set func(*spec)) {
		for _, i := range r.Perm(len(specs))[:n] {
			set(&specs[i])
		}
	}
	mark(PTCount, func(s *spec) { s.pt = true })
	mark(NoTaxIDCount, func(s *spec) { s.noTaxID = true })
	mark(NoDeliveryCount, func(s *spec) { s.noDelivery = true })
	mark(UnsignedCount, func(s *spec) { s.unsigned = true })
	return specs
}

// Generate returns the corpus for seed: Count documents with ids
// po-0001 ..., each Expected.Object its expected object (keys FieldNames).
// Each document draws from its own random stream (seed, index).
func Generate(seed int64) ([]corpus.Document, error) {
	specs := plan(rand.New(rand.NewPCG(uint64(seed), 0x5EED0F0)))
	docs := make([]corpus.Document, len(specs))
	for i, s := range specs {
		o := newOrder(rand.New(rand.NewPCG(uint64(seed), uint64(i+1))), s)
		text := o.render(s.class) // first: a short order may lose lines
		obj, err := corpus.ExpectedObject(FieldNames, o.expected())
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		docs[i] = corpus.Document{ID: fmt.Sprintf("po-%04d", i+1), Text: text, LengthClass: s.class, Expected: corpus.Expected{Object: obj}, Lang: o.lang}
	}
	return docs, nil
}

// WriteDir writes the corpus for seed into dir (documents.jsonl and
// manifest.json), creating dir if needed.
func WriteDir(dir string, seed int64) error {
	docs, err := Generate(seed)
	if err != nil {
		return fmt.Errorf("generate purchase orders (seed %d): %w", seed, err)
	}
	if err := corpus.WriteDirFields(dir, docs, FieldNames, FieldDefinitions); err != nil {
		return fmt.Errorf("write purchase orders (seed %d): %w", seed, err)
	}
	return nil
}

// expected returns the document's expectations by field name; nil is null.
func (o *order) expected() map[string]any {
	skus := make([]any, len(o.lines))
	for i, l := range o.lines {
		skus[i] = l.sku
	}
	m := map[string]any{
		"order_number":    o.number,
		"supplier_name":   o.supplier,
		"supplier_tax_id": nil,
		"lines":           skus,
		"currency":        o.currency,
		"total":           decimalString(o.total()),
		"order_date":      o.date.Format(time.DateOnly),
		"delivery_date":   nil,
		"signed":          o.signed,
	}
	if o.taxID != "" {
		m["supplier_tax_id"] = o.taxID
	}
	if o.hasDelivery {
		m["delivery_date"] = o.delivery.Format(time.DateOnly)
	}
	return m
}

// decimalString writes cents as a plain decimal: "1234.56".
func decimalString(cents int64) string {
	return fmt.Sprintf("%d.%02d", cents/100, cents%100)
}
