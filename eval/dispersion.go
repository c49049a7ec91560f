package eval

// The dispersion rule (MEASUREMENT.md section 12): a difference between two
// levels' figures (a latency regression, a ranking) is called only beyond
// the spread their repetitions measured, so that measuring the same engine
// again does not flip the decision.

// OneRepetition is why a latency difference resting on a single repetition
// is not called: there is no spread to judge it by.
const OneRepetition = "one repetition: no spread to judge a latency difference by"

// Apart reports whether a and b, the same figure over two sets of
// repetitions, differ beyond their spread: each has at least two
// repetitions and their ranges do not overlap. When they do not, why says
// so in words ("" when they are apart).
func Apart(a, b Spread) (apart bool, why string) {
	switch {
	case a.N == 0 || b.N == 0:
		return false, "not measured in both"
	case a.N < 2 || b.N < 2:
		return false, "one repetition: no spread to judge a difference by"
	case a.Max < b.Min || b.Max < a.Min:
		return true, ""
	}
	return false, "within the spread the repetitions measured (their ranges overlap)"
}
