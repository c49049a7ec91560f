package dispatch

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/extractbench/extractbench"
)

// Arrivals is a rate pass's schedule: n planned arrival offsets in
// nanoseconds from the pass's start, the first at 0, at rate requests per
// second. The gaps are exponential (Poisson arrivals), gamma with shape
// burstiness when burstiness is neither 0 nor 1 (vLLM's burstiness: below 1
// burstier, above 1 more regular, the mean rate unchanged), or all 1/rate
// for constant arrivals. The schedule is a pure function of its arguments:
// the same seed gives the same instants, so that a run is reproduced
// request for request.
func Arrivals(seed uint64, rate float64, n int, arrival string, burstiness float64) []int64 {
	out := make([]int64, n)
	if n == 0 || rate <= 0 {
		return out
	}
	mean := float64(time.Second) / rate
	rng := rand.New(rand.NewPCG(seed, 0x6172726976616c73)) // "arrivals"
	var t float64
	for i := 1; i < n; i++ {
		switch {
		case arrival == extractbench.ArrivalConstant:
			t += mean
		case burstiness > 0 && burstiness != 1:
			t += gamma(rng, burstiness) * mean / burstiness
		default:
			t += rng.ExpFloat64() * mean
		}
		out[i] = int64(math.Round(t))
	}
	return out
}

// ArrivalSeed makes a pass's schedule seed from the protocol's
// generation.seed, the level and the repetition: repetitions are
// independent samples of the arrival process, each reproducible.
func ArrivalSeed(seed *int, level, rep int) uint64 {
	var s uint64
	if seed != nil {
		s = uint64(*seed)
	}
	return s*0x9e3779b97f4a7c15 ^ uint64(level)<<20 ^ uint64(rep)
}

// gamma draws from Gamma(shape, 1) by Marsaglia and Tsang's method (shape
// below 1 through the boost U^(1/shape)).
func gamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gamma(rng, shape+1) * math.Pow(rng.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
