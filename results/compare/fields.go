package compare

import (
	"math"
	"slices"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// FlipFields is the fields behind one flipped document: those its failing
// side (Failed, "A" or "B") got wrong, with why; Unparsed when no field was
// scored there, the answer as a whole having failed (Reason says why).
type FlipFields struct {
	DocID    string               `json:"doc_id"`
	Failed   string               `json:"failed"`
	Failure  extractbench.Failure `json:"failure"`
	Fields   []FieldMiss          `json:"fields,omitempty"`
	Unparsed bool                 `json:"unparsed,omitempty"`
	Reason   string               `json:"reason,omitempty"`
}

// FieldMiss is one field a document's answer got wrong, and why.
type FieldMiss struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// fieldDeltas is each field's F1 under A and B and its delta, for the
// fields the records were scored on in the protocol's order: the default
// three, or the declared ones (eval.PassTally.FieldNames).
func fieldDeltas(ra, rb []extractbench.Record, resamples int, seed int64) []FieldDelta {
	ta, tb := eval.Aggregate(ra), eval.Aggregate(rb)
	names := slices.Clone(ta.FieldNames())
	for _, n := range tb.FieldNames() {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	f1 := func(t eval.PassTally, name string) float64 {
		if fs, ok := t.Field(name); ok {
			return fs.F1
		}
		return math.NaN()
	}
	out := make([]FieldDelta, 0, len(names))
	for _, n := range names {
		fd := FieldDelta{Field: n, AF1: f1(ta, n), BF1: f1(tb, n)}
		fd.Delta, fd.Lo, fd.Hi = eval.F1Delta(ra, rb, n, resamples, seed)
		out = append(out, fd)
	}
	return out
}

// flipFields is FlipFields of each flip, from the failing side's record
// (both slices sorted by document id).
func flipFields(flips []eval.Pair, ra, rb []extractbench.Record) []FlipFields {
	out := make([]FlipFields, 0, len(flips))
	for _, f := range flips {
		side, recs := "B", rb
		if f.BOK {
			side, recs = "A", ra
		}
		ff := FlipFields{DocID: f.DocID, Failed: side}
		if r := find(recs, f.DocID); r != nil {
			ff.Failure = r.Failure
			ff.Fields, ff.Unparsed, ff.Reason = fieldsBehind(r.Score.Fields)
		}
		out = append(out, ff)
	}
	return out
}

// find is the first record of id in recs, sorted by document id.
func find(recs []extractbench.Record, id string) *extractbench.Record {
	i, ok := slices.BinarySearchFunc(recs, id, func(r extractbench.Record, id string) int {
		switch {
		case r.DocID < id:
			return -1
		case r.DocID > id:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return &recs[i]
}

// WrongFields is the fields of one answer that are not correct, with
// why, in the protocol's order: a skipped expectation ("not reviewed") is
// no error.
func WrongFields(fields []extractbench.FieldScore) []FieldMiss {
	var out []FieldMiss
	for _, f := range fields {
		if !f.Correct() && f.Reason != eval.ReasonNotReviewed {
			out = append(out, FieldMiss{Field: f.Name, Reason: f.Reason})
		}
	}
	return out
}

// fieldsBehind is WrongFields, unless the answer failed as a whole (no
// parse, a transport failure: every reviewed field unscored, for one
// reason): then unparsed, and that reason, rather than every field.
func fieldsBehind(fields []extractbench.FieldScore) (misses []FieldMiss, unparsed bool, reason string) {
	misses = WrongFields(fields)
	if len(misses) < 2 || len(misses) != countReviewed(fields) {
		return misses, false, ""
	}
	for _, f := range fields {
		if f.Reason != eval.ReasonNotReviewed && (f.Result != extractbench.Unscored || f.Reason != misses[0].Reason) {
			return misses, false, ""
		}
	}
	return nil, true, misses[0].Reason
}

// countReviewed is how many fields had an expectation reviewed.
func countReviewed(fields []extractbench.FieldScore) int {
	n := 0
	for _, f := range fields {
		if f.Reason != eval.ReasonNotReviewed {
			n++
		}
	}
	return n
}
