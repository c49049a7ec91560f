package report

import (
	"github.com/extractbench/extractbench"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/eval"
)

// TestVerdictText_NotSteady: a level whose passes were not in steady state
// says so in the report's verdict column: in its reason when judged (cause
// not_steady), and flagged beside a usable verdict when the protocol only
// records it (acceptance.steady_state: record).
func TestVerdictText_NotSteady(t *testing.T) {
	s := &series{Rec: eval.Recommendation{Recommended: 1}}
	why := "repetition 1's median E2E 160ms, the others' 100ms: 60% slower"
	recorded := eval.Level{Level: 1, NotSteady: why, Verdict: eval.Verdict{Usable: true}}
	// The evidence is the finding's, printed once (its decision); the
	// verdict column names it.
	if got := s.verdictText(recorded); !strings.HasPrefix(got, "usable, recommended; NOT STEADY (recorded, not judged") || strings.Contains(got, why) {
		t.Errorf("recorded: %q", got)
	}
	judged := eval.Level{Level: 1, NotSteady: why, Verdict: eval.Judge(&eval.Level{Level: 1, NotSteady: why}, -1, extractbench.Acceptance{})}
	if got := s.verdictText(judged); !strings.HasPrefix(got, "not_usable: ") || !strings.Contains(got, eval.NotSteadyRef) || strings.Contains(got, why) {
		t.Errorf("judged: %q", got)
	}
	if got := s.verdictText(eval.Level{Level: 1, Verdict: eval.Verdict{Usable: true}}); got != "usable, recommended" {
		t.Errorf("steady: %q", got)
	}
}
