package eval

import (
	"math"
	"slices"

	"github.com/extractbench/extractbench"
)

// Drift is the relative difference of one request's prompt tokens, and
// whether it counts as drift; ok is false when the request cannot be
// compared (no usage, no expected count, or an implausible one).
func Drift(r *extractbench.Record) (rel float64, drifted, ok bool) {
	if !r.UsageReported || r.ExpectedPromptTokens == nil {
		return 0, false, false
	}
	want := *r.ExpectedPromptTokens
	if want <= 0 || !PlausibleTokens(want) || !PlausibleTokens(r.PromptTokens) {
		return 0, false, false
	}
	diff := r.PromptTokens - want
	return float64(diff) / float64(want), diff > extractbench.PromptDriftSlack || diff < -extractbench.PromptDriftSlack, true
}

// DriftOf is the PromptDrift of records held in memory (compare's paired
// pass); results computes a stored pass's the same way in SQL.
func DriftOf(recs []extractbench.Record, reference string) extractbench.PromptDrift {
	var compared int64
	var rels []float64
	for i := range recs {
		rel, drifted, ok := Drift(&recs[i])
		if !ok {
			continue
		}
		compared++
		if drifted {
			rels = append(rels, rel)
		}
	}
	d := extractbench.PromptDrift{}
	if compared == 0 {
		return d
	}
	d.Reference, d.Compared = reference, &compared
	n := int64(len(rels))
	d.Docs = &n
	if n > 0 {
		slices.Sort(rels)
		med := MedianSorted(rels)
		mx := rels[0]
		if math.Abs(rels[len(rels)-1]) >= math.Abs(mx) {
			mx = rels[len(rels)-1]
		}
		d.Median, d.Max = &med, &mx
	}
	return d
}

// MedianSorted is the median of ascending values: the middle one, or the
// mean of the two middle ones.
func MedianSorted(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
