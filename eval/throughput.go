package eval

import "github.com/extractbench/extractbench"

// The throughput figures, each defined once (README "One figure per
// concept"). Two figures really differ and are never shown under one name:
//
//   - accepted documents per hour IN PASSES (passes.docs_per_hour, a level's
//     Level.DocsPerHour): accepted ÷ PassDuration of each pass, then the
//     median over the level's complete repetitions (the level rule of
//     levels.go). stdout's "accepted/h", the report's "accepted
//     documents/hour", compare, plan's and select's "in passes" are this one
//     figure.
//   - SUSTAINED accepted documents per hour (sizing.PlanResult): the figure
//     in passes divided by a campaign's costs per document (the evaluation
//     overhead between passes, retries when assumed): what a long run of the
//     corpus delivers. It is always labelled "sustained".
//
// PassDuration is a pass's duration_ns: the active time of its requests,
// from the first send to the last done of each segment the pass ran in
// (one per invocation of the run: a resumed pass counts the segment before
// the interruption and the one after it, not the time the tool was down;
// a merged pass the union of its shards' segments, so that shards that ran
// at the same time count their common time once).

// PerHour is count per hour of a pass duration in nanoseconds: the one
// division every per-hour throughput figure uses (documents, accepted
// documents); nil when the duration is 0 (a rate over a zero duration is
// undefined, never 0).
func PerHour(count int64, durationNS int64) *float64 {
	if durationNS <= 0 {
		return nil
	}
	v := float64(count) / (float64(durationNS) / 1e9) * 3600
	return &v
}

// PassDocsPerHour is a pass's documents (accepted or not) per hour of its
// duration: what a corpus of N documents takes at the pass's pace.
func PassDocsPerHour(p *extractbench.Pass) *float64 { return PerHour(p.Docs, p.DurationNS) }

// PassAcceptedPerHour is a pass's accepted documents per hour of its
// duration: passes.docs_per_hour.
func PassAcceptedPerHour(p *extractbench.Pass) *float64 { return PerHour(p.Accepted, p.DurationNS) }

// MedianOverRepetitions applies the level rule to one per-pass figure: its
// median over the complete passes given (an interrupted pass, or one
// without the figure, is left out), with its range.
func MedianOverRepetitions(passes []*extractbench.Pass, figure func(*extractbench.Pass) *float64) Spread {
	var vs []float64
	for _, p := range passes {
		if p.Complete() {
			vs = appendF(vs, figure(p))
		}
	}
	return spreadOf(vs)
}
