package extractbench

import "testing"

func TestFailureCountsMatchFailures(t *testing.T) {
	if len(Failures) != numFailures {
		t.Fatalf("numFailures = %d but Failures lists %d classes: update numFailures", numFailures, len(Failures))
	}
	var c FailureCounts
	for i, f := range Failures {
		c.Add(f, int64(i+1))
		if c.Of(f) != int64(i+1) || f.Index() != i {
			t.Errorf("%s: Of = %d, Index = %d", f, c.Of(f), f.Index())
		}
	}
	c.Add(None, 5)
	if c.Total() != 15 {
		t.Errorf("Total = %d, want 15 (None is not a failure)", c.Total())
	}
}

// TestFailure_Short checks every class has its own narrow label, so a new
// class added to Failures shows in the compact table under a name of its own.
func TestFailure_Short(t *testing.T) {
	seen := map[string]Failure{}
	for _, f := range Failures {
		s := f.Short()
		if s == "" || len(s) > len(f) {
			t.Errorf("%s: short label %q", f, s)
		}
		if g, ok := seen[s]; ok {
			t.Errorf("%s and %s share the short label %q", f, g, s)
		}
		seen[s] = f
	}
	if got := Failure("oom_killed").Short(); got != "oom_killed" {
		t.Errorf("a class without a label: %q, want its name", got)
	}
}
