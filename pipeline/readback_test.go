package pipeline_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// TestRun_CorpusChangedMidRunStops is the hardening issue's item 1: a
// corpus file rewritten while the run measures it (here: its lines rotated
// by one after the third request, through the dispatcher's test hook) stops
// the run as an infrastructure failure naming the document and its
// file:line; the documents it could not read back are never sent nor
// scored (they used to go out without their text and be judged against
// null expectations, accepted), and -resume after the file is restored
// completes the run without a duplicate.
func TestRun_CorpusChangedMidRunStops(t *testing.T) {
	defer func(n int64) { corpus.MaxHeldBytes = n }(corpus.MaxHeldBytes)
	corpus.MaxHeldBytes = 0 // by reference: a corpus held in memory is what it was when opened
	dir := t.TempDir()
	const docs, sentBefore = 8, 3
	file := writeSmallCorpus(t, dir, docs)
	proto := writeProtocol(t, dir, file, "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0}", "{time_scale: 0}")
	out := filepath.Join(dir, "out")
	original := pipelinetest.ReadFile(t, file)
	lines := bytes.SplitAfter(original, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty rest after the last "\n"
	if len(lines) != docs {
		t.Fatalf("%d lines, want %d", len(lines), docs)
	}
	var next struct{ ID string }
	if err := json.Unmarshal(lines[sentBefore], &next); err != nil {
		t.Fatal(err)
	}
	sends := 0
	_, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out, BeforeSend: func() {
		if sends++; sends == sentBefore { // documents 1..3 are read back; the fourth is read next
			rotated := append(bytes.Join(lines[1:], nil), lines[0]...)
			if err := os.WriteFile(file, rotated, 0o644); err != nil {
				t.Error(err)
			}
		}
	}})
	abs, _ := filepath.Abs(file)
	stoppedAt(t, out, err, next.ID, fmt.Sprintf("%s:%d", abs, sentBefore+1), sentBefore)
	t.Run("resume after restore", func(t *testing.T) {
		if err := os.WriteFile(file, original, 0o644); err != nil {
			t.Fatal(err)
		}
		sum, err := run(t, pipeline.Options{OutDir: out, Resume: true})
		if err != nil {
			t.Fatalf("resume after the file was restored: %v", err)
		}
		if sum.Status != results.RunComplete {
			t.Errorf("resumed status %q, want %s", sum.Status, results.RunComplete)
		}
		reqs := resultstest.Requests(t, out)
		if got := len(reqs); got != docs {
			t.Errorf("%d rows after resume, want %d", got, docs)
		}
		if got := resultstest.Distinct(reqs, func(r *extractbench.Record) string { return r.DocID }); got != docs {
			t.Errorf("%d documents after resume, want %d, each once", got, docs)
		}
	})
}

// stoppedAt: the run stopped on document id at file:line at, having
// recorded the sent documents read back before the change and no other.
func stoppedAt(t *testing.T, out string, err error, id, at string, sent int) {
	t.Helper()
	var re *corpus.ReadError
	if !errors.As(err, &re) || errors.As(err, new(*pipeline.ConfigError)) || errors.As(err, new(*pipeline.ValidationError)) {
		t.Fatalf("run on a corpus changed mid-run: err = %v (%T), want an infrastructure error wrapping *corpus.ReadError", err, err)
	}
	if re.ID != id || !strings.Contains(err.Error(), at) || !strings.Contains(err.Error(), id) || !errors.Is(err, corpus.ErrChanged) {
		t.Errorf("err = %q, want document %s at %s, changed", err, id, at)
	}
	reqs := resultstest.Requests(t, out)
	if got := len(reqs); got != sent {
		t.Errorf("%d rows, want the %d documents read back before the change", got, sent)
	}
	if got := resultstest.Count(reqs, func(r *extractbench.Record) bool { return r.DocID == id }); got != 0 {
		t.Errorf("document %s, never read back, has %d row(s)", id, got)
	}
	if runs := resultstest.Runs(t, out); len(runs) == 0 || runs[0].Status != results.RunFailed {
		t.Errorf("runs %+v, want one of status %s", runs, results.RunFailed)
	}
	if got := eventCount(t, out, results.EventCorpusReadFailed, "%"+at+"%"); got != 1 {
		t.Errorf("%d %s events naming %s, want 1", got, results.EventCorpusReadFailed, at)
	}
}

// TestRun_HeldCorpusChangedMidRunCompletes: a corpus small enough to hold
// in memory (corpus.MaxHeldBytes) is measured as it was opened: the same
// rewrite as TestRun_CorpusChangedMidRunStops leaves the run complete,
// every document scored once, and nothing was read back (a run reopened
// the file and decoded the document's line again for every request).
func TestRun_HeldCorpusChangedMidRunCompletes(t *testing.T) {
	dir := t.TempDir()
	const docs = 8
	file := writeSmallCorpus(t, dir, docs)
	proto := writeProtocol(t, dir, file, "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0}", "{time_scale: 0}")
	out := filepath.Join(dir, "out")
	lines := bytes.SplitAfter(pipelinetest.ReadFile(t, file), []byte("\n"))
	lines = lines[:len(lines)-1]
	sends := 0
	sum, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out, BeforeSend: func() {
		if sends++; sends == 3 {
			if err := os.WriteFile(file, append(bytes.Join(lines[1:], nil), lines[0]...), 0o644); err != nil {
				t.Error(err)
			}
		}
	}})
	if err != nil || sum.Status != results.RunComplete {
		t.Fatalf("run on a held corpus rewritten mid-run: %v (status %v), want it complete", err, sum)
	}
	reqs := resultstest.Requests(t, out)
	if got := resultstest.Distinct(reqs, func(r *extractbench.Record) string { return r.DocID }); len(reqs) != docs || got != docs {
		t.Errorf("%d rows of %d documents, want %d, each once", len(reqs), got, docs)
	}
}
