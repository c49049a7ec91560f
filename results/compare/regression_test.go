package compare

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/plan/plantest"
)

// nightly writes a run whose level 1 accepts accepted of 300 and whose
// level 2 has the given p95 E2E (ms), one repetition each, level 4 2 s; level
// 8 breaks on memory, so 4 is usable and 2 recommended. Every level has as
// many repetitions as p95At2 has values.
func nightly(t *testing.T, corpus string, accepted int, p95At2 ...int64) string {
	t.Helper()
	dir := t.TempDir()
	var passes []extractbench.Pass
	for i, p95 := range p95At2 {
		rep := i + 1
		l8 := plantest.Pass("bf16", 8, rep, 300, 200, 60, 3000)
		l8.Failures.Add(extractbench.Memory, 100)
		passes = append(passes,
			plantest.Pass("bf16", 1, rep, 300, accepted, 600, 900),
			plantest.Pass("bf16", 2, rep, 300, accepted, 320, p95),
			plantest.Pass("bf16", 4, rep, 300, accepted, 200, 2000),
			l8)
	}
	plantest.Write(t, dir, plantest.Run{RunID: "n",
		Manifest: plantest.Manifest(corpus, "Llama-3.1-8B", "NVIDIA L4", 24e9, 0.9, 0), Passes: passes})
	return dir
}

// TestRegression: an acceptance drop beyond the margin fails; a latency
// growth beyond the ratio fails only when the two runs' ranges over
// repetitions do not overlap (the dispersion rule, MEASUREMENT.md section
// 12); within the spread, or on one repetition, it is a note saying why.
func TestRegression(t *testing.T) {
	base := nightly(t, "c0ffee", 291, 950, 1000, 1050)
	tests := []struct {
		name    string
		base    string
		current string
		pass    bool
		reasons []string
		notes   []string
	}{
		{"same", base, nightly(t, "c0ffee", 291, 950, 1000, 1050), true, nil, nil},
		// 291 → 286 is 1.67 points: inside the 2-point margin.
		{"small drop", base, nightly(t, "c0ffee", 286, 1150, 1200, 1250), true, nil, nil},
		// 291 → 284 is 2.33 points.
		{"acceptance drop", base, nightly(t, "c0ffee", 284, 950, 1000, 1050), false, []string{"fell 2.3 points (97.0% → 94.7%)"}, nil},
		{"latency growth", base, nightly(t, "c0ffee", 291, 1250, 1300, 1350), false, []string{"p95 E2E at concurrency 2 grew 1.30×", "beyond the spread"}, nil},
		// The median grew 1.30×, but one repetition of the current run is
		// as fast as the baseline's slowest: noise, not a regression.
		{"latency growth within the spread", base, nightly(t, "c0ffee", 291, 1000, 1300, 1700), true, nil, []string{"grew 1.30×", "not called a regression: within the spread"}},
		{"one repetition", nightly(t, "c0ffee", 291, 1000), nightly(t, "c0ffee", 291, 1300), true, nil, []string{"grew 1.30×", "not called a regression: " + eval.OneRepetition}},
		{"both", base, nightly(t, "c0ffee", 250, 4900, 5000, 5100), false, []string{"fell 13.7 points", "grew 5.00×"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Regression(context.Background(), tt.base, tt.current, 0.02, 1.25, false)
			if err != nil {
				t.Fatal(err)
			}
			if v.Pass != tt.pass || len(v.Reasons) != countDistinct(tt.reasons) {
				t.Fatalf("got pass %v reasons %q", v.Pass, v.Reasons)
			}
			all := strings.Join(v.Reasons, "\n")
			for _, want := range tt.reasons {
				if !strings.Contains(all, want) {
					t.Errorf("reasons %q: want one to contain %q", v.Reasons, want)
				}
			}
			notes := strings.Join(v.Notes, "\n")
			for _, want := range tt.notes {
				if !strings.Contains(notes, want) {
					t.Errorf("notes %q: want one to contain %q", v.Notes, want)
				}
			}
			var buf bytes.Buffer
			if err := v.WriteText(&buf); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]string{true: "Regression PASS", false: "Regression FAIL"}[tt.pass]; !strings.HasPrefix(buf.String(), want) {
				t.Errorf("text: got %q", buf.String())
			}
		})
	}
}

// countDistinct is how many reasons a case expects: the phrases of one
// reason are listed apart, each reason starting with the variant's name
// in the first phrase naming a figure ("fell", "grew").
func countDistinct(phrases []string) int {
	n := 0
	for _, p := range phrases {
		if strings.Contains(p, "fell") || strings.Contains(p, "grew") {
			n++
		}
	}
	return n
}

func TestRegressionRefusesOtherCorpus(t *testing.T) {
	_, err := Regression(context.Background(), nightly(t, "c0ffee", 291, 1000), nightly(t, "decaf", 291, 1000), 0, 0, false)
	if err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("got %v, want a refusal", err)
	}
}

func TestRegressionMissingLevelFails(t *testing.T) {
	base := nightly(t, "c0ffee", 291, 1000)
	cur := t.TempDir()
	plantest.Write(t, cur, plantest.Run{RunID: "c",
		Manifest: plantest.Manifest("c0ffee", "Llama-3.1-8B", "NVIDIA L4", 24e9, 0.9, 0),
		Passes:   []extractbench.Pass{plantest.Pass("bf16", 1, 1, 300, 291, 600, 900)}})
	v, err := Regression(context.Background(), base, cur, 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if v.Pass || len(v.Reasons) != 1 || !strings.Contains(v.Reasons[0], "concurrency 2, recommended by the baseline run, was not measured") {
		t.Errorf("got pass %v reasons %q", v.Pass, v.Reasons)
	}
}

// TestRegressionRefusesADifferentMeasurement: a baseline that ran another
// generation (or prompt, schema, parse rule, model) is refused with every
// difference listed, unless the caller accepts them; then they are kept in
// the verdict.
func TestRegressionRefusesADifferentMeasurement(t *testing.T) {
	base := nightly(t, "c0ffee", 291, 1000)
	cur := t.TempDir()
	m := plantest.Manifest("c0ffee", "Llama-3.1-8B", "NVIDIA L4", 24e9, 0.9, 0)
	m["generation"] = map[string]any{"max_tokens": 256}
	m["parse"] = "lenient"
	plantest.Write(t, cur, plantest.Run{RunID: "c", Manifest: m,
		Passes: []extractbench.Pass{plantest.Pass("bf16", 1, 1, 300, 291, 600, 900), plantest.Pass("bf16", 2, 1, 300, 291, 320, 1000)}})
	_, err := Regression(context.Background(), base, cur, 0, 0, false)
	var re *results.RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), `parse: baseline "strict", now "lenient"`) ||
		!strings.Contains(err.Error(), `generation.max_tokens: baseline "128", now "256"`) {
		t.Fatalf("err = %v, want a refusal listing parse and max_tokens", err)
	}
	v, err := Regression(context.Background(), base, cur, 0, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Differences) != 2 || !strings.Contains(strings.Join(v.Notes, " "), "compared although the runs differ") {
		t.Errorf("accepted: differences %q notes %q", v.Differences, v.Notes)
	}
}
