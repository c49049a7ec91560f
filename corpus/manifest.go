package corpus

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io"
	"unicode/utf8"
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
	Categories     []string            `json:"categories,omitempty"`      // the category enum; none for declared fields
	CategoryCounts map[string]int      `json:"category_counts,omitempty"` // documents per expected category; none for declared fields
	Missing        map[string]int      `json:"missing"`                   // documents whose expected field is null, per field
	Fields         map[string]string   `json:"fields,omitempty"`          // definitions of the expected fields (the default ones; for declared fields, when given)
	// FieldNames are the declared fields the expected objects follow, in
	// the protocol's order; nil for the default date, amount and category.
	// The hash covers them (DeclaredHashRule).
	FieldNames   []string          `json:"field_names,omitempty"`
	Langs        map[string]int    `json:"langs,omitempty"` // documents per language tag, when the records give one
	HashRule     string            `json:"hash_rule"`
	SHA256       string            `json:"sha256"`        // hash of the whole corpus: what a run fingerprint pins
	RecordSHA256 map[string]string `json:"record_sha256"` // id → hash of that record; nil in a loaded corpus (compared while streaming, not kept)
}

// RecordHash returns the hex sha256 of a document's id, text and expectations
// (see HashRule); the length class is derived from the text and not covered.
func RecordHash(d Document) string {
	h := sha256.New()
	writeHashedRecord(h, d)
	return hex.EncodeToString(h.Sum(nil))
}

// hashPiece is how much of a text is encoded at a time for its hash.
const hashPiece = 64 << 10

// writeHashedRecord writes what a record hash covers to w: the compact JSON
// {"id","text","expected"} of d without HTML escaping (HashRule), the
// text a piece at a time, so that a long text is never encoded whole. JSON
// escapes a string rune by rune, and the pieces end before a byte that
// starts a rune, so their encodings joined are the whole's.
func writeHashedRecord(w io.Writer, d Document) {
	var buf jsonBuffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	encode := func(v any) []byte {
		buf.b = buf.b[:0]
		if err := enc.Encode(v); err != nil {
			panic("corpus: encode record: " + err.Error()) // only strings and pointers to strings
		}
		return buf.b[:len(buf.b)-1] // the newline Encode adds
	}
	io.WriteString(w, `{"id":`)
	w.Write(encode(d.ID))
	io.WriteString(w, `,"text":"`)
	for rest := d.Text; rest != ""; {
		n := min(len(rest), hashPiece)
		for n < len(rest) && !utf8.RuneStart(rest[n]) {
			n++
		}
		b := encode(rest[:n])
		w.Write(b[1 : len(b)-1]) // without its quotes
		rest = rest[n:]
	}
	io.WriteString(w, `","expected":`)
	w.Write(encode(d.Expected))
	io.WriteString(w, "}")
}

// ComputeManifest describes docs, in order, with the given category enum and
// field definitions (DefaultFields when nil).
func ComputeManifest(docs []Document, categories []string, fields map[string]string) Manifest {
	b := newManifestBuilder(categories, fields, nil, true)
	for i := range docs {
		b.add(&docs[i])
	}
	return b.done()
}

// ComputeManifestFields describes docs, a corpus of the declared fields
// names (in order), whose Expected.Object each holds its expected object
// canonically (CanonicalObject). fields, the definitions, may be nil.
func ComputeManifestFields(docs []Document, names []string, fields map[string]string) Manifest {
	b := newManifestBuilder(nil, fields, names, true)
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

// newManifestBuilder describes a corpus of the default fields (names nil)
// or of the declared fields names.
func newManifestBuilder(categories []string, fields map[string]string, names []string, keepRecords bool) *manifestBuilder {
	b := &manifestBuilder{
		m: Manifest{
			Format:   ManifestFormat,
			Classes:  map[LengthClass]int{Short: 0, Usual: 0, Long: 0},
			Missing:  map[string]int{},
			Fields:   fields,
			HashRule: HashRule,
		},
		whole:       sha256.New(),
		keepRecords: keepRecords,
	}
	if keepRecords {
		b.m.RecordSHA256 = map[string]string{}
	}
	if names != nil {
		b.m.FieldNames = append([]string(nil), names...)
		b.m.HashRule = DeclaredHashRule
		for _, n := range names {
			b.m.Missing[n] = 0
		}
		if !isDefaultNames(names) {
			list, _ := marshalNoEscape(names) // strings only
			b.whole.Write([]byte("field_names " + string(list) + "\n"))
		}
		return b
	}
	if b.m.Fields == nil {
		b.m.Fields = DefaultFields
	}
	b.m.Categories = append([]string(nil), categories...)
	b.m.CategoryCounts = map[string]int{}
	b.m.Missing = map[string]int{"date": 0, "amount": 0, "category": 0}
	for _, c := range categories {
		b.m.CategoryCounts[c] = 0
	}
	return b
}

// add counts d and returns its record hash.
func (b *manifestBuilder) add(d *Document) string {
	h := RecordHash(*d)
	b.addHashed(d, h)
	return h
}

// addHashed counts d, whose record hash is h.
func (b *manifestBuilder) addHashed(d *Document, h string) {
	m := &b.m
	m.Count++
	m.Classes[d.LengthClass]++
	if d.Lang != "" {
		if m.Langs == nil {
			m.Langs = map[string]int{}
		}
		m.Langs[d.Lang]++
	}
	switch {
	case m.FieldNames != nil:
		for _, n := range nullFields(d.Expected.Object) {
			m.Missing[n]++
		}
	default:
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
	}
	if b.keepRecords {
		m.RecordSHA256[d.ID] = h
	}
	b.whole.Write([]byte(h))
	b.whole.Write([]byte("\n"))
}

func (b *manifestBuilder) done() Manifest {
	m := b.m
	m.SHA256 = hex.EncodeToString(b.whole.Sum(nil))
	return m
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
