package eval

import (
	"fmt"
	"math"
	"testing"
)

// pairs builds a paired table: a both right, b A only, c B only, d both wrong.
func pairs(a, b, c, d int) []Pair {
	var ps []Pair
	add := func(n int, aok, bok bool) {
		for range n {
			id := fmt.Sprintf("doc-%03d", len(ps))
			ps = append(ps, Pair{DocID: id, AOK: aok, BOK: bok, AOutput: "A:" + id, BOutput: "B:" + id})
		}
	}
	add(a, true, true)
	add(b, true, false)
	add(c, false, true)
	add(d, false, false)
	return ps
}

// The expected bounds were computed independently of this package, by
// testdata/newcombe.py (Newcombe 1998 method 10 written from the paper, in
// the A − B orientation, then negated), not from this package's output.
// Two tables are textbook examples: Newcombe's example (a), 36/12/2/0, and
// Altman et al., Statistics with Confidence (2000), Table 6.2, 14/5/0/22.
func TestNewcombePaired(t *testing.T) {
	tests := []struct {
		name       string
		a, b, c, d int
		level      float64
		lo, hi     float64
	}{
		{"Newcombe 1998 example a, 95%", 36, 12, 2, 0, 0.95, -0.3404276030, -0.0569295840},
		{"Newcombe 1998 example a, 90%", 36, 12, 2, 0, 0.90, -0.3171226824, -0.0816654357},
		{"Altman 2000 table 6.2, 95%", 14, 5, 0, 22, 0.95, -0.2264926844, -0.0114832414},
		{"Altman 2000 table 6.2, 90%", 14, 5, 0, 22, 0.90, -0.2108832203, -0.0287590823},
		{"no flips, n=30", 30, 0, 0, 0, 0.90, -0.0827243081, 0.0827243081},
		{"no flips, n=300", 300, 0, 0, 0, 0.90, -0.0089378722, 0.0089378722},
		{"no flips, n=300, some both wrong", 270, 0, 0, 30, 0.90, -0.0089955358, 0.0089955358},
		{"all flipped to B wrong", 0, 10, 0, 0, 0.90, -1, -0.6988545779},
		{"all flipped to B right", 0, 0, 10, 0, 0.95, 0.6075093504, 1},
		{"near equivalence", 280, 9, 6, 5, 0.90, -0.0337391916, 0.0128495497},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := NewcombePaired(tt.a, tt.b, tt.c, tt.d, tt.level)
			if math.Abs(lo-tt.lo) > 1e-9 || math.Abs(hi-tt.hi) > 1e-9 {
				t.Errorf("got [%.10f, %.10f], want [%.10f, %.10f]", lo, hi, tt.lo, tt.hi)
			}
		})
	}
}

func TestEquivalence(t *testing.T) {
	tests := []struct {
		name       string
		a, b, c, d int
		margin     float64
		equivalent bool
		delta      float64
		mcnemar    float64
	}{
		{"no flips, n=300, 2 points", 300, 0, 0, 0, 0.02, true, 0, 1},
		{"no flips, n=30, 5 points: too few documents", 30, 0, 0, 0, 0.05, false, 0, 1},
		{"few flips, 5 points", 280, 9, 6, 5, 0.05, true, -3.0 / 300, 0.607238769531},
		{"few flips, 3 points", 280, 9, 6, 5, 0.03, false, -3.0 / 300, 0.607238769531},
		{"all flipped", 0, 10, 0, 0, 0.5, false, -1, 0.001953125},
		{"zero margin", 300, 0, 0, 0, 0, false, 0, 1},
		{"no documents", 0, 0, 0, 0, 0.05, false, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := pairs(tt.a, tt.b, tt.c, tt.d)
			got := Equivalence(ps, tt.margin, 0.05)
			if got.Equivalent != tt.equivalent {
				t.Errorf("got equivalent %v with [%v, %v], want %v", got.Equivalent, got.Lo, got.Hi, tt.equivalent)
			}
			if got.N != len(ps) || got.BothOK != tt.a || got.B != tt.b || got.C != tt.c || got.BothWrong != tt.d {
				t.Errorf("got table %d/%d/%d/%d n=%d, want %d/%d/%d/%d", got.BothOK, got.B, got.C, got.BothWrong, got.N, tt.a, tt.b, tt.c, tt.d)
			}
			if !near(got.Delta, tt.delta) || math.Abs(got.McNemarP-tt.mcnemar) > 1e-9 {
				t.Errorf("got delta %v McNemar %v, want %v %v", got.Delta, got.McNemarP, tt.delta, tt.mcnemar)
			}
			if got.Level != 0.9 || got.Method == "" {
				t.Errorf("got level %v method %q, want 0.9 and a method", got.Level, got.Method)
			}
			if len(got.Flips) != tt.b+tt.c {
				t.Fatalf("got %d flips, want %d", len(got.Flips), tt.b+tt.c)
			}
			for _, f := range got.Flips {
				if f.AOK == f.BOK || f.AOutput != "A:"+f.DocID || f.BOutput != "B:"+f.DocID {
					t.Errorf("got flip %+v, want a disagreement with both outputs", f)
				}
			}
		})
	}
}

