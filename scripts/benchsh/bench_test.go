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
// with a row for every step, each step with a reference measured on both
// sides in CPU per row or request (not wall time), with a ratio, its goal
// and whether the goal is met, and no benchmark failed or missing.
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
	want := map[string]string{ // step: the unit both sides are in
		"ingest": "cpu-ns/row", "ingest floor (INSERT … SELECT)": "cpu-ns/row", "export": "cpu-ns/row",
		"merge row copy": "cpu-ns/row", "whole merge (incl. export)": "cpu-ns/row", "whole merge + report": "cpu-ns/row",
		"run's client": "cpu-µs/req-whole",
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, " | ")
		if len(cells) < 6 || !strings.HasPrefix(line, "| ") {
			continue
		}
		step := strings.TrimPrefix(cells[0], "| ")
		unit, ok := want[step]
		if !ok {
			continue
		}
		seen[step] = true
		if !strings.HasSuffix(cells[1], unit) || !strings.HasSuffix(cells[2], unit) {
			t.Errorf("%s: ours %q, reference %q: want both in %s", step, cells[1], cells[2], unit)
		}
		if !strings.HasSuffix(cells[3], "×") {
			t.Errorf("%s: no ratio: %s", step, line)
		}
		if goal, met := cells[4], strings.TrimSuffix(cells[5], " |"); goal != "–" && met != "met" && met != "not met" {
			t.Errorf("%s: goal %s without met or not met: %s", step, goal, line)
		}
	}
	for step := range want {
		if !seen[step] {
			t.Errorf("no row %q in:\n%s", step, table)
		}
	}
	if !strings.Contains(table, "| report |") {
		t.Errorf("no report row in:\n%s", table)
	}
}
