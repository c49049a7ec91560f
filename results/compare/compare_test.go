package compare

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results/plan/plantest"
)

// failSet returns ok(i) that is false for the listed document indexes.
func failSet(idx ...int) func(int) bool {
	m := map[int]bool{}
	for _, i := range idx {
		m[i] = true
	}
	return func(i int) bool { return !m[i] }
}

func span(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// variantData is one variant's level-1 repetitions (as failing document
// indexes) and its sweep passes.
type variantData struct {
	name  string
	reps  [][]int // failing indexes of repetition 1, 2, ...
	sweep []extractbench.Pass
}

// writeRun writes a results directory with 300-document level-1 passes.
func writeRun(t *testing.T, corpusSHA string, vs ...variantData) string {
	t.Helper()
	dir := t.TempDir()
	run := plantest.Run{RunID: "run-" + corpusSHA,
		Manifest: plantest.Manifest(corpusSHA, "meta-llama/Llama-3.1-8B-Instruct", "NVIDIA H100 80GB HBM3", 85_520_809_984, 0.95, 0)}
	for _, v := range vs {
		for i, fails := range v.reps {
			run.Records = append(run.Records, plantest.Records(v.name, 1, i+1, 300, failSet(fails...))...)
			run.Passes = append(run.Passes, plantest.Pass(v.name, 1, i+1, 300, 300-len(fails), 600, 900))
		}
		run.Passes = append(run.Passes, v.sweep...)
	}
	plantest.Write(t, dir, run)
	return dir
}

func TestRunEquivalent(t *testing.T) {
	// A fails documents 0–8; B fails 1–8 and 9: b = 1 (doc 9), c = 1 (doc 0).
	dir := writeRun(t, "c0ffee",
		variantData{name: "bf16", reps: [][]int{span(0, 9), span(0, 9)},
			sweep: []extractbench.Pass{plantest.Pass("bf16", 2, 1, 300, 291, 300, 1000), plantest.Pass("bf16", 4, 1, 300, 291, 160, 1500)}},
		variantData{name: "int4", reps: [][]int{span(1, 10)},
			sweep: []extractbench.Pass{plantest.Pass("int4", 2, 1, 300, 291, 250, 800)}})
	r, err := Run(context.Background(), Options{A: Side{Dir: dir, Variant: "bf16"}, B: Side{Dir: dir, Variant: "int4"}})
	if err != nil {
		t.Fatal(err)
	}
	eq := r.Equivalence
	if eq.N != 300 || eq.B != 1 || eq.C != 1 || eq.BothOK != 290 || eq.BothWrong != 8 || eq.Delta != 0 {
		t.Fatalf("got table n=%d a=%d b=%d c=%d d=%d Δ=%v", eq.N, eq.BothOK, eq.B, eq.C, eq.BothWrong, eq.Delta)
	}
	if !r.Equivalent || r.Margin != DefaultMargin || eq.Lo <= -DefaultMargin || eq.Hi >= DefaultMargin {
		t.Errorf("got equivalent %v with interval [%v, %v] at margin %v", r.Equivalent, eq.Lo, eq.Hi, r.Margin)
	}
	if len(eq.Flips) != 2 || eq.Flips[0].DocID != "d0001" || eq.Flips[1].DocID != "d0010" {
		t.Fatalf("flips: got %+v", eq.Flips)
	}
	if f := eq.Flips[0]; f.AOK || !f.BOK || !strings.Contains(f.AOutput, "11.00") || !strings.Contains(f.BOutput, "10.00") {
		t.Errorf("flip d0001 should carry both outputs: %+v", f)
	}
	// Amount: A and B both 291 TP, 9 FP+FN: F1 = 582/600 each, Δ 0.
	for _, f := range r.Fields {
		want := 1.0
		if f.Field == "amount" {
			want = 582.0 / 600
		}
		if f.AF1 != want || f.BF1 != want || f.Delta != 0 {
			t.Errorf("%s F1: got A %v B %v Δ %v, want %v both, Δ 0", f.Field, f.AF1, f.BF1, f.Delta, want)
		}
	}
	// bf16 has two identical repetitions: a noise floor with no flips.
	if len(r.NoiseFloors) != 1 || r.NoiseFloors[0].Variant != "bf16" || r.NoiseFloors[0].Flips != 0 || r.NoiseFloors[0].Floor <= 0 {
		t.Errorf("noise floors: got %+v", r.NoiseFloors)
	}
	if len(r.Levels) != 2 || r.Levels[0].Level != 1 || r.Levels[1].Level != 2 {
		t.Fatalf("common levels: got %+v", r.Levels)
	}
	if l := r.Levels[0]; l.A.Repetitions != 2 || l.B.Repetitions != 1 || l.A.E2EP95NS.Median != 900e6 {
		t.Errorf("level 1: got %+v", l)
	}
	if r.A.Recommendation.Recommended != 2 || r.B.Recommendation.Recommended != 1 {
		t.Errorf("recommended: got A %d B %d, want 2 and 1", r.A.Recommendation.Recommended, r.B.Recommendation.Recommended)
	}
	var txt, js bytes.Buffer
	if err := r.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Verdict: EQUIVALENT at margin δ = 0.020", "b (A right, B wrong) 1", "d0010  A accepted, B failed",
		"A-vs-A noise floor: bf16 at concurrency 1, repetition 1 vs 2: 0 flip(s) of 300", "Flipped documents (2)"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back["equivalent"] != true || back["margin"] != 0.02 {
		t.Errorf("json: got %v (%v)", back["equivalent"], err)
	}
}

func TestRunNotEquivalentAndNoiseWarning(t *testing.T) {
	// B fails 15 more documents: Δ = −0.05. bf16's repetitions disagree on
	// 20 documents, a noise floor wider than the 2-point margin.
	dir := writeRun(t, "c0ffee",
		variantData{name: "bf16", reps: [][]int{span(0, 10), span(10, 20)}},
		variantData{name: "int4", reps: [][]int{span(0, 25)}})
	r, err := Run(context.Background(), Options{A: Side{Dir: dir, Variant: "bf16"}, B: Side{Dir: dir, Variant: "int4"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Equivalent || r.Equivalence.B != 15 || r.Equivalence.C != 0 || r.Equivalence.Delta != -0.05 {
		t.Fatalf("got equivalent %v b %d c %d Δ %v", r.Equivalent, r.Equivalence.B, r.Equivalence.C, r.Equivalence.Delta)
	}
	nf := r.NoiseFloors
	if len(nf) != 1 || nf[0].Flips != 20 || nf[0].Floor <= 0.02 {
		t.Fatalf("noise floor: got %+v", nf)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "is not above the A-vs-A noise floor") {
		t.Errorf("warnings: got %q", r.Warnings)
	}
	// Amount F1 falls: A 290 TP of 300; B 275.
	for _, f := range r.Fields {
		if f.Field == "amount" && (f.Delta >= 0 || f.Hi >= 0 || f.Lo > f.Delta || f.Hi < f.Delta) {
			t.Errorf("amount F1 delta should be negative with an interval around it: %+v", f)
		}
	}
}

func TestRunTwoDirectories(t *testing.T) {
	a := writeRun(t, "c0ffee", variantData{name: "bf16", reps: [][]int{span(0, 3)}})
	b := writeRun(t, "c0ffee", variantData{name: "fp8", reps: [][]int{span(0, 3)}})
	r, err := Run(context.Background(), Options{A: Side{Dir: a}, B: Side{Dir: b}})
	if err != nil {
		t.Fatal(err)
	}
	if r.A.Variant != "bf16" || r.B.Variant != "fp8" || !r.Equivalent || r.Equivalence.B+r.Equivalence.C != 0 {
		t.Errorf("got %s vs %s, equivalent %v", r.A.Variant, r.B.Variant, r.Equivalent)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "no A-vs-A noise floor") {
		t.Errorf("warnings: got %q", r.Warnings)
	}
}

func TestRunRefuses(t *testing.T) {
	a := writeRun(t, "c0ffee", variantData{name: "bf16", reps: [][]int{nil}})
	other := writeRun(t, "decaf", variantData{name: "bf16", reps: [][]int{nil}})
	two := writeRun(t, "c0ffee", variantData{name: "bf16", reps: [][]int{nil}}, variantData{name: "int4", reps: [][]int{nil}})
	tests := []struct {
		name string
		opt  Options
		want string
	}{
		{"different corpora", Options{A: Side{Dir: a}, B: Side{Dir: other}}, "refusing"},
		{"which variant", Options{A: Side{Dir: two}, B: Side{Dir: a}}, "name one"},
		{"unknown variant", Options{A: Side{Dir: two, Variant: "fp4"}, B: Side{Dir: a}}, `no complete pass of variant "fp4"`},
		{"same side twice", Options{A: Side{Dir: a}, B: Side{Dir: a}}, "both variant bf16"},
		{"level not measured", Options{A: Side{Dir: two, Variant: "bf16"}, B: Side{Dir: two, Variant: "int4"}, Level: "64"}, "level 64 was not measured by both sides at repetition 1; both measured concurrency 1"},
		{"no results", Options{A: Side{Dir: t.TempDir()}, B: Side{Dir: a}}, "results.db: no such file or directory"},
		{"bad margin", Options{A: Side{Dir: a}, B: Side{Dir: two, Variant: "int4"}, Margin: 2}, "margin 2: want a share between 0 and 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(context.Background(), tt.opt)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestParseSide(t *testing.T) {
	dir := t.TempDir()
	colon := filepath.Join(dir, "a:b")
	if err := os.Mkdir(colon, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		want Side
	}{
		{"out/run1:int4", Side{Dir: "out/run1", Variant: "int4"}},
		{"out/run1", Side{Dir: "out/run1"}},
		{colon, Side{Dir: colon}},
		{colon + ":bf16", Side{Dir: colon, Variant: "bf16"}},
		{"out:", Side{Dir: "out:"}},
	}
	for _, tt := range tests {
		got, err := ParseSide(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseSide(%q): got %+v %v, want %+v", tt.in, got, err, tt.want)
		}
		if tt.want.Variant != "" && got.String() != tt.in {
			t.Errorf("String: got %q, want %q", got.String(), tt.in)
		}
	}
	if _, err := ParseSide(""); err == nil || err.Error() != "empty side: want DIR or DIR:variant" {
		t.Errorf("empty side: got %v, want the error naming the empty side", err)
	}
}

func TestInferredExpectationsCountMisses(t *testing.T) {
	// A document that failed format on one side (fields unscored) and scored
	// tp on the other had an expected value: the failing side misses it (FN).
	recs := plantest.Records("bf16", 1, 1, 2, func(int) bool { return true })
	bad := plantest.Records("int4", 1, 1, 2, func(int) bool { return true })
	bad[1].Accepted, bad[1].Failure, bad[1].SchemaOK = false, extractbench.Format, false
	bad[1].Date, bad[1].Amount, bad[1].Category = extractbench.Unscored, extractbench.Unscored, extractbench.Unscored
	dir := t.TempDir()
	run := plantest.Run{RunID: "r", Records: append(recs, bad...), Passes: []extractbench.Pass{
		plantest.Pass("bf16", 1, 1, 2, 2, 1, 100), plantest.Pass("int4", 1, 1, 2, 1, 1, 100)}}
	plantest.Write(t, dir, run)
	r, err := Run(context.Background(), Options{A: Side{Dir: dir, Variant: "bf16"}, B: Side{Dir: dir, Variant: "int4"}})
	if err != nil {
		t.Fatal(err)
	}
	// B: 1 TP, 1 FN on each field: F1 = 2/3.
	for _, f := range r.Fields {
		if f.AF1 != 1 || f.BF1 != 2.0/3 {
			t.Errorf("%s: got A %v B %v, want 1 and 2/3", f.Field, f.AF1, f.BF1)
		}
	}
}
