package extractbench

import "github.com/extractbench/extractbench/corpus"

// FieldResult is how one field of one document scored, in the terms of
// MEASUREMENT.md section 7: same value TP; different value FP+FN; predicted
// null but expected a value FN; expected null but predicted a value FP; both
// null TN. Unscored means the document never reached scoring (no parse, no schema).
type FieldResult string

// The per-field results.
const (
	Unscored FieldResult = ""
	TP       FieldResult = "tp"
	FPFN     FieldResult = "fp_fn"
	FN       FieldResult = "fn"
	FP       FieldResult = "fp"
	TN       FieldResult = "tn"
)

// OK reports whether the field is correct (TP or TN).
func (r FieldResult) OK() bool { return r == TP || r == TN }

// Prediction is the parsed extraction, as text: Date "YYYY-MM-DD", Amount the
// decimal as sent, Category as sent (normalised under the lenient rule). A
// nil field is JSON null.
type Prediction struct {
	Date     *string
	Amount   *string
	Category *string
}

// Score is the evaluator's verdict on one document: how its answer parsed and
// scored, and its failure class. (A variant's PASS/FAIL is results.Outcome.)
type Score struct {
	StrictParseOK  bool // the content, less surrounding whitespace, is exactly one JSON object
	LenientParseOK bool // one ```json fence or surrounding text removed, one JSON object found
	SchemaOK       bool // the object that the protocol's parse rule selected passes the JSON Schema
	Date           FieldResult
	Amount         FieldResult
	Category       FieldResult
	Accepted       bool
	Failure        Failure
	FailureDetail  string // why, in a few words: "finish_reason=length", "date 2025-02-30 is not a calendar day", ...
	Prediction     Prediction
	// Expected is the reviewed expectation the fields were scored against,
	// copied from the document so that a pass can be aggregated (misses,
	// category confusion) from its records alone. Stores must keep it.
	Expected corpus.Expected
	// Fields is every field's score in the protocol's order: the three
	// default fields (mirroring Date, Amount and Category) or the
	// declared ones. Nil for a request that was not measured.
	Fields []FieldScore
	// Declared is whether the protocol declared the fields (Fields holds
	// them; Date, Amount and Category stay unscored), even fields named
	// date, amount and category: set by the evaluator, and by the results
	// readers from the run's stored protocol.
	Declared bool
}
