package sizing

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestPlan checks the arithmetic by hand: 300 documents in 600 s is 2 s a
// document (1,800/hour); with 10% evaluation overhead and 5% retried the
// sustained cost is 2 × 1.1 × 1.05 = 2.31 s (1,558.4/hour). A corpus of
// 10,000: processing 20,000 s, evaluation 2,000 s, retries 10,000 × 0.05 ×
// 2 × 1.1 = 1,100 s, preparation 120 + 30 s: 23,250 s = 6h27m30s.
func TestPlan(t *testing.T) {
	got, err := Plan(PlanInputs{Variant: "bf16", Mode: "concurrency", Level: 8, Docs: 300, Accepted: 285,
		DurationNS: 600e9, OutputTokens: 12000, LoadNS: 120e9, WarmupNS: 30e9, OverheadShare: 0.1, CorpusDocs: 10000})
	if err != nil {
		t.Fatal(err)
	}
	floats := []struct {
		name      string
		got, want float64
	}{
		{"pass docs/hour", got.PassDocsPerHour, 1800},
		{"accepted/hour", got.AcceptedPerHour, 1710},
		{"docs/hour", got.DocsPerHour, 3600 / 2.31},
		{"docs/day", got.DocsPerDay, 86400 / 2.31},
		{"tokens/s", got.OutputTokensPerS, 20},
		{"retry share", got.RetryShare, 0.05},
		{"corpus days", got.CorpusDays, 23250.0 / 86400},
	}
	for _, f := range floats {
		if d := f.got - f.want; d > 1e-6 || d < -1e-6 {
			t.Errorf("%s: got %v, want %v", f.name, f.got, f.want)
		}
	}
	ints := []struct {
		name      string
		got, want int64
	}{
		{"preparation", got.PreparationNS, 150e9},
		{"processing", got.ProcessingNS, 20000e9},
		{"evaluation", got.EvaluationNS, 2000e9},
		{"retries", got.RetriesNS, 1100e9},
		{"corpus", got.CorpusNS, 23250e9},
		// (days × 86,400 − 150) / 2.31
		{"3 days", got.Rentals[0].Docs, 112142},
		{"7 days", got.Rentals[1].Docs, 261753},
		{"30 days", got.Rentals[2].Docs, 1122012},
	}
	for _, c := range ints {
		if c.got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, c.got, c.want)
		}
	}
	if time.Duration(got.CorpusNS).String() != "6h27m30s" {
		t.Errorf("corpus time: got %s", time.Duration(got.CorpusNS))
	}
	for _, r := range got.Rentals {
		if !r.FitsCorpus {
			t.Errorf("%d days: the 6.5-hour corpus should fit", r.Days)
		}
	}
	var buf bytes.Buffer
	if err := got.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1800 documents/hour", "Corpus of 10,000 documents  6h27m30s", "3-day rental", "112,142 documents"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestPlanDoesNotFit(t *testing.T) {
	// 1 document a minute: a million documents need 694 days.
	got, err := Plan(PlanInputs{Docs: 10, Accepted: 10, DurationNS: 600e9, CorpusDocs: 1_000_000, RentalDays: []int{30}})
	if err != nil {
		t.Fatal(err)
	}
	if r := got.Rentals[0]; r.FitsCorpus || r.Docs != 43200 {
		t.Errorf("30 days: got %+v, want 43,200 documents and no fit", r)
	}
}

func TestPlanErrors(t *testing.T) {
	tests := []struct {
		in   PlanInputs
		want string // the cause the error names
	}{
		{PlanInputs{Docs: 0, DurationNS: 1, CorpusDocs: 1}, "no measured documents or duration (0 documents in 1 ns)"},
		{PlanInputs{Docs: 1, DurationNS: 0, CorpusDocs: 1}, "no measured documents or duration (1 documents in 0 ns)"},
		{PlanInputs{Docs: 1, DurationNS: 1}, "corpus of 0 documents: want at least 1"},
	}
	for _, tt := range tests {
		if _, err := Plan(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: got %v, want an error containing %q", tt.in, err, tt.want)
		}
	}
}
