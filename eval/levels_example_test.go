package eval_test

import (
	"fmt"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

func ExampleAggregateLevels() {
	pass := func(level, accepted, memFailures int) extractbench.Pass {
		p := extractbench.Pass{Variant: "bf16", Mode: "concurrency", Level: level, Repetition: 1, Docs: 300, Accepted: int64(accepted)}
		p.Failures.Add(extractbench.Memory, int64(memFailures))
		return p
	}
	series := eval.AggregateLevels([]extractbench.Pass{pass(1, 291, 0), pass(2, 291, 0), pass(4, 290, 0), pass(8, 240, 30)},
		extractbench.Acceptance{MinAccepted: 0.95}, eval.Planned{})
	r := series[0].Recommendation
	fmt.Println(r.Recommended, r.FirstBroken, r.BrokeBy)
	fmt.Println(r.Why)
	// Output:
	// 2 8 [memory acceptance baseline]
	// concurrency 2, one step below 4, the highest usable; concurrency 8 broke (30 memory failure(s); accepted 80.0% < threshold 95.0%; accepted 80.0% < 99% of the baseline's 97.0%)
}
