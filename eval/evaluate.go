package eval

import (
	"fmt"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/schemas"
	"github.com/shopspring/decimal"
	"github.com/xeipuuv/gojsonschema"
)

// Options says how Evaluate judges an output. The zero value is the strict
// rule against the embedded extraction schema and the default categories.
type Options struct {
	Rule       extractbench.ParseRule // which parse decides; "" means Strict
	Schema     *gojsonschema.Schema   // nil means schemas.Extraction(); compile it once, never per call
	Categories []string               // the category enum; nil means corpus.DefaultCategories
	// Fields are the protocol's declared fields, in its order; nil means
	// the default fields (date, amount, category). With fields, Schema
	// is the output schema generated from them (FieldSchema) or the one
	// the protocol gave, and each document's expectations are its
	// Expected.Object.
	Fields []extractbench.Field
}

// Evaluate judges one engine answer by MEASUREMENT.md sections 6 and 7:
// parse under both rules, the schema and field rules on the selected
// object, each field scored on its own (a valid amount counts even beside a
// malformed date). The field rules repeat the schema's checks so that a
// user schema that forgets them cannot make a malformed answer count.
func Evaluate(output string, exp corpus.Expected, tr extractbench.Transport, opt Options) extractbench.Score {
	o := extractbench.Score{Expected: exp}
	if !tr.Kind.Measured() {
		// Cancelled by the run's interruption, or failed in the client
		// itself: not a measurement, so no failure class and no verdict;
		// the row waits for -resume.
		return o
	}

	strictObj, strictErr := ParseStrict(output)
	o.StrictParseOK = strictErr == nil
	lenientObj, lenientErr := strictObj, strictErr
	if !o.StrictParseOK {
		lenientObj, lenientErr = findObject(output)
	}
	o.LenientParseOK = lenientErr == nil
	obj, parseErr := strictObj, strictErr
	if opt.Rule == extractbench.Lenient {
		obj, parseErr = lenientObj, lenientErr
		if c, ok := obj["category"].(string); ok && opt.Fields == nil {
			obj["category"] = NormalizeCategory(c)
		}
	}
	if opt.Fields != nil {
		return evaluateDeclared(o, output, obj, parseErr, tr, opt)
	}

	var problems []string
	var fieldProblems map[string]string
	if parseErr == nil {
		problems, fieldProblems = scoreObject(&o, obj, exp, opt)
	}
	o.Fields = defaultFields(&o, obj, fieldProblems, notScored(output))

	quality := func() (bool, string) {
		if o.Date.OK() && o.Amount.OK() && o.Category.OK() {
			return true, ""
		}
		return false, qualityDetail(o, exp)
	}
	classify(&o, output, parseErr, problems, tr, opt, quality)
	return o
}

// classify gives a scored answer its failure class, in the one order both
// the default and the declared fields use: the transport's, then format
// (no parse, then schema or field-rule problems), then quality (quality
// says whether every field is correct and, if not, which were wrong), else
// accepted.
func classify(o *extractbench.Score, output string, parseErr error, problems []string, tr extractbench.Transport, opt Options, quality func() (bool, string)) {
	if f, detail := classifyTransport(tr, output); f != extractbench.None {
		o.Failure, o.FailureDetail = f, detail
		return
	}
	if parseErr != nil {
		o.Failure, o.FailureDetail = extractbench.Format, parseDetail(opt.Rule, parseErr, output, o.LenientParseOK)
		return
	}
	if len(problems) > 0 {
		o.Failure, o.FailureDetail = extractbench.Format, strings.Join(problems, "; ")
		return
	}
	if ok, detail := quality(); !ok {
		o.Failure, o.FailureDetail = extractbench.Quality, detail
		return
	}
	o.Accepted = true
}

