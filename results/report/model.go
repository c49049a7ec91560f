package report

import (
	"cmp"
	"slices"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/sizing"
)

// series is one (variant, mode): the unit a sweep grows and a verdict judges.
type series struct {
	Variant  string
	Mode     extractbench.Mode
	Passes   []extractbench.Pass   // ascending level, repetition
	Requests []requestRow          // of these passes
	Records  []extractbench.Record // of these passes, for the field scores
	Rec      eval.Recommendation
	// Levels are eval's: the figures and verdict every page shows (pooled
	// share, medians over repetitions with their range, highest peaks).
	Levels []eval.Level
	// Changed lists the answers that differ from level 1's (batch invariance).
	Changed []changedDoc
	// Params and PeakTFLOPS are the model's parameter count and the card's
	// dense bf16 rate, for the MFU estimate; 0 when unknown.
	Params     int64
	PeakTFLOPS float64
	// CPU: the engine ran on a machine without a GPU (cpuEngine); Card is
	// the card's name as recorded, for the MFU note.
	CPU  bool
	Card string
	// PooledE2E is each level's E2E over every request of every complete
	// repetition, for the detail tables (its n and maximum).
	PooledE2E map[int]eval.Distribution
}

// distOf describes a latency distribution in nanoseconds as eval does
// (type-7 percentiles, as the passes table).
func distOf(ns []int64) eval.Distribution { return eval.DescribeNS(ns) }

// buildSeries groups the run's passes by variant and mode, as eval's
// aggregator does for every page, and attaches the requests of each.
func buildSeries(d *dataset) []*series {
	type key struct {
		variant string
		mode    extractbench.Mode
	}
	byKey := map[key]*series{}
	var out []*series
	for _, es := range d.Series() {
		s := &series{Variant: es.Variant, Mode: es.Mode, Rec: es.Recommendation, Changed: d.Changed[[2]string{es.Variant, string(es.Mode)}]}
		vm := d.Manifest.Variant(es.Variant)
		s.Params = vm.Engine.Params
		s.CPU, s.Card = cpuEngine(vm), vm.GPU.Name
		if g, ok := sizing.FindGPU(vm.GPU.Name); ok {
			s.PeakTFLOPS = g.DenseBF16TFLOPS
		}
		s.Levels = es.Levels
		byKey[key{es.Variant, es.Mode}] = s
		out = append(out, s)
	}
	for _, p := range d.Passes {
		if s := byKey[key{p.Variant, p.Mode}]; s != nil {
			s.Passes = append(s.Passes, p)
		}
	}
	for _, r := range d.Requests {
		if s := byKey[key{r.Variant, r.Mode}]; s != nil {
			s.Requests = append(s.Requests, r)
		}
	}
	for _, r := range d.Records {
		if s := byKey[key{r.Variant, r.Mode}]; s != nil {
			s.Records = append(s.Records, r)
		}
	}
	for _, s := range out {
		complete := s.completePasses()
		e2e := map[int][]int64{}
		for _, r := range s.Requests {
			if complete[[2]int{r.Level, r.Repetition}] && r.E2E != nil {
				e2e[r.Level] = append(e2e[r.Level], *r.E2E)
			}
		}
		s.PooledE2E = map[int]eval.Distribution{}
		for lv, v := range e2e {
			s.PooledE2E[lv] = distOf(v)
		}
	}
	return out
}

// completePasses returns the (level, repetition) of every complete pass:
// interrupted passes are left out of every figure, as the verdict leaves them out.
func (s *series) completePasses() map[[2]int]bool {
	complete := map[[2]int]bool{}
	for _, p := range s.Passes {
		if p.Complete() {
			complete[[2]int{p.Level, p.Repetition}] = true
		}
	}
	return complete
}

// classRow is one length class at one level.
type classRow struct {
	Level    int
	Class    string
	Docs     int
	Accepted int
	Failures extractbench.FailureCounts
	TTFT     eval.Distribution
	E2E      eval.Distribution
}