func TestEquivalence_IntervalNarrowsWithN(t *testing.T) {
	prev := math.Inf(1)
	for _, n := range []int{10, 30, 100, 300, 1000} {
		r := Equivalence(pairs(n, 0, 0, 0), 0.05, 0.05)
		width := r.Hi - r.Lo
		if !(width < prev) || r.Lo >= 0 || r.Hi <= 0 {
			t.Errorf("n=%d: got [%v, %v], want an interval around 0 narrower than %v", n, r.Lo, r.Hi, prev)
		}
		prev = width
	}
}

func TestEquivalence_BadAlpha(t *testing.T) {
	for _, alpha := range []float64{0, 0.5, -1, math.NaN()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("alpha %v: got no panic", alpha)
				}
			}()
			Equivalence(nil, 0.05, alpha)
		}()
	}
}

func TestMcNemarExact(t *testing.T) {
	// Hand-computed: b=1, c=4: 2·(1 + 5)/32 = 0.375; b=0, c=6: 2/64.
	tests := []struct {
		b, c int
		want float64
	}{{0, 0, 1}, {1, 4, 0.375}, {4, 1, 0.375}, {0, 6, 2.0 / 64}, {3, 3, 1}, {5, 0, 2.0 / 32}}
	for _, tt := range tests {
		if got := McNemarExact(tt.b, tt.c); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("McNemarExact(%d, %d): got %v, want %v", tt.b, tt.c, got, tt.want)
		}
	}
}

// TestEquivalence_TooFew is issue 24's compare on 99 identical answers: with
// no discordant pair, 99 documents cannot exclude ±2 points, so the verdict
// is INCONCLUSIVE with the number of documents that would do (the smallest
// n whose no-flip interval lies inside ±δ, checked on both sides of it),
// not NOT EQUIVALENT; a real difference on enough documents still is.
func TestEquivalence_TooFew(t *testing.T) {
	const margin, level = 0.02, 0.9
	tests := []struct {
		name       string
		a, b, c, d int
		verdict    string
	}{
		{"99 of 99 identical", 99, 0, 0, 0, VerdictInconclusive},
		{"99 documents, 3 flips", 90, 2, 1, 6, VerdictInconclusive},
		{"no documents", 0, 0, 0, 0, VerdictInconclusive},
		{"300 identical", 300, 0, 0, 0, VerdictEquivalent},
		{"300 documents, 15 flips one way", 276, 15, 0, 9, VerdictNotEquivalent},
		{"30 documents, 20 flips one way: a difference shown", 10, 20, 0, 0, VerdictNotEquivalent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Equivalence(pairs(tt.a, tt.b, tt.c, tt.d), margin, 0.05)
			if got.Verdict() != tt.verdict {
				t.Fatalf("verdict %s (interval [%.4f, %.4f], too few %v), want %s", got.Verdict(), got.Lo, got.Hi, got.TooFew, tt.verdict)
			}
			if tt.verdict != VerdictInconclusive {
				if got.TooFew || got.NeededN != 0 {
					t.Errorf("too few %v, needed %d on a decided comparison", got.TooFew, got.NeededN)
				}
				return
			}
			n := got.NeededN
			if n <= got.N {
				t.Fatalf("needed %d documents, want more than the %d measured", n, got.N)
			}
			share := 1.0
			if got.N > 0 {
				share = float64(tt.a+tt.b) / float64(got.N)
			}
			inside := func(m int) bool {
				a := int(math.Round(share * float64(m)))
				lo, hi := NewcombePaired(a, 0, 0, m-a, level)
				return lo > -margin && hi < margin
			}
			if !inside(n) || inside(n-1) {
				t.Errorf("needed %d: no-flip interval inside ±δ at %d %v, at %d %v; want the first n that is", n, n, inside(n), n-1, inside(n-1))
			}
		})
	}
	// All accepted: the no-flip interval is ±z²/(n+z²), inside ±0.02 from
	// n = 133 (z = 1.645: 2.706/135.7 < 0.02 < 2.706/134.7).
	if got := Equivalence(pairs(99, 0, 0, 0), margin, 0.05); got.NeededN != 133 {
		t.Errorf("99 of 99: %d documents would do, want 133", got.NeededN)
	}
}
