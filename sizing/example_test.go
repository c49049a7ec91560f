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
