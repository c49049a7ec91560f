package ci

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
)

// TestWriteJUnit_HostileText: a failure detail with what XML 1.0 cannot
// carry (NUL, ESC, invalid UTF-8, "]]>") still gives a file that parses,
// with the detail's readable part kept.
func TestWriteJUnit_HostileText(t *testing.T) {
	r := &Run{Protocol: "p", Variants: []Variant{{
		Outcome: results.Outcome{Variant: "v", State: results.OutcomeFail, Reason: "a <b> & c"},
		Levels: []Level{{Level: eval.Level{Variant: "v", Mode: "concurrency", Level: 1, Phase: extractbench.PhaseBaseline, Docs: 1},
			Name: "concurrency 1 (baseline)", Baseline: true, NFailed: 1,
			Failed: []Doc{{ID: "d1", Repetition: 1, Failure: extractbench.Format, Detail: "x\x00y\x1bz ]]> \xff end"}}}},
	}}}
	var b bytes.Buffer
	if err := r.WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Suites []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	if len(got.Suites) != 1 || len(got.Suites[0].Cases) != 2 {
		t.Fatalf("want one suite of 2 cases (verdict, level):\n%s", b.String())
	}
	verdict, level := got.Suites[0].Cases[0], got.Suites[0].Cases[1]
	if verdict.Failure == nil || verdict.Failure.Message != "a <b> & c" {
		t.Errorf("verdict case = %+v", verdict)
	}
	if level.Failure == nil || !strings.Contains(level.Failure.Text, "x\uFFFDy\uFFFDz ]]> \uFFFD end") {
		t.Errorf("level failure text lost the detail: %+v", level.Failure)
	}
}

// TestWriteMarkdown_Cells: a reason with pipes and newlines stays in its
// table cell.
func TestWriteMarkdown_Cells(t *testing.T) {
	r := &Run{Protocol: "p", Status: results.RunComplete, Variants: []Variant{{
		Outcome: results.Outcome{Variant: "v|1", State: results.OutcomeFail, Reason: "a | b\nc"}}}}
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "| v") {
			if got, want := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"), 7; got != want {
				t.Errorf("row %q has %d cell separators, want %d", line, got, want)
			}
			return
		}
	}
	t.Errorf("no row for the variant:\n%s", b.String())
}
