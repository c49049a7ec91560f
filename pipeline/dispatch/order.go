package dispatch

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"

	"github.com/extractbench/extractbench"
)

// orderDomain opens the bytes an order seed is hashed from, so that it
// never equals another seed made from the same numbers (ArrivalSeed's).
const orderDomain = "extractbench send order v1"

// OrderSeed is the seed of a pass's send order (passes.order_seed); nil for
// sweep.order corpus. It depends on generation.seed, the level and the
// repetition only, never the variant, so that variants stay paired document
// for document and a resumed pass recomputes its order: SHA-256 over
// orderDomain and the three as big-endian int64s, first 8 bytes, top bit
// cleared so that SQLite's signed INTEGER holds it.
func OrderSeed(sw extractbench.Sweep, seed *int, level, rep int) *int64 {
	if !sw.Shuffled() {
		return nil
	}
	var s int64
	if seed != nil {
		s = int64(*seed)
	}
	h := sha256.New()
	h.Write([]byte(orderDomain))
	var b [8]byte
	for _, v := range []int64{s, int64(level), int64(rep)} {
		binary.BigEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	out := int64(binary.BigEndian.Uint64(h.Sum(nil)[:8]) >> 1)
	return &out
}

// Permute is the send order of n documents under an order seed: position i
// of the pass sends the document at list position Permute(n, seed)[i]. It
// is a Fisher-Yates shuffle driven by PCG-DXSM (math/rand/v2's PCG, a
// specified algorithm) seeded with (seed, the bytes of "order"), each bound
// drawn by rejection from the generator's raw 64-bit outputs: nothing in
// it depends on math/rand's helpers (IntN, Shuffle), whose algorithms a Go
// release may change, so the permutation of a stored seed is the same on
// every Go version.
func Permute(n int, seed int64) []int32 {
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(i)
	}
	src := rand.NewPCG(uint64(seed), 0x6f72646572) // "order"
	for i := n - 1; i > 0; i-- {
		j := uniform(src, uint64(i)+1)
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// uniform draws uniformly from [0, bound) by rejection: an output at or
// above the largest multiple of bound is drawn again, so that every
// remainder is equally likely.
func uniform(src *rand.PCG, bound uint64) uint64 {
	rest := -bound % bound // 2^64 mod bound
	limit := -rest         // 2^64 − rest, the largest multiple of bound below 2^64; 0 (all of them) when rest is 0
	for {
		if v := src.Uint64(); rest == 0 || v < limit {
			return v % bound
		}
	}
}
