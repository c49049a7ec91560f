package extractbench

import "testing"

func TestFailureCountsMatchFailures(t *testing.T) {
	var c FailureCounts
	if len(c) != len(Failures) {
		t.Fatalf("FailureCounts holds %d counts, Failures lists %d classes", len(c), len(Failures))
	}
	var want int64
	for i, f := range Failures {
		c.Add(f, int64(i+1))
		want += int64(i + 1)
		if c.Of(f) != int64(i+1) || f.Index() != i {
			t.Errorf("%s: Of = %d, Index = %d", f, c.Of(f), f.Index())
		}
	}
	c.Add(None, 5)
	c.Add(Failure("not_a_class"), 7)
	if c.Total() != want {
		t.Errorf("Total = %d, want %d (None and an unknown class are no failure)", c.Total(), want)
	}
	if got := c.Plus(c).Total(); got != 2*want {
		t.Errorf("Plus: Total = %d, want %d", got, 2*want)
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
