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
