package report

import (
	"cmp"
	"slices"

	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/sizing"
)

// lengthClasses orders the length classes of the corpus; a class outside it
// is listed after them.
var lengthClasses = []string{"short", "usual", "long"}

// series is one (variant, mode): the unit a sweep grows and a verdict judges.
type series struct {
	Variant, Mode string
	Passes        []passRow    // ascending level, repetition
	Requests      []requestRow // of these passes
	Rec           sizing.Recommendation
	Levels        []level
}

// level is what one level measured over its repetitions. Latencies pool
// every request of every repetition (n says how many); pass figures such as
// corpus time take the median over repetitions with the range beside it.
type level struct {
	Level       int
	Reps        int
	Docs        int
	Accepted    int
	Failures    [5]int // eval.Failures order, summed over repetitions
	TTFT, E2E   dist
	E2ESched    dist
	ClientQueue dist
	CorpusNS    spread // pass duration
	DocsPerHour spread // accepted documents per hour
	TokensPerS  spread // output tokens per second
	// Peaks are the maximum over repetitions; nil when no pass had the figure.
	PeakGPU, PeakAlloc, PeakReserved, PeakKV, MaxRunning, Preemptions *float64
	Verdict                                                           sizing.LevelVerdict
	Judged                                                            bool
}

// Share is the accepted share over all repetitions.
func (l level) Share() float64 {
	if l.Docs == 0 {
		return 0
	}
	return float64(l.Accepted) / float64(l.Docs)
}

// spread is the median and range of one figure over repetitions.
type spread struct {
	N             int
	Med, Min, Max float64
}

func spreadOf(v []float64) spread {
	d := eval.Describe(v)
	return spread{N: d.N, Med: d.P50, Min: d.Min, Max: d.Max}
}

// dist is a latency distribution in nanoseconds, described by eval (type-7
// percentiles, as the passes table), so that a figure pooled over
// repetitions and a per-pass figure read the same way.
type dist = eval.Summary

func distOf(ns []int64) dist { return eval.DescribeNS(ns) }

// buildSeries groups the run's passes by variant and mode, in the order
// they were stored, and judges each with sizing.Recommend.
func buildSeries(d *dataset, acc sizing.Acceptance) []*series {
	type key struct{ variant, mode string }
	byKey := map[key]*series{}
	var out []*series
	for _, p := range d.Passes {
		k := key{p.Variant, p.Mode}
		s := byKey[k]
		if s == nil {
			s = &series{Variant: p.Variant, Mode: p.Mode}
			byKey[k] = s
			out = append(out, s)
		}
		s.Passes = append(s.Passes, p)
	}
	for _, r := range d.Requests {
		if s := byKey[key{r.Variant, r.Mode}]; s != nil {
			s.Requests = append(s.Requests, r)
		}
	}
	for _, s := range out {
		figs := make([]sizing.PassFigures, len(s.Passes))
		for i, p := range s.Passes {
			figs[i] = passFigures(p)
		}
		s.Rec = sizing.Recommend(figs, acc)
		s.Levels = levels(s)
	}
	return out
}

func passFigures(p passRow) sizing.PassFigures {
	f := sizing.PassFigures{
		Variant: p.Variant, Mode: p.Mode, Level: p.Level, Repetition: p.Repetition,
		Phase: p.Phase, Status: p.Status, Docs: p.Docs, Accepted: p.Accepted,
		FailuresMemory: p.Failures[0], FailuresTruncation: p.Failures[1], FailuresFormat: p.Failures[2],
		FailuresQuality: p.Failures[3], FailuresError: p.Failures[4],
	}
	if p.E2EP95NS != nil {
		f.E2EP95NS = *p.E2EP95NS
	}
	if p.Preemptions != nil {
		n := int64(*p.Preemptions)
		f.Preemptions = &n
	}
	return f
}

