// Command soakcheck prints, as one JSON line, what results.Verify finds in
// a results directory: scripts/crash-soak.sh compares it with an
// uninterrupted run's.
//
// Usage: go run ./scripts/soakcheck DIR
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/extractbench/extractbench/results"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: soakcheck DIR")
		os.Exit(2)
	}
	c, err := results.Verify(context.Background(), os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "soakcheck:", err)
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(c)
}
