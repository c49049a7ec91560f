package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/engines/process"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
)

// TestStates_FailedVariant: a variant whose engine does not answer appears on
// stdout, in -json and in the report with its reason; the next variant is
// measured and judged.
func TestStates_FailedVariant(t *testing.T) {
	dir := t.TempDir()
	proto := writeFile(t, dir, "two.yaml", strings.Replace(`name: two
corpus: CORPUS
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1, 2], repetitions: 1, warmup: 0}
variants:
  - name: broken
    engine: {url: "http://127.0.0.1:1", model: nothing-listens, start: "false", ready_timeout: 10s}
  - name: good
    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0}}
`, "CORPUS", smallCorpus(t, dir), 1))
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "run", "-quiet", "-protocol", proto, "-out", out)
	if code == exitOK {
		t.Fatalf("exit 0 with a broken variant; stderr %s", stderr)
	}
	for _, want := range []string{"ERROR broken (nothing-listens)", "engine exited before it was ready", "PASS good (sim-8b): baseline accepted"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	_, js, _ := runCLI(t, "run", "-quiet", "-json", "-protocol", proto, "-out", filepath.Join(dir, "out2"))
	var sum pipeline.RunReport
	if err := json.Unmarshal([]byte(js), &sum); err != nil {
		t.Fatalf("-json: %v\n%s", err, js)
	}
	if len(sum.Variants) != 2 || sum.Variants[0].State != results.OutcomeError || sum.Variants[0].Reason == "" || sum.Variants[1].State != results.OutcomePass {
		t.Errorf("-json variants = %+v, want broken ERROR with a reason, good PASS", sum.Variants)
	}
	if code, _, stderr := runCLI(t, "report", out); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "| broken (nothing-listens on –) | ERROR |") || !strings.Contains(string(md), "engine exited before it was ready") {
		t.Errorf("report.md does not show the failed variant with its reason:\n%s", md)
	}
}

// TestStates_Interrupted: a run interrupted after its first pass says
// INTERRUPTED with what was measured and how to resume, never "0.0%" or a
// FAIL it did not earn, and marks a recommendation from the cut sweep as
// partial; the report says the same.
func TestStates_Interrupted(t *testing.T) {
	dir := t.TempDir()
	proto := writeFile(t, dir, "slow.yaml", strings.Replace(`name: slow
corpus: CORPUS
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1, 2, 4], repetitions: 2, warmup: 0}
variants:
  - name: bf16
    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0.02}}
  - name: int4
    engine: {url: builtin, model: sim-8b-int4, builtin: {time_scale: 0}}
`, "CORPUS", smallCorpus(t, dir), 1))
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // interrupt once the baseline's two repetitions are stored
		for ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
			if run, err := results.LoadRun(ctx, out); err == nil && completePasses(run) >= 2 {
				cancel()
			}
		}
	}()
	sum, err := pipeline.Run(ctx, pipeline.Options{ProtocolPath: proto, OutDir: out, Quiet: true, Starters: starter.Starters(), Process: process.Starter{}})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Interrupted {
		t.Fatal("the run was not interrupted: make the protocol slower")
	}
	var buf bytes.Buffer
	printSummary(&buf, sum)
	text := buf.String()
	for _, want := range []string{"INTERRUPTED: ", "resume with: extractbench run -resume " + out, "NOT RUN int4"} {
		if !strings.Contains(text, want) {
			t.Errorf("stdout lacks %q:\n%s", want, text)
		}
	}
	for _, bad := range []string{"0.0%", "FAIL"} {
		if strings.Contains(text, bad) {
			t.Errorf("stdout of an interrupted run shows %q:\n%s", bad, text)
		}
	}
	bf16 := sum.Variants[0]
	if bf16.State != results.OutcomePass || !strings.Contains(bf16.Reason, "PARTIAL sweep") || !strings.Contains(bf16.Reason, "the run was interrupted") {
		t.Errorf("bf16 = %s %q; want its baseline judged, the recommendation marked partial and the interruption said", bf16.State, bf16.Reason)
	}
	if code, _, stderr := runCLI(t, "report", out); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "| int4 (sim-8b-int4 on –) | NOT RUN |") || !strings.Contains(string(md), "PARTIAL sweep") {
		t.Errorf("report.md does not show the interrupted state:\n%s", md)
	}
	if code, _, _ := runCLI(t, "run", "-quiet", "-resume", out); code != exitOK {
		t.Errorf("resume exit %d, want 0", code)
	}
}

func completePasses(run *results.RunData) int {
	n := 0
	for _, p := range run.Passes {
		if p.Complete() {
			n++
		}
	}
	return n
}
