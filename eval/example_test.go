package eval_test

import (
	"fmt"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/eval"
)

func ExampleEvaluate() {
	date, amount, category := "2025-03-14", "1234.56", "software"
	exp := corpus.Expected{Date: &date, Amount: &amount, Category: &category}
	out := "```json\n{\"date\": \"2025-03-14\", \"amount\": 1234.560, \"category\": \"Software\"}\n```"

	for _, rule := range []extractbench.ParseRule{extractbench.Strict, extractbench.Lenient} {
		o := eval.Evaluate(out, exp, extractbench.Transport{FinishReason: "stop"}, eval.Options{Rule: rule})
		fmt.Printf("%s: accepted=%v failure=%q\n", rule, o.Accepted, o.Failure)
	}
	// Output:
	// strict: accepted=false failure="format"
	// lenient: accepted=true failure=""
}

func ExampleEquivalence() {
	var pairs []eval.Pair
	for i := range 300 {
		// Three documents flip each way out of 300.
		pairs = append(pairs, eval.Pair{DocID: fmt.Sprint(i), AOK: i >= 3, BOK: i < 3 || i >= 6})
	}
	r := eval.Equivalence(pairs, 0.03, 0.05)
	fmt.Printf("b=%d c=%d delta=%.3f 90%% CI [%.4f, %.4f] equivalent within ±3 points: %v; flips: %d\n",
		r.B, r.C, r.Delta, r.Lo, r.Hi, r.Equivalent, len(r.Flips))
	// Output:
	// b=3 c=3 delta=0.000 90% CI [-0.0160, 0.0160] equivalent within ±3 points: true; flips: 6
}
