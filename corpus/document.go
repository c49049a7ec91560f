// Package corpus owns the documents extractbench measures with: the record
// format, loading and validation, the manifest that pins a corpus by hash,
// and (in corpus/generate) the deterministic generator of the default corpus.
package corpus

// LengthClass says how long a document is, in approximate tokens (see ApproxTokens).
type LengthClass string

// The three length classes of the protocol.
const (
	Short LengthClass = "short" // under ~300 tokens
	Usual LengthClass = "usual" // 300 to 1,500 tokens
	Long  LengthClass = "long"  // 5,500 to 7,500 tokens: close to an 8,192-token context
)

// DefaultCategories is the default category enum, in the order reports list it.
var DefaultCategories = []string{
	"utilities", "telecom", "software", "office_supplies", "travel",
	"meals", "rent", "professional_services", "taxes", "healthcare",
}

// Expected holds the reviewed values of one document. A nil field means the
// document legitimately lacks it: the right answer is JSON null.
type Expected struct {
	Date     *string `json:"date"`     // issue date, YYYY-MM-DD
	Amount   *string `json:"amount"`   // total due, a decimal string such as "1234.56" or "-80.00"
	Category *string `json:"category"` // one of the corpus's category enum
	// Object is the expected object of a corpus of declared fields, as
	// compact JSON, keyed by field name; "" for a corpus of the default
	// fields, which uses the three above. A string, so that an Expected
	// stays comparable. The loader writes it canonically (CanonicalObject):
	// keys in the declared order, no HTML escaping. When it is set, the
	// three above are nil and Expected encodes as Object.
	Object string `json:"-"`
}

// plainExpected is Expected without its MarshalJSON.
type plainExpected Expected

// MarshalJSON encodes e as its Object when it has one (a corpus of
// declared fields), else as the three default fields, as before.
func (e Expected) MarshalJSON() ([]byte, error) {
	if e.Object != "" {
		return []byte(e.Object), nil
	}
	return marshalNoEscape(plainExpected(e))
}

// Document is one record of documents.jsonl.
type Document struct {
	ID          string      `json:"id"`
	Text        string      `json:"text"`
	LengthClass LengthClass `json:"length_class"`
	Expected    Expected    `json:"expected"`
	// Lang is the document's language tag ("en", "pt-BR"), when the corpus
	// records it: counted by the manifest, not covered by the record hash.
	Lang string `json:"lang,omitempty"`

	// Where the record is in its file, for a corpus opened by reference
	// (Open): Text and Expected are empty until Corpus.Resolve reads them.
	ref lineRef
}

// lineRef locates one line of documents.jsonl; size 0 means none. line
// and sum are its line number and its record's hash when it was indexed:
// what Resolve checks the bytes it reads back against.
type lineRef struct {
	offset int64
	size   int32
	line   uint32
	sum    uint64
}
