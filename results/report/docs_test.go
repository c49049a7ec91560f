package report

import (
	"math/rand/v2"
	"testing"
)

// TestMedianNS_IsDistributionP50: medianNS, which slowestAt takes three
// times a document, is the median of the whole distribution (distOf's
// P50), bit for bit: odd and even counts, ties, and values past 2^53
// where float64 rounds.
func TestMedianNS_IsDistributionP50(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		n := 1 + rng.IntN(9)
		v := make([]int64, n)
		for j := range v {
			switch i % 3 {
			case 0:
				v[j] = rng.Int64N(5) * 1_000_000 // ties
			case 1:
				v[j] = rng.Int64N(10_000_000_000)
			default:
				v[j] = 1<<53 + rng.Int64N(1<<12) // rounded to float64
			}
		}
		want := int64(distOf(v).P50)
		if got := medianNS(v); got != want {
			t.Fatalf("medianNS(%v) = %d, want distOf's P50 %d", v, got, want)
		}
	}
}
