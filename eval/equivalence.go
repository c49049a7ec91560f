package eval

import (
	"fmt"
	"math"
)

// EquivalenceMethod names the interval Equivalence computes, for reports.
const EquivalenceMethod = "Newcombe (1998) method 10: hybrid score interval for paired proportions, phi continuity-corrected"

// Pair is one document answered by two variants A (the reference) and B
// (the candidate, e.g. quantised) on the same input.
type Pair struct {
	DocID            string
	AOK, BOK         bool   // accepted under each variant
	AOutput, BOutput string // the raw outputs, for the flip list
}

// EquivalenceResult is the paired comparison of MEASUREMENT.md section 8.
// BothOK, B, C and BothWrong are the four cells of the paired 2×2 table;
// Delta = (C − B)/N is B's acceptance minus A's.
type EquivalenceResult struct {
	N          int
	BothOK     int     // a: both accepted
	B          int     // A right, B wrong
	C          int     // B right, A wrong
	BothWrong  int     // d: both failed
	Delta      float64 // (C − B)/N
	Lo, Hi     float64 // the (1 − 2α) interval of Delta
	Level      float64 // 1 − 2α: 0.90 at α = 0.05
	Margin     float64 // δ, written before the run
	Alpha      float64
	Equivalent bool    // the interval lies inside (−δ, +δ): both one-sided tests reject at α
	McNemarP   float64 // exact two-sided McNemar p-value; information only, never a verdict
	Method     string
	Flips      []Pair // every document on which the two variants disagree, in input order
	// TooFew is set when B is not shown equivalent and could not have
	// been on N documents: even with no discordant pair (A's accepted share
	// kept) the interval reaches ±δ. Unless the interval lies wholly outside
	// ±δ (a difference shown), the verdict is then INCONCLUSIVE; NeededN is the fewest documents with which a table of
	// no discordant pair would lie inside ±δ (0: more than MaxNeededN).
	TooFew  bool `json:",omitempty"`
	NeededN int  `json:",omitempty"`
}

// Equivalence runs the two one-sided tests (TOST) on paired acceptance: B is
// equivalent to A at alpha when the 1 − 2α interval of Δ = (c − b)/n lies
// inside (−margin, +margin). The interval is Newcombe's hybrid score
// interval for paired proportions (method 10, Statistics in Medicine
// 17:2635–2650, 1998), which unlike Wald's does not collapse when b + c = 0.
// It panics when alpha is not in (0, 0.5): a protocol bug, not a measurement.
func Equivalence(pairs []Pair, margin, alpha float64) EquivalenceResult {
	if !(alpha > 0 && alpha < 0.5) {
		panic(fmt.Sprintf("eval: equivalence alpha %v is not in (0, 0.5)", alpha))
	}
	r := EquivalenceResult{
		N:      len(pairs),
		Level:  1 - 2*alpha,
		Margin: margin,
		Alpha:  alpha,
		Method: EquivalenceMethod,
	}
	for _, p := range pairs {
		switch {
		case p.AOK && p.BOK:
			r.BothOK++
		case p.AOK:
			r.B++
			r.Flips = append(r.Flips, p)
		case p.BOK:
			r.C++
			r.Flips = append(r.Flips, p)
		default:
			r.BothWrong++
		}
	}
	r.McNemarP = McNemarExact(r.B, r.C)
	if r.N == 0 {
		r.Lo, r.Hi = -1, 1
		if margin > 0 {
			r.TooFew, r.NeededN = tooFew(0, 0, margin, r.Level)
		}
		return r
	}
	r.Delta = float64(r.C-r.B) / float64(r.N)
	r.Lo, r.Hi = NewcombePaired(r.BothOK, r.B, r.C, r.BothWrong, r.Level)
	r.Equivalent = margin > 0 && r.Lo > -margin && r.Hi < margin
	// An interval wholly outside ±δ shows a difference, however few the
	// documents; one that straddles δ on too few documents shows nothing.
	if !r.Equivalent && margin > 0 && r.Hi > -margin && r.Lo < margin {
		r.TooFew, r.NeededN = tooFew(r.N, r.BothOK+r.B, margin, r.Level)
	}
	return r
}

// NewcombePaired returns Newcombe's method 10 interval, at the given
// two-sided level, for p_B − p_A = (c − b)/n in a paired table where a
// pairs are right under both variants, b right under A only, c right under
// B only and d wrong under both. It returns (−1, 1) for an empty table.
func NewcombePaired(a, b, c, d int, level float64) (lo, hi float64) {
	n := a + b + c + d
	if n == 0 {
		return -1, 1
	}
	z := normalQuantile(1 - (1-level)/2)
	nf := float64(n)
	p1 := float64(a+c) / nf // B's acceptance
	p2 := float64(a+b) / nf // A's acceptance
	l1, u1 := wilson(a+c, n, z)
	l2, u2 := wilson(a+b, n, z)

	phi := 0.0
	if prod := float64(a+b) * float64(c+d) * float64(a+c) * float64(b+d); prod > 0 {
		num := float64(a)*float64(d) - float64(b)*float64(c)
		switch {
		case num > nf/2:
			num -= nf / 2
		case num >= 0:
			num = 0
		}
		phi = num / math.Sqrt(prod)
	}

	theta := p1 - p2
	dl := math.Sqrt(math.Max(0, sq(p1-l1)-2*phi*(p1-l1)*(u2-p2)+sq(u2-p2)))
	du := math.Sqrt(math.Max(0, sq(u1-p1)-2*phi*(u1-p1)*(p2-l2)+sq(p2-l2)))
	return math.Max(-1, theta-dl), math.Min(1, theta+du)
}

// wilson returns the Wilson score interval of x successes in n at quantile z.
func wilson(x, n int, z float64) (lo, hi float64) {
	nf, xf := float64(n), float64(x)
	z2 := z * z
	center := (xf + z2/2) / (nf + z2)
	half := z * math.Sqrt(xf*(nf-xf)/nf+z2/4) / (nf + z2)
	return math.Max(0, center-half), math.Min(1, center+half)
}

// normalQuantile returns Φ⁻¹(p), the standard normal quantile.
func normalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

func sq(x float64) float64 { return x * x }

// McNemarExact returns the exact two-sided McNemar p-value for b and c
// discordant pairs: twice the Binomial(b + c, 1/2) probability of a count at
// most min(b, c), capped at 1. It is 1 when there is no discordant pair. It
// tests a difference, so a large p-value never shows equivalence.
func McNemarExact(b, c int) float64 {
	m := b + c
	if m == 0 {
		return 1
	}
	k := min(b, c)
	lgM, _ := math.Lgamma(float64(m + 1))
	sum := 0.0
	for i := 0; i <= k; i++ {
		lgI, _ := math.Lgamma(float64(i + 1))
		lgR, _ := math.Lgamma(float64(m - i + 1))
		sum += math.Exp(lgM - lgI - lgR - float64(m)*math.Ln2)
	}
	return math.Min(1, 2*sum)
}
