package eval

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/xeipuuv/gojsonschema"
)

// scoreDeclared is scoreObject for a protocol that declares its fields:
// obj is validated against the (generated or given) schema, each field
// read at its pointer and scored against the expected object, and the
// format problems returned: a value that breaks its field's rule, and
// what the schema says that the field rules do not (an extra key, a
// missing one). Without a schema the field rules alone decide.
func scoreDeclared(o *extractbench.Score, obj map[string]any, expected map[string]any, opt Options) []string {
	var problems []string
	for _, f := range opt.Fields {
		got, present, _ := Lookup(obj, f.PointerOf()) // the protocol check refused a malformed pointer
		fs := ScoreField(f, expected[f.Name], got, present)
		if fs.Result == extractbench.Unscored && fs.Reason != ReasonNotReviewed {
			problems = append(problems, f.Name+": "+fs.Reason)
		}
		o.Fields = append(o.Fields, fs)
	}
	o.SchemaOK = true
	if opt.Schema == nil {
		return problems
	}
	res, err := opt.Schema.Validate(gojsonschema.NewRawLoader(obj))
	switch {
	case err != nil:
		o.SchemaOK = false
		problems = append(problems, "schema: "+err.Error())
	case !res.Valid():
		o.SchemaOK = false
		fieldSaid := len(problems) > 0
		for _, e := range res.Errors() {
			// A value's own rule said it more precisely; keep the schema's
			// words for keys (missing, extra) and when no rule spoke.
			if !fieldSaid || e.Type() == "required" || e.Type() == "additional_property_not_allowed" {
				problems = append(problems, "schema: "+e.String())
			}
		}
	}
	return problems
}

// unscoredFields is every declared field's score for an answer that did
// not reach scoring (no parse): none has a value, and those with an
// expectation count as missed.
func unscoredFields(fields []extractbench.Field, expected map[string]any, why string) []extractbench.FieldScore {
	out := make([]extractbench.FieldScore, 0, len(fields))
	for _, f := range fields {
		fs := ScoreField(f, expected[f.Name], nil, false)
		if fs.Reason != ReasonNotReviewed {
			fs.Result, fs.TP, fs.FP, fs.Reason = extractbench.Unscored, 0, 0, why
			fs.FN = unscoredMisses(f, expected[f.Name])
		}
		out = append(out, fs)
	}
	return out
}

// unscoredMisses is what an unscored field counts against recall: each
// expected item of a list (at least one), one for a scalar with a value.
func unscoredMisses(f extractbench.Field, expected any) int {
	if expected == nil {
		return 0
	}
	if xs, ok := expected.([]any); ok && f.Type == extractbench.FieldList {
		return max(1, len(xs))
	}
	return 1
}

// expectedObject decodes a document's declared expectations
// (corpus.Expected.Object), numbers kept as written.
func expectedObject(exp corpus.Expected) (map[string]any, error) {
	if exp.Object == "" {
		return map[string]any{}, nil
	}
	d := json.NewDecoder(strings.NewReader(exp.Object))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("read the expected object: %w", err)
	}
	return m, nil
}

// qualityFields names the wrong fields of a declared protocol's answer
// with why: "total: got 12.4, want 12.5; lines: 1 of 3 items missed".
func qualityFields(fields []extractbench.FieldScore) string {
	var parts []string
	for _, f := range fields {
		if !f.Correct() && f.Reason != ReasonNotReviewed {
			parts = append(parts, f.Name+": "+f.Reason)
		}
	}
	return strings.Join(parts, "; ")
}

// fieldsOK reports whether every scored field is correct.
func fieldsOK(fields []extractbench.FieldScore) bool {
	for _, f := range fields {
		if !f.Correct() && f.Reason != ReasonNotReviewed {
			return false
		}
	}
	return true
}

// defaultFields is Score.Fields of the default protocol: date, amount and
// category as Evaluate scored them, counted as the pass figures count
// them (fieldCounts). obj is the selected object (nil without a parse),
// problems the format problems of its fields, by field name.
func defaultFields(o *extractbench.Score, obj map[string]any, problems map[string]string, noParse string) []extractbench.FieldScore {
	e := o.Expected
	rows := []struct {
		name     string
		result   extractbench.FieldResult
		expected *string
		quote    bool // a string in JSON; the amount is a number
	}{
		{"date", o.Date, e.Date, true},
		{"amount", o.Amount, e.Amount, false},
		{"category", o.Category, e.Category, true},
	}
	out := make([]extractbench.FieldScore, 0, len(rows))
	for _, r := range rows {
		fs := extractbench.FieldScore{Name: r.name, Result: r.result, Expected: "null"}
		if r.expected != nil {
			fs.Expected = *r.expected
			if r.quote {
				fs.Expected = compactJSON(*r.expected)
			}
		}
		if v, ok := obj[r.name]; ok {
			fs.Got = compactJSON(v)
		}
		fs.TP, fs.FP, fs.FN = fieldCounts(r.result, r.expected)
		switch r.result {
		case extractbench.FPFN:
			fs.Reason = "wrong value"
		case extractbench.FN:
			fs.Reason = reasonNoValue
		case extractbench.FP:
			fs.Reason = reasonUnexpected
		case extractbench.Unscored:
			fs.Reason = noParse
			if p := problems[r.name]; p != "" {
				fs.Reason = p
			}
		}
		out = append(out, fs)
	}
	return out
}

// Reasons of an unscored field whose answer never reached scoring.
const (
	reasonNoParse  = "the answer did not parse"
	reasonNoAnswer = "no answer"
)

// notScored says why no field of output was scored when it did not parse:
// an engine that answered nothing (a 503, a timeout) is not a parse
// problem.
func notScored(output string) string {
	if strings.TrimSpace(output) == "" {
		return reasonNoAnswer
	}
	return reasonNoParse
}

// evaluateDeclared is Evaluate for a protocol that declares its fields,
// from the parse on: the same failure classes in the same order, with the
// fields' scores in Score.Fields and a quality failure naming the wrong
// fields.
func evaluateDeclared(o extractbench.Score, output string, obj map[string]any, parseErr error, tr extractbench.Transport, opt Options) extractbench.Score {
	o.Declared = true
	expected, expErr := expectedObject(o.Expected)
	var problems []string
	switch {
	case expErr != nil:
		// A corpus check refuses it; the document cannot be judged.
		o.Fields = unscoredFields(opt.Fields, nil, expErr.Error())
		problems = []string{expErr.Error()}
	case parseErr != nil:
		o.Fields = unscoredFields(opt.Fields, expected, notScored(output))
	default:
		problems = scoreDeclared(&o, obj, expected, opt)
	}
	classify(&o, output, parseErr, problems, tr, opt, func() (bool, string) {
		if fieldsOK(o.Fields) {
			return true, ""
		}
		return false, qualityFields(o.Fields)
	})
	return o
}
