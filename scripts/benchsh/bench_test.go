// Package benchsh_test runs scripts/bench.sh as a smoke test when asked to:
// EXTRACTBENCH_BENCH_SH=1 go test ./scripts/benchsh/ (a few minutes; plain
// go test skips it, so CI stays as fast).
package benchsh_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBenchSh_Quick: bench.sh with BENCH_QUICK=1 prints its Markdown table
// with a row for every step, the row copy measured on both sides with a
// ratio, and a benchmark it cannot find named "not found", not a failure.
func TestBenchSh_Quick(t *testing.T) {
	if os.Getenv("EXTRACTBENCH_BENCH_SH") == "" {
		t.Skip("set EXTRACTBENCH_BENCH_SH=1 to run scripts/bench.sh (minutes)")
	}
	cmd := exec.Command("bash", "../bench.sh")
	cmd.Env = append(os.Environ(), "BENCH_QUICK=1", "REPS=3")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bench.sh: %v\n%s", err, out)
	}
	table := string(out)
	for _, step := range []string{"| merge row copy |", "| ingest |", "| export |", "| run's client |", "| whole merge (incl. export) |"} {
		if !strings.Contains(table, step) {
			t.Errorf("no row %q in:\n%s", step, table)
		}
	}
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "| merge row copy |") && strings.Count(line, "rows/s") < 2 || strings.HasPrefix(line, "| merge row copy |") && !strings.Contains(line, "×") {
			t.Errorf("the row copy lacks a figure or its ratio: %s", line)
		}
	}
}
