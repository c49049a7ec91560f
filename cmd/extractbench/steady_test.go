package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
)

// TestPrintSummary_NotSteady: a level the client's own steady-state check
// flagged (eval/steady.go) gets a NOT STEADY line on stdout, whatever the
// engine, with the evidence.
func TestPrintSummary_NotSteady(t *testing.T) {
	why := "a trend within the pass: repetition 1: early requests slower than late ones by 80% (Mann-Whitney z 5.0 over 60 requests)"
	s := &pipeline.RunReport{Variants: []results.Outcome{{Variant: "bf16", State: results.OutcomeFail, Series: []eval.Series{{
		Variant: "bf16", Mode: "concurrency", Levels: []eval.Level{
			{Variant: "bf16", Mode: "concurrency", Level: 1, Repetitions: 3, NotSteady: why},
			{Variant: "bf16", Mode: "concurrency", Level: 2, Repetitions: 3},
		}}}}}}
	var buf bytes.Buffer
	printSummary(&buf, s)
	if !strings.Contains(buf.String(), "NOT STEADY bf16 at level 1: "+why+"\n") || strings.Contains(buf.String(), "at level 2:") {
		t.Errorf("stdout:\n%s", buf.String())
	}
}
