package eval

import (
	"encoding/json"
	"slices"
	"sort"

	"github.com/extractbench/extractbench"
)

// Labels of the category confusion matrix for answers that are not a
// category: a JSON null, and anything unreadable (no parse, missing key,
// outside the enum, no answer at all).
const (
	ConfusionNull    = "null"
	ConfusionInvalid = "invalid"
)

// Fields names the scored fields, in report order.
var Fields = []string{"date", "amount", "category"}

// FieldStats counts how one field scored over a pass. Failed documents stay
// in the denominator (MEASUREMENT.md section 7): a field that never reached
// scoring while the document expected a value is a Missed answer and counts
// against recall like an FN; when the document expected null it is only
// counted in Unscored, since TN enters none of the three ratios.
type FieldStats struct {
	TP, FP, FN, TN int
	Unscored       int // the field was not scored: no parse, transport failure, value breaking its rule
	Missed         int // of Unscored, those whose expected value was not null
	Precision      float64
	Recall         float64
	F1             float64
}

// add counts one field result.
func (s *FieldStats) add(r extractbench.FieldResult, expectedNull bool) {
	switch r {
	case extractbench.TP:
		s.TP++
	case extractbench.FPFN:
		s.FP++
		s.FN++
	case extractbench.FN:
		s.FN++
	case extractbench.FP:
		s.FP++
	case extractbench.TN:
		s.TN++
	default:
		s.Unscored++
		if !expectedNull {
			s.Missed++
		}
	}
}

// finish computes the ratios. When a ratio is 0/0 it is 1 if the field
// made no error of the other kind either, else 0: a field with nothing to
// find and nothing wrongly found (all TN) is perfect, and so F1 is always
// 2TP / (2TP + FP + FN + Missed), or 1 when that is 0/0.
func (s *FieldStats) finish() {
	fn := s.FN + s.Missed
	s.Precision = ratio(s.TP, s.TP+s.FP, fn == 0)
	s.Recall = ratio(s.TP, s.TP+fn, s.FP == 0)
	s.F1 = ratio(2*s.TP, 2*s.TP+s.FP+fn, true)
}

// ratio returns num/den, or 1 or 0 (by perfect) when den is 0.
func ratio(num, den int, perfect bool) float64 {
	if den == 0 {
		if perfect {
			return 1
		}
		return 0
	}
	return float64(num) / float64(den)
}

// PassTally is what one pass (variant, mode, level, repetition) amounts
// to. Docs counts records; a DocID seen twice is listed in DuplicateIDs,
// never merged, and Recovered counts accepted documents once per DocID.
type PassTally struct {
	Docs         int                          // records in the pass, duplicates included
	UniqueDocs   int                          // distinct DocIDs
	Accepted     int                          // accepted records
	AcceptedRate float64                      // Accepted / Docs; 0 when Docs is 0
	Recovered    int                          // distinct DocIDs with at least one accepted record
	DuplicateIDs []string                     // DocIDs with more than one record, sorted
	Failures     map[extractbench.Failure]int // records per failure class; every class of Failures is present
	StrictOK     int                          // records whose output passed the strict parse
	LenientOK    int                          // records whose output passed the lenient parse
	Date         FieldStats
	Amount       FieldStats
	Category     FieldStats
	// Confusion counts expected category × predicted category, both keyed
	// by the category, ConfusionNull or (predicted only) ConfusionInvalid.
	Confusion map[string]map[string]int
	// PerField is every field of the records' Score.Fields, in the order
	// the first record lists them (the protocol's): the default fields or
	// the declared ones, summed from FieldScore's counts, so that the
	// default fields' F1 equal Date, Amount and Category's.
	PerField []extractbench.PassField
	// Declared is whether the records were scored on declared fields
	// (their expectation is a declared object, corpus.Expected.Object, or
	// their field scores are not the default fields'): Date, Amount and
	// Category are then not the protocol's fields, even where a declared
	// field has one of their names.
	Declared bool
}

// Field returns the stats of the field named "date", "amount" or
// "category" of a pass of the default fields, or of a declared field of
// PerField (whose FN counts its misses: Missed is 0), and false for a name
// the pass does not have.
func (p PassTally) Field(name string) (FieldStats, bool) {
	if !p.Declared {
		switch name {
		case "date":
			return p.Date, true
		case "amount":
			return p.Amount, true
		case "category":
			return p.Category, true
		}
	}
	for _, f := range p.PerField {
		if f.Name == name {
			return FieldStats{TP: int(f.TP), FP: int(f.FP), FN: int(f.FN), TN: int(f.TN), Unscored: int(f.Unscored),
				Precision: f.Precision, Recall: f.Recall, F1: f.F1}, true
		}
	}
	return FieldStats{}, false
}

