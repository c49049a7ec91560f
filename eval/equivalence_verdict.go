package eval

import (
	"math"
	"strconv"
)

// The three verdicts of a paired comparison (EquivalenceResult.Verdict).
const (
	VerdictEquivalent    = "EQUIVALENT"     // the interval of Δ lies inside ±δ
	VerdictNotEquivalent = "NOT EQUIVALENT" // it does not, on enough documents to have shown it
	VerdictInconclusive  = "INCONCLUSIVE"   // too few documents for δ: no answer could have shown it
)

// MaxNeededN bounds the search for NeededN: a margin that needs more
// documents than this is reported as "more than MaxNeededN".
const MaxNeededN = 10_000_000

// Verdict is EQUIVALENT, NOT EQUIVALENT, or INCONCLUSIVE when N documents
// were too few to show equivalence at the margin whatever the answers.
func (r EquivalenceResult) Verdict() string {
	switch {
	case r.Equivalent:
		return VerdictEquivalent
	case r.TooFew:
		return VerdictInconclusive
	}
	return VerdictNotEquivalent
}

// Needed says how many documents would do (NeededN), or that more than
// MaxNeededN would; "" when the comparison was not too small.
func (r EquivalenceResult) Needed() string {
	switch {
	case !r.TooFew:
		return ""
	case r.NeededN == 0:
		return "more than " + strconv.Itoa(MaxNeededN)
	}
	return strconv.Itoa(r.NeededN)
}

// tooFew reports whether n paired documents, accepted of them under A,
// cannot show equivalence at margin even with no discordant pair (the
// narrowest interval those n documents can give), and then the fewest
// documents that could, at A's accepted share (0 when more than
// MaxNeededN would be needed).
func tooFew(n, accepted int, margin, level float64) (bool, int) {
	share := 1.0
	if n > 0 {
		share = float64(accepted) / float64(n)
	}
	inside := func(m int) bool {
		a := int(math.Round(share * float64(m)))
		lo, hi := NewcombePaired(a, 0, 0, m-a, level)
		return lo > -margin && hi < margin
	}
	if n > 0 && inside(n) {
		return false, 0
	}
	// The interval narrows as documents are added, roughly as 1/m for a
	// share near 0 or 1 and 1/√m otherwise: double up to a size that
	// would do, then walk back to the first that does.
	hi := max(n, 1)
	for !inside(hi) {
		if hi >= MaxNeededN {
			return true, 0
		}
		hi = min(2*hi, MaxNeededN)
	}
	lo := max(n, hi/2)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if inside(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return true, hi
}
