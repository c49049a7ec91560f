package report

import (
	"slices"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/sizing"
)

// series is one (variant, mode): the unit a sweep grows and a verdict judges.
// baseLevel is the level the others' answers are compared with: the
// lowest measured (the baseline: 1, or a rate sweep's sync), else the
// mode's baseline level.
func (s *series) baseLevel() int {
	if len(s.Levels) > 0 {
		return s.Levels[0].Level
	}
	return extractbench.Sweep{Mode: s.Mode}.BaselineLevel()
}

type series struct {
	Variant string
	Mode    extractbench.Mode
	Passes  []extractbench.Pass // ascending level, repetition
	Rec     eval.Recommendation
	// seriesRows is what the report shows of its requests (scan.go).
	seriesRows
	// Levels are eval's: the figures and verdict every page shows (pooled
	// share, medians over repetitions with their range, highest peaks).
	Levels []eval.Level
	// Params and PeakTFLOPS are the model's parameter count and the card's
	// dense bf16 rate, for the MFU estimate; 0 when unknown.
	Params     int64
	PeakTFLOPS float64
	// CPU: the engine ran on a machine without a GPU (cpuEngine); Card is
	// the card's name as recorded, for the MFU note.
	CPU  bool
	Card string
}

// distOf describes a latency distribution in nanoseconds as eval does
// (type-7 percentiles, as the passes table).
func distOf(ns []int64) eval.Distribution { return eval.DescribeNS(ns) }

// buildSeries groups the run's passes by variant and mode, as eval's
// aggregator does for every page, and attaches what the report shows of
// the requests of each.
func buildSeries(d *dataset) []*series {
	type key struct {
		variant string
		mode    extractbench.Mode
	}
	byKey := map[key]*series{}
	var out []*series
	for _, es := range d.Series() {
		s := &series{Variant: es.Variant, Mode: es.Mode, Rec: es.Recommendation}
		if rows := d.Rows[[2]string{es.Variant, string(es.Mode)}]; rows != nil {
			s.seriesRows = *rows
		}
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
	return out
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
func byClass(s *series) []classRow { return s.Classes }

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