// FieldNames are the names of the pass's fields in the protocol's order:
// Fields for a pass of the default fields, PerField's names for one of
// declared fields, so that a page lists the fields the protocol judged.
func (p PassTally) FieldNames() []string {
	if !p.Declared {
		return Fields
	}
	names := make([]string, len(p.PerField))
	for i, f := range p.PerField {
		names[i] = f.Name
	}
	return names
}

// Aggregate summarises the records of one pass. It assumes the records were
// scored by Evaluate (Score.Expected filled).
func Aggregate(recs []extractbench.Record) PassTally {
	var a PassAccumulator
	seen := map[string]int{}
	recovered := map[string]bool{}
	for i := range recs {
		r := &recs[i]
		a.Add(r)
		seen[r.DocID]++
		if r.Accepted {
			recovered[r.DocID] = true
		}
	}
	var dups []string
	for id, n := range seen {
		if n > 1 {
			dups = append(dups, id)
		}
	}
	sort.Strings(dups)
	return a.Tally(len(seen), len(recovered), dups)
}

// PassAccumulator is Aggregate one record at a time, for a pass too large
// to hold: every count of a PassTally but the ones that need the set of
// DocIDs, which its caller counts (a store counts distinct ids in SQL) and
// hands to Tally. The zero value is ready.
type PassAccumulator struct {
	s     PassTally
	field map[string]int // PerField's index by name
}

// Add counts one record.
func (a *PassAccumulator) Add(r *extractbench.Record) {
	s := &a.s
	if s.Failures == nil {
		s.Failures = make(map[extractbench.Failure]int, len(extractbench.Failures))
		for _, f := range extractbench.Failures {
			s.Failures[f] = 0
		}
		s.Confusion = map[string]map[string]int{}
	}
	s.Docs++
	if r.Accepted {
		s.Accepted++
	}
	if r.Failure != extractbench.None {
		s.Failures[r.Failure]++
	}
	if r.StrictParseOK {
		s.StrictOK++
	}
	if r.LenientParseOK {
		s.LenientOK++
	}
	e := r.Score.Expected
	s.Date.add(r.Score.Date, e.Date == nil)
	s.Amount.add(r.Score.Amount, e.Amount == nil)
	s.Category.add(r.Score.Category, e.Category == nil)

	a.addFields(r.Score.Fields)
	if r.Score.Declared || r.Score.Expected.Object != "" || !areDefaultFields(r.Score.Fields) {
		s.Declared = true
	}

	want, got := confusionLabels(r.Score)
	row := s.Confusion[want]
	if row == nil {
		row = map[string]int{}
		s.Confusion[want] = row
	}
	row[got]++
}

// addFields sums one record's field scores into PerField; a field is
// placed where it is first seen, and records list their fields in the
// protocol's order.
func (a *PassAccumulator) addFields(fields []extractbench.FieldScore) {
	for _, f := range fields {
		i, ok := a.field[f.Name]
		if !ok {
			if a.field == nil {
				a.field = map[string]int{}
			}
			i = len(a.s.PerField)
			a.field[f.Name] = i
			a.s.PerField = append(a.s.PerField, extractbench.PassField{Name: f.Name, Position: i})
		}
		pf := &a.s.PerField[i]
		pf.TP += int64(f.TP)
		pf.FP += int64(f.FP)
		pf.FN += int64(f.FN)
		switch f.Result {
		case extractbench.TN:
			pf.TN++
		case extractbench.Unscored:
			pf.Unscored++
		}
	}
}

// areDefaultFields reports whether fields are none (a record not measured,
// or stored before field rows) or the default fields in their order. A
// record read back from the store has no Expected.Object: its field names
// tell a declared protocol's records.
func areDefaultFields(fields []extractbench.FieldScore) bool {
	if len(fields) == 0 {
		return true
	}
	if len(fields) != len(extractbench.DefaultFieldNames) {
		return false
	}
	for i, f := range fields {
		if f.Name != extractbench.DefaultFieldNames[i] {
			return false
		}
	}
	return true
}

// finishField computes a field's ratios from its counts, by FieldStats'
// rule (finish): a 0/0 ratio is 1 when the other error is 0 too.
func finishField(f *extractbench.PassField) {
	tp, fp, fn := int(f.TP), int(f.FP), int(f.FN)
	f.Precision = ratio(tp, tp+fp, fn == 0)
	f.Recall = ratio(tp, tp+fn, fp == 0)
	f.F1 = ratio(2*tp, 2*tp+fp+fn, true)
}

