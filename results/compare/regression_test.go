package compare

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/plan/plantest"
)

// nightly writes a run whose level 1 accepts accepted of 300 and whose
// levels 2 and 4 have the given p95 E2E (ms); level 8 breaks on memory, so
// 4 is usable and 2 recommended.
func nightly(t *testing.T, corpus string, accepted int, p95At2 int64) string {
	t.Helper()
	dir := t.TempDir()
	l8 := plantest.Pass("bf16", 8, 1, 300, 200, 60, 3000)
	l8.Failures.Add(extractbench.Memory, 100)
	plantest.Write(t, dir, plantest.Run{RunID: "n",
		Manifest: plantest.Manifest(corpus, "Llama-3.1-8B", "NVIDIA L4", 24e9, 0.9, 0),
		Passes: []extractbench.Pass{
			plantest.Pass("bf16", 1, 1, 300, accepted, 600, 900),
			plantest.Pass("bf16", 2, 1, 300, accepted, 320, p95At2),
			plantest.Pass("bf16", 4, 1, 300, accepted, 200, 2000),
			l8,
		}})
	return dir
}

func TestRegression(t *testing.T) {
	base := nightly(t, "c0ffee", 291, 1000)
	tests := []struct {
		name    string
		current string
		pass    bool
		reasons []string
	}{
		{"same", nightly(t, "c0ffee", 291, 1000), true, nil},
		// 291 → 286 is 1.67 points: inside the 2-point margin.
		{"small drop", nightly(t, "c0ffee", 286, 1200), true, nil},
		// 291 → 284 is 2.33 points.
		{"acceptance drop", nightly(t, "c0ffee", 284, 1000), false, []string{"fell 2.3 points (97.0% → 94.7%)"}},
		{"latency growth", nightly(t, "c0ffee", 291, 1300), false, []string{"p95 E2E at level 2 grew 1.30×"}},
		{"both", nightly(t, "c0ffee", 250, 5000), false, []string{"fell 13.7 points", "grew 5.00×"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Regression(context.Background(), base, tt.current, 0.02, 1.25, false)
			if err != nil {
				t.Fatal(err)
			}
			if v.Pass != tt.pass || len(v.Reasons) != len(tt.reasons) {
				t.Fatalf("got pass %v reasons %q", v.Pass, v.Reasons)
			}
			for i, want := range tt.reasons {
				if !strings.Contains(v.Reasons[i], want) {
					t.Errorf("reason %d: got %q, want it to contain %q", i, v.Reasons[i], want)
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
	if v.Pass || len(v.Reasons) != 1 || !strings.Contains(v.Reasons[0], "level 2, recommended by the baseline run, was not measured") {
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
