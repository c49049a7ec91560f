package eval

import (
	"math"

	"github.com/extractbench/extractbench"
)

// F1Delta compares one field's F1 between two variants on the same
// documents: delta = F1(b) − F1(a), and its percentile bootstrap interval at
// DefaultCILevel, resampling documents (the pair, never one side alone) with
// a PCG generator seeded by seed. Records are paired by DocID; documents
// present in one slice only are left out, and a DocID repeated within a
// slice is paired by its first record. field is "date", "amount" or
// "category" for records of the default fields, or a declared field of the
// records' Score.Fields (DeclaredRecords), counted by its FieldScore's TP,
// FP and FN (a list's matched, extra and missed items); any other name, or
// no common document, gives NaN throughout. F1 counts misses (fields never
// scored that expected a value) as FN, as Aggregate does.
func F1Delta(a, b []extractbench.Record, field string, resamples int, seed int64) (delta, lo, hi float64) {
	nan := math.NaN()
	declared := DeclaredRecords(a) || DeclaredRecords(b)
	if !hasField(a, b, field, declared) {
		return nan, nan, nan
	}
	first := make(map[string]int, len(b))
	for i := range b {
		if _, ok := first[b[i].DocID]; !ok {
			first[b[i].DocID] = i
		}
	}
	// counts[k] holds tp, fp, fn for A then for B, for the k-th common document.
	var counts [][6]int
	used := map[string]bool{}
	for i := range a {
		id := a[i].DocID
		j, ok := first[id]
		if !ok || used[id] {
			continue
		}
		used[id] = true
		var c [6]int
		c[0], c[1], c[2] = recordFieldCounts(&a[i], field, declared)
		c[3], c[4], c[5] = recordFieldCounts(&b[j], field, declared)
		counts = append(counts, c)
	}
	if len(counts) == 0 {
		return nan, nan, nan
	}
	// The bootstrap resamples document indices; the statistic sums the
	// counts of the drawn documents.
	stat := func(idx []float64) float64 {
		var s [6]int
		for _, x := range idx {
			c := counts[int(x)]
			for k := range s {
				s[k] += c[k]
			}
		}
		return dice(s[3], s[4], s[5]) - dice(s[0], s[1], s[2])
	}
	idx := make([]float64, len(counts))
	for i := range idx {
		idx[i] = float64(i)
	}
	delta = stat(idx)
	lo, hi = BootstrapCI(idx, stat, resamples, DefaultCILevel, seed)
	return delta, lo, hi
}

// DeclaredRecords reports whether records were scored on declared fields,
// by PassTally.Declared's rule: a record's expectation is a declared
// object, or its field scores are not the default fields'.
func DeclaredRecords(recs []extractbench.Record) bool {
	for i := range recs {
		if recs[i].Score.Declared || recs[i].Score.Expected.Object != "" || !areDefaultFields(recs[i].Score.Fields) {
			return true
		}
	}
	return false
}

// hasField reports whether field is one the records were scored on.
func hasField(a, b []extractbench.Record, field string, declared bool) bool {
	if !declared {
		_, _, ok := fieldOf(&extractbench.Record{}, field)
		return ok
	}
	for _, recs := range [][]extractbench.Record{a, b} {
		for i := range recs {
			for _, f := range recs[i].Score.Fields {
				if f.Name == field {
					return true
				}
			}
		}
	}
	return false
}

// recordFieldCounts is one record's contribution to field's F1: from the
// default columns (fieldCounts) for records of the default fields, from
// its FieldScore for declared ones (none when the record lacks the field).
func recordFieldCounts(r *extractbench.Record, field string, declared bool) (tp, fp, fn int) {
	if !declared {
		res, exp, _ := fieldOf(r, field)
		return fieldCounts(res, exp)
	}
	for _, f := range r.Score.Fields {
		if f.Name == field {
			return f.TP, f.FP, f.FN
		}
	}
	return 0, 0, 0
}

// SumPassFields sums the per-field figures of several passes (the
// repetitions of a level, say) by field name, each field where it first
// appears (the protocol's order), its ratios made by PassTally's rule.
func SumPassFields(passes ...[]extractbench.PassField) []extractbench.PassField {
	var out []extractbench.PassField
	at := map[string]int{}
	for _, fields := range passes {
		for _, f := range fields {
			i, ok := at[f.Name]
			if !ok {
				i = len(out)
				at[f.Name] = i
				out = append(out, extractbench.PassField{Name: f.Name, Position: i})
			}
			s := &out[i]
			s.TP, s.FP, s.FN, s.TN, s.Unscored = s.TP+f.TP, s.FP+f.FP, s.FN+f.FN, s.TN+f.TN, s.Unscored+f.Unscored
		}
	}
	for i := range out {
		finishField(&out[i])
	}
	return out
}

// dice is F1 as 2TP / (2TP + FP + FN), 1 when nothing was to be found and
// nothing was wrongly found (the 0/0 rule of FieldStats).
func dice(tp, fp, fn int) float64 {
	return ratio(2*tp, 2*tp+fp+fn, true)
}
