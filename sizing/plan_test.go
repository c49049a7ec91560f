package sizing

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestPlan checks the arithmetic by hand: 300 documents in 600 s is 2 s a
// document (1,800/hour); with 10% evaluation overhead and 5% assumed retried the
// sustained cost is 2 × 1.1 × 1.05 = 2.31 s (1,558.4/hour). A corpus of
// 10,000: processing 20,000 s, evaluation 2,000 s, retries 10,000 × 0.05 ×
// 2 × 1.1 = 1,100 s, preparation 120 + 30 s: 23,250 s = 6h27m30s.
func TestPlan(t *testing.T) {
	got, err := Plan(PlanInputs{Variant: "bf16", Mode: "concurrency", Level: 8, Docs: 300, Accepted: 285,
		DurationNS: 600e9, OutputTokens: 12000, LoadNS: 120e9, WarmupNS: 30e9, OverheadShare: 0.1, RetryShare: 0.05, RetryAssumed: true, CorpusDocs: 10000})
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
	for _, want := range []string{"1,800 documents/hour", "Corpus of 10,000 documents  6h27m30s", "3-day rental", "112,000 documents"} {
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

// TestPlanCost prices TestPlan's figures at 4.00 a card-hour, by hand:
// sustained accepted rate 1,710 / 1.1 = 1,554.5/hour, so 1,000 accepted cost
// 4,000 × 1.1 / 1,710 = 2.5731; the corpus (23,250 s on one card) costs
// 23,250 / 3,600 × 4 = 25.83. A deadline of 0.1 day (8,640 s): preparation
// 150 s, then (23,250 − 150) / (8,640 − 150) = 2.72 → 3 cards, billed
// 3 × 2.4 h × 4 = 28.80. A 3-day rental: 1 card, 3 × 24 × 4 = 288.00.
func TestPlanCost(t *testing.T) {
	r, err := Plan(PlanInputs{Variant: "bf16", Mode: "concurrency", Level: 8, Docs: 300, Accepted: 285,
		DurationNS: 600e9, LoadNS: 120e9, WarmupNS: 30e9, OverheadShare: 0.1, RetryShare: 0.05, RetryAssumed: true, CorpusDocs: 10000})
	if err != nil {
		t.Fatal(err)
	}
	p := &Prices{Path: "p.yaml", Currency: "USD", Placeholder: true, PerHour: map[string]float64{"H100": 4}}
	price, err := p.For("NVIDIA H100 80GB HBM3")
	if err != nil || price != 4 {
		t.Fatalf("price: got %v %v", price, err)
	}
	r.AddCost(p, price, 0.1)
	c := r.Cost
	floats := []struct {
		name      string
		got, want float64
	}{
		{"per 1,000 accepted", c.PerThousandAccepted, 4000 * 1.1 / 1710},
		{"corpus", c.CorpusCost, 23250.0 / 3600 * 4},
		{"deadline cost", c.DeadlineCost, 3 * 2.4 * 4},
		{"3-day rental", *r.Rentals[0].Cost, 288},
	}
	for _, f := range floats {
		if math.Abs(f.got-f.want) > 1e-9 {
			t.Errorf("%s: got %v, want %v", f.name, f.got, f.want)
		}
	}
	if c.CardsForDeadline != 3 || r.Rentals[0].CardsNeeded != 1 {
		t.Errorf("cards: got %d for the deadline, %d for 3 days", c.CardsForDeadline, r.Rentals[0].CardsNeeded)
	}
	if got := r.CardsFor(100e9); got != 0 {
		t.Errorf("a deadline shorter than the preparation: got %d cards", got)
	}
	if !strings.Contains(c.Label, "PLACEHOLDER") {
		t.Errorf("label %q does not say PLACEHOLDER", c.Label)
	}
	if _, err := p.For("L4"); err == nil || !strings.Contains(err.Error(), `no price for the card "L4" in p.yaml`) {
		t.Errorf("unpriced card: got %v", err)
	}
}

func TestLoadPrices(t *testing.T) {
	p, err := LoadPrices("../prices.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Placeholder || p.Currency != "USD" || len(p.PerHour) != len(Catalog) {
		t.Errorf("example: got %+v, want placeholder USD prices for every catalog card", p)
	}
	for _, g := range Catalog {
		if _, err := p.For(g.Name); err != nil {
			t.Errorf("example lacks %s: %v", g.Name, err)
		}
	}
	dir := t.TempDir()
	bad := map[string]string{
		"currency: USD\nper_card_hour:\n  H200: 0\n":           "bad.yaml:3: per_card_hour: H200: price 0: want a positive price",
		"currency: USD\nper_card_hour: {H200: 1}\ncolour: 1\n": "field colour not found",
		"per_card_hour: {H200: 1}\n":                           "currency: missing",
	}
	for body, want := range bad {
		path := filepath.Join(dir, "bad.yaml")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadPrices(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", body, err, want)
		}
	}
}