// Tally is the pass's tally, given its distinct DocIDs, the distinct
// DocIDs with an accepted record and the DocIDs seen more than once (sorted).
func (a *PassAccumulator) Tally(uniqueDocs, recovered int, duplicateIDs []string) PassTally {
	s := a.s
	if s.Failures == nil {
		s.Failures = make(map[extractbench.Failure]int, len(extractbench.Failures))
		for _, f := range extractbench.Failures {
			s.Failures[f] = 0
		}
		s.Confusion = map[string]map[string]int{}
	}
	s.UniqueDocs, s.Recovered, s.DuplicateIDs = uniqueDocs, recovered, duplicateIDs
	if s.Docs > 0 {
		s.AcceptedRate = float64(s.Accepted) / float64(s.Docs)
	}
	s.Date.finish()
	s.Amount.finish()
	s.Category.finish()
	s.PerField = slices.Clone(s.PerField) // a Tally taken mid-pass must not share the sums Add goes on changing
	for i := range s.PerField {
		finishField(&s.PerField[i])
	}
	return s
}

// Fill sets the figures of pass row p that the records' tally makes:
// accepted, unique ids, the failure counts, the fields' F1, the per-field
// figures (Pass.Fields) and the confusion matrix. The run and the merge both fill their rows so
// (pipeline/passrow), which makes a pass figure counted from the records a
// field of PassTally, a line in Add and one here.
func (s PassTally) Fill(p *extractbench.Pass) {
	p.Accepted, p.UniqueIDs = int64(s.Accepted), int64(s.Recovered)
	p.Failures = extractbench.FailureCounts{}
	for f, n := range s.Failures {
		p.Failures.Add(f, int64(n))
	}
	p.Fields = slices.Clone(s.PerField)
	p.CategoryConfusion = ""
	if s.Declared {
		// The default fields' columns are about date, amount and category
		// as MEASUREMENT.md section 7 scores them: NULL for declared ones,
		// whose figures are Fields.
		p.DateF1, p.AmountF1, p.CategoryF1 = nil, nil, nil
		return
	}
	date, amount, category := s.Date.F1, s.Amount.F1, s.Category.F1
	p.DateF1, p.AmountF1, p.CategoryF1 = &date, &amount, &category
	if b, err := json.Marshal(s.Confusion); err == nil && len(s.Confusion) > 0 {
		p.CategoryConfusion = string(b)
	}
}

// confusionLabels returns the expected and predicted labels of a record's
// category for the confusion matrix.
func confusionLabels(o extractbench.Score) (want, got string) {
	want = ConfusionNull
	if o.Expected.Category != nil {
		want = *o.Expected.Category
	}
	switch {
	case o.Category == extractbench.Unscored:
		got = ConfusionInvalid
	case o.Prediction.Category == nil:
		got = ConfusionNull
	default:
		got = *o.Prediction.Category
	}
	return want, got
}

// fieldCounts returns one record's contribution to a field's F1: true
// positives, false positives and false negatives (a miss counts as FN).
func fieldCounts(r extractbench.FieldResult, expected *string) (tp, fp, fn int) {
	switch r {
	case extractbench.TP:
		return 1, 0, 0
	case extractbench.FPFN:
		return 0, 1, 1
	case extractbench.FN:
		return 0, 0, 1
	case extractbench.FP:
		return 0, 1, 0
	case extractbench.Unscored:
		if expected != nil {
			return 0, 0, 1
		}
	}
	return 0, 0, 0
}

// fieldOf returns a record's result and expectation for a named field.
func fieldOf(r *extractbench.Record, name string) (extractbench.FieldResult, *string, bool) {
	e := r.Score.Expected
	switch name {
	case "date":
		return r.Score.Date, e.Date, true
	case "amount":
		return r.Score.Amount, e.Amount, true
	case "category":
		return r.Score.Category, e.Category, true
	}
	return extractbench.Unscored, nil, false
}

// Invariance compares a pass's records with the level-1 records of the same
// variant and repetition (MEASUREMENT.md section 3, batch invariance): the
// documents whose raw output differs, and of those, the ones whose verdict
// (accepted or not) changed. Documents missing from base are not compared.
func Invariance(base, recs []extractbench.Record) (changed, verdicts int, ids []string) {
	byID := make(map[string]*extractbench.Record, len(base))
	for i := range base {
		byID[base[i].DocID] = &base[i]
	}
	for _, r := range recs {
		b, ok := byID[r.DocID]
		if !ok || b.Output == r.Output {
			continue
		}
		changed++
		ids = append(ids, r.DocID)
		if b.Accepted != r.Accepted {
			verdicts++
		}
	}
	return changed, verdicts, ids
}
