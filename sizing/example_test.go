package sizing_test

import (
	"fmt"

	"github.com/extractbench/extractbench/sizing"
)

func ExampleCalculate() {
	m, _ := sizing.Preset("Llama-3.1-8B")
	e, err := sizing.Calculate(sizing.Inputs{Model: m, ContextTokens: 8192, Concurrency: 8})
	if err != nil {
		panic(err)
	}
	fmt.Println("weights", sizing.Bytes(e.WeightBytes))
	fmt.Println("KV per token", sizing.Bytes(e.KVBytesPerToken))
	h100, _ := e.FitFor("H100 SXM")
	fmt.Println("H100 fits 8:", h100.Fits, "max", h100.MaxConcurrency)
	// Output:
	// weights 14.96 GiB (16,060,522,496 B)
	// KV per token 128.0 KiB (131,072 B)
	// H100 fits 8: true max 44
}

func ExampleRecommend() {
	pass := func(level, accepted, memFailures int) sizing.PassFigures {
		return sizing.PassFigures{Variant: "bf16", Mode: "concurrency", Level: level, Repetition: 1,
			Docs: 300, Accepted: accepted, FailuresMemory: memFailures}
	}
	r := sizing.Recommend([]sizing.PassFigures{pass(1, 291, 0), pass(2, 291, 0), pass(4, 290, 0), pass(8, 240, 30)},
		sizing.Acceptance{MinAccepted: 0.95})
	fmt.Println(r.Recommended, r.FirstBroken, r.BrokeBy)
	fmt.Println(r.Why)
	// Output:
	// 2 8 [memory acceptance baseline]
	// concurrency 2, one step below 4, the highest usable; concurrency 8 broke (30 memory failure(s); accepted 80.0% < threshold 95.0%; accepted 80.0% < 99% of the baseline's 97.0%)
}
