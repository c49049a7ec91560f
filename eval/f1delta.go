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
// "category"; any other name, or no common document, gives NaN throughout.
// F1 counts misses (fields never scored that expected a value) as FN, as
// Aggregate does.
func F1Delta(a, b []extractbench.Record, field string, resamples int, seed int64) (delta, lo, hi float64) {
	nan := math.NaN()
	if _, _, ok := fieldOf(&extractbench.Record{}, field); !ok {
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
		ra, ea, _ := fieldOf(&a[i], field)
		rb, eb, _ := fieldOf(&b[j], field)
		c[0], c[1], c[2] = fieldCounts(ra, ea)
		c[3], c[4], c[5] = fieldCounts(rb, eb)
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

// dice is F1 as 2TP / (2TP + FP + FN), 1 when nothing was to be found and
// nothing was wrongly found (the 0/0 rule of FieldStats).
func dice(tp, fp, fn int) float64 {
	return ratio(2*tp, 2*tp+fp+fn, true)
}
