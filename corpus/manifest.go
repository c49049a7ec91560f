package corpus

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
)

// ManifestFormat names the manifest layout; a reader refuses others.
const ManifestFormat = "extractbench-corpus/1"

// HashRule says how Manifest.SHA256 and Manifest.RecordSHA256 are computed,
// so that anyone can recompute them without this code.
const HashRule = "record_sha256 = sha256 of the compact JSON {\"id\",\"text\",\"expected\":{\"date\",\"amount\",\"category\"}} " +
	"(keys in that order, no HTML escaping); sha256 = sha256 of every record_sha256 in file order, each followed by \"\\n\""

// DefaultFields defines the three expected fields; it is written into every
// manifest, so a corpus carries the definitions its expectations follow.
var DefaultFields = map[string]string{
	"date": "The issue date: the day the document was issued (not the due date, a billing or service " +
		"period, a delivery, reading, travel or payment date), as YYYY-MM-DD. Null when the document " +
		"does not state its issue date, even if it shows other dates.",
	"amount": "The total due: the final amount the document asks to be paid or credits, after discounts, " +
		"fees and added taxes (not a subtotal, a tax line, a line item, a previous balance or an earlier " +
		"payment), as a decimal string with a dot and no thousands separator. Negative for a credit note. " +
		"Null when the document does not state its total.",
	"category": "What the expense is for: exactly one value of the manifest's category enum.",
}

// Manifest describes a corpus and pins it by hash. It is written next to
// documents.jsonl as manifest.json and recomputed on load to prove that the
// two agree.
type Manifest struct {
	Format         string              `json:"format"`
	Count          int                 `json:"count"`
	Classes        map[LengthClass]int `json:"classes"`
	Categories     []string            `json:"categories"`      // the category enum
	CategoryCounts map[string]int      `json:"category_counts"` // documents per expected category
	Missing        map[string]int      `json:"missing"`         // documents whose expected field is null, per field
	Fields         map[string]string   `json:"fields"`          // definitions of the expected fields
	HashRule       string              `json:"hash_rule"`
	SHA256         string              `json:"sha256"`        // hash of the whole corpus: what a run fingerprint pins
	RecordSHA256   map[string]string   `json:"record_sha256"` // id → hash of that record; nil in a loaded corpus (compared while streaming, not kept)
}

// hashedRecord is the canonical form a record hash covers.
type hashedRecord struct {
	ID       string   `json:"id"`
	Text     string   `json:"text"`
	Expected Expected `json:"expected"`
}

// RecordHash returns the hex sha256 of a document's id, text and expectations
// (see HashRule); the length class is derived from the text and not covered.
func RecordHash(d Document) string {
	sum := sha256.Sum256(canonicalJSON(hashedRecord{ID: d.ID, Text: d.Text, Expected: d.Expected}))
	return hex.EncodeToString(sum[:])
}

// ComputeManifest describes docs, in order, with the given category enum and
// field definitions (DefaultFields when nil).
func ComputeManifest(docs []Document, categories []string, fields map[string]string) Manifest {
	b := newManifestBuilder(categories, fields, true)
	for i := range docs {
		b.add(&docs[i])
	}
	return b.done()
}

// manifestBuilder computes a manifest one record at a time, so a corpus can
// be described while it is streamed. With keepRecords false it leaves
// RecordSHA256 nil: the loader compares each record hash as it reads it and
// keeps nothing per document.
type manifestBuilder struct {
	m           Manifest
	whole       hash.Hash
	keepRecords bool
}

func newManifestBuilder(categories []string, fields map[string]string, keepRecords bool) *manifestBuilder {
	if fields == nil {
		fields = DefaultFields
	}
	b := &manifestBuilder{
		m: Manifest{
			Format:         ManifestFormat,
			Classes:        map[LengthClass]int{Short: 0, Usual: 0, Long: 0},
			Categories:     append([]string(nil), categories...),
			CategoryCounts: map[string]int{},
			Missing:        map[string]int{"date": 0, "amount": 0, "category": 0},
			Fields:         fields,
			HashRule:       HashRule,
		},
		whole:       sha256.New(),
		keepRecords: keepRecords,
	}
	if keepRecords {
		b.m.RecordSHA256 = map[string]string{}
	}
	for _, c := range categories {
		b.m.CategoryCounts[c] = 0
	}
	return b
}

// add counts d and returns its record hash.
func (b *manifestBuilder) add(d *Document) string {
	m := &b.m
	m.Count++
	m.Classes[d.LengthClass]++
	if d.Expected.Category != nil {
		m.CategoryCounts[*d.Expected.Category]++
	} else {
		m.Missing["category"]++
	}
	if d.Expected.Date == nil {
		m.Missing["date"]++
	}
	if d.Expected.Amount == nil {
		m.Missing["amount"]++
	}
	h := RecordHash(*d)
	if b.keepRecords {
		m.RecordSHA256[d.ID] = h
	}
	b.whole.Write([]byte(h + "\n"))
	return h
}

func (b *manifestBuilder) done() Manifest {
	m := b.m
	m.SHA256 = hex.EncodeToString(b.whole.Sum(nil))
	return m
}

// canonicalJSON encodes v compactly without HTML escaping, and without the
// trailing newline json.Encoder adds.
func canonicalJSON(v any) []byte {
	b, err := marshalNoEscape(v)
	if err != nil {
		// Only plain strings and pointers to strings reach here.
		panic("corpus: encode record: " + err.Error())
	}
	return b
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf jsonBuffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := buf.b
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	return b, nil
}

// jsonBuffer is the smallest io.Writer that keeps what is written.
type jsonBuffer struct{ b []byte }

func (j *jsonBuffer) Write(p []byte) (int, error) {
	j.b = append(j.b, p...)
	return len(p), nil
}
