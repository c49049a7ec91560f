package main

import (
	"bytes"
	"github.com/extractbench/extractbench"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
)

// TestPrintSummary_NotSteady: a level the client's own steady-state check
// flagged (eval/steady.go) gets a NOT STEADY line on stdout, whatever the
// engine, with the evidence, once: the verdict lines that rest on it name it
// briefly (MEASUREMENT.md section 12).
func TestPrintSummary_NotSteady(t *testing.T) {
	why := "a trend within the pass: repetition 1: early requests slower than late ones by 80% (Mann-Whitney z 5.0 over 60 requests)"
	s := &pipeline.RunReport{Variants: []results.Outcome{{Variant: "bf16", State: results.OutcomeFail, Series: []eval.Series{{
		Variant: "bf16", Mode: "concurrency", Levels: []eval.Level{
			{Variant: "bf16", Mode: "concurrency", Level: 1, Repetitions: 3, NotSteady: why},
			{Variant: "bf16", Mode: "concurrency", Level: 2, Repetitions: 3},
		}}}}}}
	var buf bytes.Buffer
	printSummary(&buf, s)
	if !strings.Contains(buf.String(), "bf16: NOT STEADY at level 1: "+why+"\n") || strings.Contains(buf.String(), "at level 2:") {
		t.Errorf("stdout:\n%s", buf.String())
	}
	// Judged: the verdict and both objectives' lines rest on it.
	l := &s.Variants[0].Series[0].Levels[0]
	l.Verdict = eval.Judge(l, -1, extractbench.Acceptance{})
	rec := &s.Variants[0].Series[0].Recommendation
	rec.FirstBroken, rec.BrokeReason = 1, l.Verdict.Reason
	rec.Why, rec.Offline.Why = "no usable concurrency: concurrency 1 already broke ("+l.Verdict.Reason+")", "concurrency 1 already failed it ("+l.Verdict.Reason+")"
	s.Variants[0].Reason = "baseline: " + l.Verdict.Reason
	buf.Reset()
	printSummary(&buf, s)
	if n := strings.Count(buf.String(), why); n != 1 {
		t.Errorf("the evidence is printed %d times, want once:\n%s", n, buf.String())
	}
	if n := strings.Count(buf.String(), eval.NotSteadyRef); n != 3 {
		t.Errorf("the verdict lines name the finding %d times, want 3:\n%s", n, buf.String())
	}
}
