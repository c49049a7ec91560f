package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/results"
)

// TestRun_BaselineCheckedFirst: -baseline is read and compared before the
// first request; a baseline that measured another generation is refused
// (exit 2, nothing written) unless -accept-baseline-diff, which is then
// recorded in the run as an event. A missing baseline also fails first.
func TestRun_BaselineCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	corpus := smallCorpus(t, dir)
	proto := func(name, gen string) string {
		return writeFile(t, dir, name, strings.NewReplacer("%CORPUS%", corpus, "%MIN%", "0.5").Replace(
			strings.Replace(smallProtocol, "generation: {max_tokens: 128, temperature: 0, seed: 7}", gen, 1)))
	}
	base := filepath.Join(dir, "base")
	if code, _, stderr := runCLI(t, "run", "-quiet", "-protocol", proto("a.yaml", "generation: {max_tokens: 128, temperature: 0, seed: 7}"), "-out", base); code != exitOK {
		t.Fatalf("baseline run: exit %d: %s", code, stderr)
	}
	other := proto("b.yaml", "generation: {max_tokens: 64, temperature: 0, seed: 7}")

	out := filepath.Join(dir, "refused")
	code, _, stderr := runCLI(t, "run", "-quiet", "-protocol", other, "-out", out, "-baseline", base)
	if code != exitUsage || !strings.Contains(stderr, `generation.max_tokens: baseline "128", now "64"`) || !strings.Contains(stderr, "nothing was run") {
		t.Fatalf("exit %d, stderr %q: want 2 naming max_tokens", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a refused run created %s (%v)", out, err)
	}

	if code, _, stderr := runCLI(t, "run", "-quiet", "-protocol", other, "-out", filepath.Join(dir, "nobase"), "-baseline", filepath.Join(dir, "nowhere")); code != exitUsage || !strings.Contains(stderr, "-baseline") {
		t.Errorf("missing baseline: exit %d, stderr %q; want 2 before running", code, stderr)
	}

	acc := filepath.Join(dir, "accepted")
	code, stdout, stderr := runCLI(t, "run", "-quiet", "-protocol", other, "-out", acc, "-baseline", base, "-accept-baseline-diff")
	if code == exitUsage {
		t.Fatalf("accepted difference: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "compared although the runs differ") {
		t.Errorf("stdout does not say the difference was accepted:\n%s", stdout)
	}
	run, err := results.LoadRun(context.Background(), acc)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range run.Events {
		found = found || (e.Kind == results.EventBaselineDiffAccepted && strings.Contains(e.Detail, "max_tokens"))
	}
	if !found {
		t.Errorf("no %s event in the run: %+v", results.EventBaselineDiffAccepted, run.Events)
	}
}

// TestRun_BaselineCorpusCheckedFirst: a -baseline that measured another
// corpus is refused before the first request (exit 2, nothing created),
// as README says, and -accept-baseline-diff does not lift it: results of
// different corpora are never compared.
func TestRun_BaselineCorpusCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	proto := func(name, corpus string) string {
		return writeFile(t, dir, name, strings.NewReplacer("%CORPUS%", corpus, "%MIN%", "0").Replace(smallProtocol))
	}
	base := filepath.Join(dir, "base")
	if code, _, stderr := runCLI(t, "run", "-quiet", "-protocol", proto("a.yaml", smallCorpus(t, dir)), "-out", base); code != exitOK {
		t.Fatalf("baseline run: exit %d: %s", code, stderr)
	}
	raw, err := os.ReadFile("../../corpus/default/documents.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(raw), "\n")
	other := proto("b.yaml", writeFile(t, dir, "other.jsonl", strings.Join(lines[6:12], "")))
	for _, extra := range [][]string{nil, {"-accept-baseline-diff"}} {
		out := filepath.Join(dir, "refused"+strings.Join(extra, ""))
		args := append([]string{"run", "-quiet", "-protocol", other, "-out", out, "-baseline", base}, extra...)
		code, stdout, stderr := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(stderr, "corpus") || !strings.Contains(stderr, "nothing was run") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming the corpus", extra, code, stderr)
		}
		if stdout != "" {
			t.Errorf("%v: the refused run printed a summary:\n%s", extra, stdout)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: the refused run created %s (%v): it was measured before the corpus was compared", extra, out, err)
		}
	}
}

// TestRun_ResumeWithAnotherOut: -resume X -out Y is refused instead of
// ignoring -out.
func TestRun_ResumeWithAnotherOut(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI(t, "run", "-resume", filepath.Join(dir, "x"), "-out", filepath.Join(dir, "y"))
	if code != exitUsage || !strings.Contains(stderr, "-out") || !strings.Contains(stderr, "would be ignored") {
		t.Errorf("exit %d, stderr %q; want 2 saying -out would be ignored", code, stderr)
	}
}
