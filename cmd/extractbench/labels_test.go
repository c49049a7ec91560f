package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
