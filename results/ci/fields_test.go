package ci

import (
	"bytes"
	"encoding/xml"
	"reflect"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/compare"
)

// declaredRun is a run of two variants judged on fields whose names SQL,
// HTML and Markdown would read as their own: "alt" failed d2 on "<b>" and
// lost it to "base" in the paired verdict.
func declaredRun() *Run {
	level := func(v string, f1 float64, failed ...Doc) Level {
		return Level{Level: eval.Level{Variant: v, Mode: extractbench.ModeConcurrency, Level: 1, Phase: extractbench.PhaseBaseline, Docs: 2, Repetitions: 1},
			Name: "concurrency 1 (baseline)", Baseline: true, NFailed: len(failed), Failed: failed,
			Fields: []extractbench.PassField{{Name: "select", TP: 2, Precision: 1, Recall: 1, F1: 1},
				{Name: "<b>", Position: 1, TP: 1, FP: 1, FN: 1, Precision: 0.5, Recall: 0.5, F1: f1},
				{Name: "a|b", Position: 2, TP: 4, Precision: 1, Recall: 1, F1: 1}}}
	}
	miss := []compare.FieldMiss{{Field: "<b>", Reason: "got <i>2</i>, want 1 ]]>"}}
	res := &compare.Result{Margin: 0.02, Equivalence: eval.EquivalenceResult{N: 2, B: 1, Flips: []eval.Pair{{DocID: "d2", AOK: true}}},
		FlipFields: []compare.FlipFields{{DocID: "d2", Failed: "B", Failure: extractbench.Quality, Fields: miss}},
		Fields: []compare.FieldDelta{{Field: "select", AF1: 1, BF1: 1}, {Field: "<b>", AF1: 1, BF1: 0.5, Delta: -0.5, Lo: -1},
			{Field: "a|b", AF1: 1, BF1: 1}}}
	return &Run{Protocol: "p", Status: results.RunComplete, Fields: []string{"select", "<b>", "a|b"}, Variants: []Variant{
		{Outcome: results.Outcome{Variant: "base", State: results.OutcomePass}, Levels: []Level{level("base", 1)}},
		{Outcome: results.Outcome{Variant: "alt", State: results.OutcomePass}, Levels: []Level{
			level("alt", 0.5, Doc{ID: "d2", Repetition: 1, Failure: extractbench.Quality, Detail: "<b>: got 2", Fields: miss})},
			Paired: &Paired{Against: "base", Mode: extractbench.ModeConcurrency, Level: 1, Repetition: 1, Result: res}},
	}}
}

