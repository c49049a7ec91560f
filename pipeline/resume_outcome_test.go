//go:build linux

package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// TestRun_ResumeOutlivesEarlierFailure is the hardening issue's item 3: a
// failure recorded before a resume (here: the started engine dies after
// three requests, a variant_failed event, status failed) does not outlive a
// resume that measures the run to the end. The status, the variant's state
// and the verdict (the exit code) come from the final state; the failure
// stays in the events as history.
func TestRun_ResumeOutlivesEarlierFailure(t *testing.T) {
	dir := t.TempDir()
	const docs = 10
	addr := freeAddr(t)
	dieAfter := filepath.Join(dir, "die-after")
	if err := os.WriteFile(dieAfter, []byte("3"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The shell reads the file at each start: the protocol, and so the
	// fingerprint, stays the same while the engine's fate changes.
	start := testEngineCommand(addr, "EXTRACTBENCH_TEST_ENGINE_DIE_AFTER=$(cat "+dieAfter+")")
	proto := startedProtocol(t, dir, docs, "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0}", addr, start, "")
	out := filepath.Join(dir, "out")
	sum, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out})
	if err == nil || !strings.Contains(err.Error(), "engine died") {
		t.Fatalf("first attempt: err = %v, want the engine's death", err)
	}
	if sum == nil || sum.Status != results.RunFailed || len(sum.Variants) != 1 || sum.Variants[0].State != results.OutcomeError {
		t.Fatalf("first attempt: %+v, want status failed and the variant ERROR", sum)
	}

	if err := os.WriteFile(dieAfter, []byte("never"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err = run(t, pipeline.Options{OutDir: out, Resume: true})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if sum.Status != results.RunComplete || !sum.Passed || sum.Variants[0].State != results.OutcomePass {
		t.Errorf("resumed to completion: status %s, passed %v, variant %s (%s); want complete, passed, PASS",
			sum.Status, sum.Passed, sum.Variants[0].State, sum.Variants[0].Reason)
	}
	data, err := results.LoadRun(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if got := data.Outcomes()[0].State; got != results.OutcomePass {
		t.Errorf("read back: variant %s, want PASS", got)
	}
	kinds := map[string]int{}
	for _, e := range data.Events {
		kinds[e.Kind]++
	}
	if kinds[results.EventVariantFail] != 1 || kinds[results.EventEngineDead] != 1 || kinds[results.EventResumed] != 1 {
		t.Errorf("events %v: the first attempt's failure must stay as history beside the resume", kinds)
	}
	if got := resultstest.Distinct(resultstest.Requests(t, out), func(r *extractbench.Record) string { return r.DocID }); got != docs {
		t.Errorf("%d documents recorded, want %d", got, docs)
	}
}