// byClass splits every level by length class: long documents are where a
// card saturates, and a pooled figure hides them.
func byClass(s *series) []classRow {
	type key struct {
		level int
		class string
	}
	rows := map[key]*classRow{}
	ttft, e2e := map[key][]int64{}, map[key][]int64{}
	complete := s.completePasses()
	for _, r := range s.Requests {
		if !complete[[2]int{r.Level, r.Repetition}] {
			continue
		}
		k := key{r.Level, r.LengthClass}
		row := rows[k]
		if row == nil {
			row = &classRow{Level: r.Level, Class: r.LengthClass}
			rows[k] = row
		}
		row.Docs++
		if r.Accepted {
			row.Accepted++
		}
		row.Failures.Add(extractbench.Failure(r.Failure), 1)
		if r.TTFT != nil {
			ttft[k] = append(ttft[k], *r.TTFT)
		}
		if r.E2E != nil {
			e2e[k] = append(e2e[k], *r.E2E)
		}
	}
	out := make([]classRow, 0, len(rows))
	for k, row := range rows {
		row.TTFT, row.E2E = distOf(ttft[k]), distOf(e2e[k])
		out = append(out, *row)
	}
	slices.SortFunc(out, func(a, b classRow) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(classRank(a.Class), classRank(b.Class)), cmp.Compare(a.Class, b.Class))
	})
	return out
}

func classRank(c string) int {
	if i := slices.Index(extractbench.LengthClasses, c); i >= 0 {
		return i
	}
	return len(extractbench.LengthClasses)
}

// changedDoc is one document whose raw answer at a level differs from its
// level-1 answer in the same repetition.
type changedDoc struct {
	Level, Repetition int
	DocID             string
	VerdictChanged    bool
}

// changedDocs compares every complete pass with the lowest level's pass of
// the same variant, mode and repetition (eval.Invariance).
func changedDocs(passes []extractbench.Pass, recs []extractbench.Record) map[[2]string][]changedDoc {
	type pk struct {
		variant           string
		mode              extractbench.Mode
		level, repetition int
	}
	complete := map[pk]bool{}
	lowest := map[[2]string]int{}
	for _, p := range passes {
		if !p.Complete() {
			continue
		}
		complete[pk{p.Variant, p.Mode, p.Level, p.Repetition}] = true
		k := [2]string{p.Variant, string(p.Mode)}
		if l, ok := lowest[k]; !ok || p.Level < l {
			lowest[k] = p.Level
		}
	}
	byPass := map[pk][]extractbench.Record{}
	for _, r := range recs {
		k := pk{r.Variant, r.Mode, r.Level, r.Repetition}
		if complete[k] {
			byPass[k] = append(byPass[k], r)
		}
	}
	out := map[[2]string][]changedDoc{}
	for k, rs := range byPass {
		base := lowest[[2]string{k.variant, string(k.mode)}]
		if k.level == base {
			continue
		}
		baseRecs := byPass[pk{k.variant, k.mode, base, k.repetition}]
		if baseRecs == nil {
			continue
		}
		verdicts := map[string]bool{}
		for _, b := range baseRecs {
			verdicts[b.DocID] = b.Accepted
		}
		_, _, ids := eval.Invariance(baseRecs, rs)
		accepted := map[string]bool{}
		for _, r := range rs {
			accepted[r.DocID] = r.Accepted
		}
		for _, id := range ids {
			out[[2]string{k.variant, string(k.mode)}] = append(out[[2]string{k.variant, string(k.mode)}],
				changedDoc{Level: k.level, Repetition: k.repetition, DocID: id, VerdictChanged: verdicts[id] != accepted[id]})
		}
	}
	for _, docs := range out {
		slices.SortFunc(docs, func(a, b changedDoc) int {
			return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(a.Repetition, b.Repetition), cmp.Compare(a.DocID, b.DocID))
		})
	}
	return out
}