// completePasses returns the (level, repetition) of every complete pass:
// interrupted passes are left out of every figure, as the verdict leaves them out.
func (s *series) completePasses() map[[2]int]bool {
	complete := map[[2]int]bool{}
	for _, p := range s.Passes {
		if p.Status == "" || p.Status == "complete" {
			complete[[2]int{p.Level, p.Repetition}] = true
		}
	}
	return complete
}

// levels aggregates a series level by level. Interrupted passes are left out
// of every figure, as the verdict leaves them out.
func levels(s *series) []level {
	byLevel := map[int]*level{}
	var order []int
	get := func(n int) *level {
		l := byLevel[n]
		if l == nil {
			l = &level{Level: n}
			byLevel[n] = l
			order = append(order, n)
		}
		return l
	}
	complete := map[[2]int]bool{}
	dur, dph, tps := map[int][]float64{}, map[int][]float64{}, map[int][]float64{}
	for _, p := range s.Passes {
		if p.Status != "" && p.Status != "complete" {
			continue
		}
		complete[[2]int{p.Level, p.Repetition}] = true
		l := get(p.Level)
		l.Reps++
		l.Docs += p.Docs
		l.Accepted += p.Accepted
		for i, n := range p.Failures {
			l.Failures[i] += n
		}
		if p.DurationNS > 0 {
			dur[p.Level] = append(dur[p.Level], float64(p.DurationNS))
			perHour := float64(p.Accepted) / (float64(p.DurationNS) / 3.6e12)
			if p.DocsPerHour != nil {
				perHour = *p.DocsPerHour
			}
			dph[p.Level] = append(dph[p.Level], perHour)
		}
		if p.OutputTokensPerS != nil {
			tps[p.Level] = append(tps[p.Level], *p.OutputTokensPerS)
		}
		l.PeakGPU = maxPtr(l.PeakGPU, p.PeakGPUMem)
		l.PeakAlloc = maxPtr(l.PeakAlloc, p.PeakTorchAlloc)
		l.PeakReserved = maxPtr(l.PeakReserved, p.PeakTorchReserved)
		l.PeakKV = maxPtr(l.PeakKV, p.PeakKV)
		l.MaxRunning = maxPtr(l.MaxRunning, p.ObservedMaxRunning)
		l.Preemptions = maxPtr(l.Preemptions, p.Preemptions)
	}
	lat := map[int]*[4][]int64{}
	for _, r := range s.Requests {
		if !complete[[2]int{r.Level, r.Repetition}] {
			continue
		}
		v := lat[r.Level]
		if v == nil {
			v = &[4][]int64{}
			lat[r.Level] = v
		}
		for i, x := range []*int64{r.TTFT, r.E2E, r.E2ESched, r.ClientQueue} {
			if x != nil {
				v[i] = append(v[i], *x)
			}
		}
	}
	slices.Sort(order)
	out := make([]level, 0, len(order))
	for _, n := range order {
		l := byLevel[n]
		if v := lat[n]; v != nil {
			l.TTFT, l.E2E, l.E2ESched, l.ClientQueue = distOf(v[0]), distOf(v[1]), distOf(v[2]), distOf(v[3])
		}
		l.CorpusNS, l.DocsPerHour, l.TokensPerS = spreadOf(dur[n]), spreadOf(dph[n]), spreadOf(tps[n])
		l.Verdict, l.Judged = s.Rec.Level(n)
		out = append(out, *l)
	}
	return out
}

func maxPtr(a, b *float64) *float64 {
	switch {
	case b == nil:
		return a
	case a == nil || *b > *a:
		v := *b
		return &v
	}
	return a
}

// classRow is one length class at one level.
type classRow struct {
	Level    int
	Class    string
	Docs     int
	Accepted int
	Failures [5]int
	TTFT     dist
	E2E      dist
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
		if i := failureIndex(r.Failure); i >= 0 {
			row.Failures[i]++
		}
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
	if i := slices.Index(lengthClasses, c); i >= 0 {
		return i
	}
	return len(lengthClasses)
}

// failureIndex is the position of a failure class in eval.Failures, or -1.
func failureIndex(f string) int {
	return slices.Index(eval.Failures, eval.Failure(f))
}
