package eval

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/extractbench/extractbench"
)

// TestMatchNear_Largest: the sweep finds the largest matching of decimals
// within tolerance, as augmenting paths (kuhn, below) do, on random lists
// with duplicates, huge values and relative tolerances.
func TestMatchNear_Largest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		item := extractbench.Field{Type: extractbench.FieldDecimal, AbsTolerance: fmt.Sprint(rng.IntN(3))}
		if trial%2 == 1 {
			item.RelTolerance = "0.1"
		}
		gen := func() []any {
			out := make([]any, rng.IntN(8))
			for i := range out {
				v, _ := readValue(item, json.Number(fmt.Sprint(rng.IntN(21)-10)), true)
				if rng.IntN(10) == 0 {
					v = Amount{Huge: true}
				}
				out[i] = v
			}
			return out
		}
		want, have := gen(), gen()
		if got, best := matchNear(item, want, have), kuhn(item, want, have); got != best {
			t.Fatalf("tolerance %s/%s: %v vs %v: matched %d, the largest matching has %d", item.AbsTolerance, item.RelTolerance, want, have, got, best)
		}
	}
}

// kuhn is the largest matching by augmenting paths: slow, plainly right.
func kuhn(item extractbench.Field, want, have []any) int {
	owner := make([]int, len(have))
	for j := range owner {
		owner[j] = -1
	}
	var try func(i int, seen []bool) bool
	try = func(i int, seen []bool) bool {
		for j := range have {
			if seen[j] || !sameValue(item, want[i], have[j]) {
				continue
			}
			seen[j] = true
			if owner[j] < 0 || try(owner[j], seen) {
				owner[j] = i
				return true
			}
		}
		return false
	}
	n := 0
	for i := range want {
		if try(i, make([]bool, len(have))) {
			n++
		}
	}
	return n
}

// TestScoreField_LongList: a long list of decimals, each answer near many
// expected values, scores in time (augmenting paths took minutes here).
func TestScoreField_LongList(t *testing.T) {
	f := extractbench.Field{Name: "l", Type: extractbench.FieldList, Items: &extractbench.Field{Type: extractbench.FieldDecimal, AbsTolerance: "1000"}}
	var want, have []any
	for i := range 3000 {
		want = append(want, json.Number(fmt.Sprint(i)))
		have = append(have, json.Number(fmt.Sprint(i+1500)))
	}
	if s := ScoreField(f, want, have, true); s.TP != 2500 || s.FP != 500 || s.FN != 500 {
		t.Errorf("tp/fp/fn %d/%d/%d, want 2500/500/500", s.TP, s.FP, s.FN)
	}
}
