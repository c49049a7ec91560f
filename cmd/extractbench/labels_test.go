package main

import (
	"errors"
	"io/fs"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/engines/builtin"
)

// TestMain lets a test run this binary as extractbench itself: with
// EXTRACTBENCH_TEST_MAIN=1 it is the command line (os.Args[1:]), as a
// protocol's start: runs `extractbench engine serve`.
func TestMain(m *testing.M) {
	if os.Getenv("EXTRACTBENCH_TEST_MAIN") == "1" {
		ctx, abandon := signals()
		os.Exit(dispatch(ctx, os.Args[1:], env{stdout: os.Stdout, stderr: os.Stderr, abandon: abandon}))
	}
	os.Exit(m.Run())
}

// TestRun_EngineServeIsSimulated: a start: that runs `extractbench engine
// serve` measures the built-in engine by URL; the engine says it is
// simulated, so run, report and select say so, as for `url: builtin`.
func TestRun_EngineServeIsSimulated(t *testing.T) {
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	start := "EXTRACTBENCH_TEST_MAIN=1 " + os.Args[0] + " engine serve -addr " + addr + " -time-scale 0"
	proto := writeFile(t, dir, "served.yaml", strings.NewReplacer("%CORPUS%", smallCorpus(t, dir), "%MIN%", "0").Replace(
		strings.Replace(smallProtocol, "{url: builtin, model: sim-8b, builtin: {time_scale: 0}}",
			`{url: "http://`+addr+`", model: sim-8b, start: "`+start+`", ready_timeout: 30s}`, 1)))
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "run", "-quiet", "-protocol", proto, "-out", out)
	if code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "SIMULATED:") {
		t.Errorf("run's summary has no SIMULATED banner:\n%s", stdout)
	}
	if code, _, stderr := runCLI(t, "report", out); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "**Simulated run.**") {
		t.Errorf("report.md does not say the run was simulated:\n%.600s", md)
	}
	code, stdout, stderr = runCLI(t, "select", out)
	if code != exitOK {
		t.Fatalf("select: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "SIMULATED") {
		t.Errorf("select does not flag the simulated run:\n%s", stdout)
	}
}

// TestRun_FailedPreflightLeavesNothing: a run whose engine fails its
// pre-flight (the protocol names a model the engine does not serve)
// measured nothing: the error is printed once, no run is left in the
// directory, and the corrected protocol runs there as a new run (it was
// told to -resume, which its new fingerprint then refused).
func TestRun_FailedPreflightLeavesNothing(t *testing.T) {
	p, err := builtin.LookupProfile("sim-8b")
	if err != nil {
		t.Fatal(err)
	}
	p.TimeScale = 0
	eng, err := builtin.NewServer(builtin.Config{Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv := httptest.NewServer(eng)
	defer srv.Close()
	dir := t.TempDir()
	corpus := smallCorpus(t, dir)
	proto := func(name, model string) string {
		return writeFile(t, dir, name, strings.NewReplacer("%CORPUS%", corpus, "%MIN%", "0").Replace(
			strings.Replace(smallProtocol, "{url: builtin, model: sim-8b, builtin: {time_scale: 0}}",
				`{url: "`+srv.URL+`", model: `+model+`}`, 1)))
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "run", "-quiet", "-protocol", proto("typo.yaml", "sim-8b-typo"), "-out", out)
	if code == exitOK || !strings.Contains(stderr, `not the protocol's model "sim-8b-typo"`) {
		t.Fatalf("exit %d, stderr %q; want a failure naming the model", code, stderr)
	}
	if n := strings.Count(stderr, "not the protocol's model"); n != 1 {
		t.Errorf("the error is printed %d times:\n%s", n, stderr)
	}
	if stdout != "" {
		t.Errorf("a run that measured nothing printed a summary:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(out, "results.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the run that measured nothing left results.db (%v)", err)
	}
	if code, _, stderr := runCLI(t, "run", "-quiet", "-protocol", proto("fixed.yaml", "sim-8b"), "-out", out); code != exitOK {
		t.Errorf("the corrected protocol in the same directory: exit %d: %s", code, stderr)
	}
}

// TestCorpusGenerate_N: corpus generate -n writes a corpus of that size
// that corpus check accepts, in the default corpus's class proportions.
func TestCorpusGenerate_N(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	if code, stdout, stderr := runCLI(t, "corpus", "generate", "-n", "60", "-out", dir); code != exitOK || !strings.Contains(stdout, "60 documents") {
		t.Fatalf("generate -n 60: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr := runCLI(t, "corpus", "check", dir)
	if code != exitOK {
		t.Fatalf("check: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"60 valid of 60 lines", "short 20, usual 30, long 10", "ok: no problems"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("corpus check lacks %q:\n%s", want, stdout)
		}
	}
}
