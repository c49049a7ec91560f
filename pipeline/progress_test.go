package pipeline_test

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/pipeline/progress"
)

// TestRun_ProgressLines: off a terminal, each pass prints a line when it
// starts, progress lines while it runs (every progress.Interval; 0 here:
// at each document) and a line when it ends, each naming the pass's place
// in the run, its variant, level and repetition.
func TestRun_ProgressLines(t *testing.T) {
	old := progress.Interval
	progress.Interval = 0
	t.Cleanup(func() { progress.Interval = old })
	dir := t.TempDir()
	const docs = 4
	proto := writeProtocol(t, dir, writeSmallCorpus(t, dir, docs), "{mode: concurrency, levels: [1, 2], repetitions: 1, warmup: 0}", "{time_scale: 0}")
	var stderr bytes.Buffer
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto,
		OutDir: filepath.Join(dir, "out"), Progress: &stderr, Display: progress.New(&stderr)}); err != nil {
		t.Fatal(err)
	}
	out := stderr.String()
	for _, re := range []string{
		`(?m)^pass 1/2  bf16  concurrency 1  rep 1/1  started: 4 documents$`,
		`(?m)^pass 1/2  bf16  concurrency 1  rep 1/1  accepted \d+.*  2/4  [\d.]+ doc/s  elapsed \S+  left ~\S+$`,
		`(?m)^pass 1/2  bf16  concurrency 1  rep 1/1  accepted \d+.*  done 4/4  [\d.]+ doc/s in \S+$`,
		`(?m)^pass 2/2  bf16  concurrency 2  rep 1/1  accepted \d+.*  done 4/4`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("progress lacks a line matching %s:\n%s", re, out)
		}
	}
	if strings.Contains(out, "\r") {
		t.Errorf("progress off a terminal has carriage returns (a bar):\n%q", out)
	}
}
