package main

import (
	"io"
	"testing"

	"github.com/extractbench/extractbench/results"
)

// TestOutcomesError_ExitCodes is issue 40's rule for the exit code: the
// model's FAIL is exit 1; the infrastructure's states (ERROR: an engine
// that died without memory evidence or changed under the run;
// INCONCLUSIVE: a client-bound or frozen client) are exit 3, never 1. A
// dead engine's ERROR was exit 1 before.
func TestOutcomesError_ExitCodes(t *testing.T) {
	o := func(state string) results.Outcome { return results.Outcome{Variant: "v-" + state, State: state} }
	for _, tt := range []struct {
		name  string
		in    []results.Outcome
		wantC int
	}{
		{"a FAIL", []results.Outcome{o(results.OutcomePass), o(results.OutcomeFail)}, exitVerdict},
		{"FAIL beside ERROR", []results.Outcome{o(results.OutcomeError), o(results.OutcomeFail)}, exitVerdict},
		{"ERROR alone", []results.Outcome{o(results.OutcomePass), o(results.OutcomeError)}, exitInfra},
		{"INCONCLUSIVE", []results.Outcome{o(results.OutcomeInconclusive)}, exitInfra},
		{"NOT RUN", []results.Outcome{o(results.OutcomeNotRun)}, exitInfra},
	} {
		if got := exitCode(io.Discard, outcomesError(tt.in)); got != tt.wantC {
			t.Errorf("%s: exit %d, want %d", tt.name, got, tt.wantC)
		}
	}
}