// scoreObject validates obj against the schema and the field rules, fills
// the prediction and the field results, and returns the format problems,
// and those of each field by name.
func scoreObject(o *extractbench.Score, obj map[string]any, exp corpus.Expected, opt Options) ([]string, map[string]string) {
	schema := opt.Schema
	if schema == nil {
		schema = schemas.Extraction()
	}
	enum := opt.Categories
	if enum == nil {
		enum = corpus.DefaultCategories
	}

	// The field rules below say most schema violations more precisely;
	// the schema's own words are kept for what they do not see (an extra
	// key, a user schema's own constraints).
	var problems, schemaSays []string
	if schema == schemas.Extraction() && extractionRules().valid(obj) {
		o.SchemaOK = true // what gojsonschema would say (schemafast.go), at a fraction of its cost
	} else {
		schemaSays, problems = validateSchema(o, schema, obj)
	}

	date, hasDate := obj["date"]
	amount, hasAmount := obj["amount"]
	category, hasCategory := obj["category"]
	dc := checkDate(date, hasDate)
	ac := checkAmount(amount, hasAmount)
	cc := checkCategory(category, hasCategory, enum)
	fieldProblems := map[string]string{}
	for i, c := range []fieldCheck{dc, ac, cc} {
		if c.problem != "" {
			problems = append(problems, c.problem)
			fieldProblems[Fields[i]] = c.problem
		}
	}
	if !o.SchemaOK && len(problems) == 0 {
		problems = schemaSays
	}

	if dc.problem == "" {
		o.Prediction.Date = dc.value
		o.Date = judge(exp.Date, dc.value, func() bool { return *exp.Date == *dc.value })
	}
	if ac.problem == "" {
		o.Prediction.Amount = ac.value
		o.Amount = judge(exp.Amount, ac.value, func() bool {
			want, err := decimal.NewFromString(*exp.Amount)
			// An unreadable expectation is a corpus bug that corpus
			// validation reports; here it can only be a mismatch.
			return err == nil && ac.amount.Close(want)
		})
	}
	if cc.problem == "" {
		o.Prediction.Category = cc.value
		o.Category = judge(exp.Category, cc.value, func() bool { return *exp.Category == *cc.value })
	}
	return problems, fieldProblems
}

// validateSchema validates obj against schema with gojsonschema, setting
// o.SchemaOK, and returns what it says of the three fields (schemaSays)
// and the problems of anything else.
func validateSchema(o *extractbench.Score, schema *gojsonschema.Schema, obj map[string]any) (schemaSays, problems []string) {
	res, err := schema.Validate(gojsonschema.NewRawLoader(obj))
	switch {
	case err != nil:
		schemaSays = append(schemaSays, "schema: "+err.Error())
	case !res.Valid():
		for _, e := range res.Errors() {
			if f := e.Field(); f != "date" && f != "amount" && f != "category" && e.Type() != "required" {
				problems = append(problems, "schema: "+e.String())
			} else {
				schemaSays = append(schemaSays, "schema: "+e.String())
			}
		}
	}
	o.SchemaOK = err == nil && res.Valid()
	return schemaSays, problems
}

// parseDetail explains a parse failure, saying when the other rule would
// have accepted the output, since that is the first thing a reader asks.
func parseDetail(rule extractbench.ParseRule, err error, output string, lenientOK bool) string {
	name := "strict"
	if rule == extractbench.Lenient {
		name = "lenient"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s parse: %s", name, clip(err.Error()))
	if EndsInsideObject(output) {
		b.WriteString(" (output ends inside a JSON object)")
	}
	if rule != extractbench.Lenient && lenientOK {
		b.WriteString(" (the lenient rule would parse it)")
	}
	return b.String()
}

// qualityDetail lists the wrong fields with what was expected.
func qualityDetail(o extractbench.Score, exp corpus.Expected) string {
	var parts []string
	add := func(name string, r extractbench.FieldResult, got, want *string) {
		if !r.OK() {
			parts = append(parts, name+": got "+show(got)+", want "+show(want)) // not fmt.Sprintf: a tenth of scoring a wrong answer
		}
	}
	add("date", o.Date, o.Prediction.Date, exp.Date)
	add("amount", o.Amount, o.Prediction.Amount, exp.Amount)
	add("category", o.Category, o.Prediction.Category, exp.Category)
	return strings.Join(parts, "; ")
}

// show writes an optional value for a FailureDetail.
func show(s *string) string {
	if s == nil {
		return "null"
	}
	return clip(*s)
}
