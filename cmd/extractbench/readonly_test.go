package main

import (
	"fmt"
	"testing"

	"github.com/extractbench/extractbench/results/plan/plantest"
	"github.com/extractbench/extractbench/results/resultstest"
)

// TestReadCommands_ReadOnlyDirectory is issue 40 item 5: plan, select,
// compare and memory read a finished results directory without write
// permission (a read-only mount). A results.db left in WAL mode failed each
// of them with "unable to open database file".
func TestReadCommands_ReadOnlyDirectory(t *testing.T) {
	dir := t.TempDir()
	plantest.Write(t, dir, sizingFixture())
	resultstest.AsReader(t, dir, func() error {
		for _, args := range [][]string{{"plan", dir}, {"select", dir}, {"compare", dir + ":bf16", dir + ":int4"}, {"memory", "-model", "meta-llama/Llama-3.1-8B-Instruct", dir}} {
			if code, _, stderr := runCLI(t, args...); code == exitUsage || code == exitInfra {
				return fmt.Errorf("%s: exit %d: %s", args[0], code, stderr)
			}
		}
		return nil
	})
}
