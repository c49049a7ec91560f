package extractbench

// Field is one extraction field a protocol declares (its key fields:):
// the value the answer holds at Pointer, of Type, judged by the type's
// rule with its options. A protocol that declares none is judged on the
// default fields, date, amount and category (DefaultFieldNames), by
// MEASUREMENT.md section 7. docs/fields.md says what each option does.
type Field struct {
	Name        string    `json:"name"`                  // the key of the corpus's expected object and of the field rows
	Pointer     string    `json:"pointer,omitempty"`     // RFC 6901 JSON pointer into the answer; "" means "/" + Name
	Type        FieldType `json:"type"`                  // the rule that judges it
	Description string    `json:"description,omitempty"` // told to the model in the generated schema
	// Match is a string's rule: MatchExact (the default) or
	// MatchNormalised, with the Normalise steps (all of them by default).
	Match     string   `json:"match,omitempty"`
	Normalise []string `json:"normalise,omitempty"`
	Values    []string `json:"values,omitempty"`  // an enum's values
	Formats   []string `json:"formats,omitempty"` // a date's accepted answer layouts (DateLayouts); default YYYY-MM-DD
	// AbsTolerance and RelTolerance are how far a decimal may be from the
	// expected value and still be correct (either suffices); decimal
	// strings. Default: AbsTolerance "0.005", as the default amount's.
	AbsTolerance string `json:"abs_tolerance,omitempty"`
	RelTolerance string `json:"rel_tolerance,omitempty"`
	// Locale is the number form a decimal written as a string may use, in
	// the expectation file or the answer: LocaleEN (1,234.56, the
	// default) or LocalePT (1.234,56). A JSON number is always plain.
	Locale string `json:"locale,omitempty"`
	Items  *Field `json:"items,omitempty"` // a list's item rule: a scalar Field without name or pointer
	Order  string `json:"order,omitempty"` // a list's: OrderSet (the default) or OrderSequence
	// Missing is what a null expectation means: MissingNull (the
	// default: the right answer is null) or MissingSkip (not reviewed:
	// the field is not scored on that document).
	Missing  string `json:"missing,omitempty"`
	Required bool   `json:"required,omitempty"` // every document's expectation has a value
}

// FieldType names a field's rule.
type FieldType string

// The field types a protocol may declare.
const (
	FieldString  FieldType = "string"
	FieldEnum    FieldType = "enum"
	FieldDate    FieldType = "date"
	FieldDecimal FieldType = "decimal"
	FieldInteger FieldType = "integer"
	FieldBoolean FieldType = "boolean"
	FieldList    FieldType = "list"
)

// FieldTypes lists every field type, in the order docs list them.
var FieldTypes = []FieldType{FieldString, FieldEnum, FieldDate, FieldDecimal, FieldInteger, FieldBoolean, FieldList}

// The values of a field's options.
const (
	MatchExact      = "exact"
	MatchNormalised = "normalised"
	LocaleEN        = "en"
	LocalePT        = "pt"
	OrderSet        = "set"
	OrderSequence   = "sequence"
	MissingNull     = "null"
	MissingSkip     = "skip"
)

// NormaliseSteps are the steps a normalised string match may take, in the
// order they apply.
var NormaliseSteps = []string{"case", "whitespace", "accents", "punctuation"}

// DefaultFieldNames are the fields a protocol without fields: is judged
// on, in report order.
var DefaultFieldNames = []string{"date", "amount", "category"}

// PointerOf is the JSON pointer of f into the answer.
func (f Field) PointerOf() string {
	if f.Pointer != "" {
		return f.Pointer
	}
	return "/" + f.Name
}

// FieldScore is how one field of one document scored: one row of the
// per-field table (results' request_fields), for the default fields and
// declared ones alike.
type FieldScore struct {
	Name string
	// Expected and Got are the expectation and the answer's value as
	// compact JSON ("null" for null); Got is "" when the answer did not
	// reach scoring or lacks the key.
	Expected string
	Got      string
	Result   FieldResult // TP, FPFN, FN, FP, TN; Unscored when not scored
	// Reason says why the field is not correct, or why it was not
	// scored ("not reviewed" for a skipped expectation); "" when correct.
	Reason string
	// TP, FP and FN are the field's contribution to its F1: one of them
	// for a scalar (by Result; an unscored field with an expectation
	// counts FN), the matched, extra and missed items for a list.
	TP, FP, FN int
}

// Correct reports whether the field is correct (TP or TN).
func (s FieldScore) Correct() bool { return s.Result.OK() }