// TestWriteJUnit_DeclaredFields: a declared field is a case per variant,
// named after it (escaped in the attribute), with its F1 at each level,
// the failed documents it was wrong in and the flips it is behind; the
// paired case's flips name their fields; the file stays XML. The old
// writer had no field cases.
func TestWriteJUnit_DeclaredFields(t *testing.T) {
	var b bytes.Buffer
	if err := declaredRun().WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name string `xml:"name,attr"`
				Out  string `xml:"system-out"`
				Fail *struct {
					Text string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	if len(got.Suites) != 2 {
		t.Fatalf("want two suites:\n%s", b.String())
	}
	var names []string
	for _, c := range got.Suites[1].Cases {
		names = append(names, c.Name)
	}
	want := []string{"verdict", "concurrency 1 (baseline)", "paired vs base (concurrency 1, repetition 1)", "field select", "field <b>", "field a|b"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("alt's cases: got %q, want %q", names, want)
	}
	if !strings.Contains(b.String(), `<testcase name="field &lt;b&gt;"`) {
		t.Errorf("the field's name is not escaped in its attribute:\n%s", b.String())
	}
	field := got.Suites[1].Cases[4].Out
	for _, w := range []string{
		"concurrency 1 (baseline): F1 0.500, precision 0.500, recall 0.500 (TP 1, FP 1, FN 1)",
		"wrong in failed documents at concurrency 1 (baseline) (1):\nd2  repetition 1  quality  got <i>2</i>, want 1 ]]>",
		"behind flips against base (1):\nd2  this variant failed  got <i>2</i>, want 1 ]]>",
	} {
		if !strings.Contains(field, w) {
			t.Errorf("field <b> case lacks %q:\n%s", w, field)
		}
	}
	if out := got.Suites[1].Cases[3].Out; strings.Contains(out, "wrong in") || strings.Contains(out, "behind flips") {
		t.Errorf("field select was never wrong, yet:\n%s", out)
	}
	paired := got.Suites[1].Cases[2]
	for _, w := range []string{
		"d2  base accepted, this variant failed: <b> (got <i>2</i>, want 1 ]]>)",
		"per-field F1, this variant − base, with its 95% bootstrap interval:\nselect  1.000 → 1.000  +0.000 [+0.000, +0.000]\n<b>  1.000 → 0.500  -0.500 [-1.000, +0.000]\n",
	} {
		if paired.Fail == nil || !strings.Contains(paired.Fail.Text, w) {
			t.Errorf("paired case lacks %q: %+v", w, paired)
		}
	}
}

// TestWriteMarkdown_DeclaredFields: each variant has a per-field F1 table
// whose rows keep their cells whatever the names hold, and the paired
// verdict lists the fields behind its flips, escaped. The old summary had
// neither.
func TestWriteMarkdown_DeclaredFields(t *testing.T) {
	var b bytes.Buffer
	if err := declaredRun().WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, w := range []string{
		"| field | concurrency 1 (baseline) |\n|---|---:|\n| select | 1.000 |\n| &lt;b&gt; | 1.000 |\n| a\\|b | 1.000 |\n",
		"- `d2` this variant failed: &lt;b&gt; (got &lt;i&gt;2&lt;/i&gt;, want 1 ]]&gt;)\n",
		"| field | concurrency 1 (baseline) | Δ vs base (95% interval) |\n|---|---:|---:|\n| select | 1.000 | +0.000 [+0.000, +0.000] |\n" +
			"| &lt;b&gt; | 0.500 | -0.500 [-1.000, +0.000] |\n| a\\|b | 1.000 | +0.000 [+0.000, +0.000] |\n",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("summary lacks %q:\n%s", w, md)
		}
	}
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, `| a\|b`) {
			if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); n != 3 && n != 4 {
				t.Errorf("row %q has %d cell separators, want 3 (4 with the Δ column)", line, n)
			}
		}
	}
	if strings.Contains(md, "<b>") {
		t.Errorf("a field name reached the summary as HTML:\n%s", md)
	}
}

// TestDeclaredFields: the CI formats add per-field lines for declared
// fields only: the default fields' passes (date, amount, category with
// their columns) give none, so that the default protocol's files are
// unchanged; declared fields named like the default ones still count.
func TestDeclaredFields(t *testing.T) {
	f1 := 1.0
	pass := func(dateF1 *float64, names ...string) extractbench.Pass {
		p := extractbench.Pass{Status: "complete", DateF1: dateF1}
		for i, n := range names {
			p.Fields = append(p.Fields, extractbench.PassField{Name: n, Position: i})
		}
		return p
	}
	tests := []struct {
		name   string
		passes []extractbench.Pass
		want   []string
	}{
		{"default fields", []extractbench.Pass{pass(&f1, "date", "amount", "category")}, nil},
		{"stored before field rows", []extractbench.Pass{pass(&f1)}, nil},
		{"declared", []extractbench.Pass{pass(nil, "select", "<b>", "a|b")}, []string{"select", "<b>", "a|b"}},
		{"declared with the default names", []extractbench.Pass{pass(nil, "date", "amount", "category")}, []string{"date", "amount", "category"}},
	}
	for _, tt := range tests {
		if got := declaredFields(tt.passes); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
