package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/ci"
	"github.com/extractbench/extractbench/results/compare"
)

// junitXSD is the JUnit schema the common reporters read (its source is
// noted inside it).
const junitXSD = "testdata/junit-10.xsd"

// TestJUnit_Schema validates what -junit writes (the sizing fixture, a real
// built-in run, and failure details XML cannot carry as they are) against
// junit-10.xsd. No maintained pure-Go XSD validator exists, so xsdSchema
// checks the rules the schema uses; xmllint, when installed, checks too.
func TestJUnit_Schema(t *testing.T) {
	schema := loadXSD(t, junitXSD)
	dir := t.TempDir()
	var files []string

	fixture := filepath.Join(dir, "fixture")
	buildFixture(t, "sizing", fixture)
	sizing := filepath.Join(dir, "sizing.xml")
	if code, _, stderr := runCLI(t, "report", "-junit", sizing, fixture); code != exitOK {
		t.Fatalf("report -junit: exit %d: %s", code, stderr)
	}
	files = append(files, sizing)

	proto := writeFile(t, dir, "p.yaml", strings.NewReplacer("%CORPUS%", smallCorpus(t, dir), "%MIN%", "1.0").Replace(smallProtocol)+
		"  - name: int4\n    engine: {url: builtin, model: sim-8b-int4, builtin: {time_scale: 0}}\n")
	runXML, md := filepath.Join(dir, "run.xml"), filepath.Join(dir, "summary.md")
	if code, _, stderr := runCLI(t, "run", "-quiet", "-protocol", proto, "-out", filepath.Join(dir, "out"), "-junit", runXML, "-summary-md", md); code != exitVerdict {
		t.Fatalf("run -junit: exit %d, want %d: %s", code, exitVerdict, stderr)
	}
	files = append(files, runXML)
	raw, err := os.ReadFile(runXML)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<testsuite name="bf16" tests="3" failures="2" errors="0" skipped="0"`, // verdict, level 1, level 2
		`<testsuite name="int4" tests="4" failures="3" errors="0" skipped="0"`, // and the paired verdict
		`<testcase name="concurrency 1 (baseline)" classname="extractbench.cli.bf16"`,
		`<failure type="FAIL" message="baseline: accepted 83.3% &lt; threshold 100.0%">`,
		"doc-0001  repetition 1  quality  amount: got", // the failed document, in the failure
		`<testcase name="paired vs bf16 (concurrency 1, repetition 1)" classname="extractbench.cli.int4"`,
	} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Errorf("run -junit lacks %s:\n%s", want, raw)
		}
	}
	if b, err := os.ReadFile(md); err != nil || !bytes.Contains(b, []byte("| int4 | ❌ FAIL | 83.3% | none usable | NOT EQUIVALENT")) {
		t.Errorf("summary-md (%v):\n%s", err, b)
	}

	states := filepath.Join(dir, "states.xml")
	var b bytes.Buffer
	if err := everyState().WriteJUnit(&b); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "states.xml", b.String())
	files = append(files, states)
	if !strings.Contains(b.String(), "<error type=\"ERROR\"") || !strings.Contains(b.String(), "<skipped type=\"NOT RUN\"") ||
		!strings.Contains(b.String(), "<error type=\"INTERRUPTED\"") || !strings.Contains(b.String(), "]]]]><![CDATA[>") {
		t.Errorf("states:\n%s", b.String())
	}

	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if problems := schema.validate(data); len(problems) > 0 {
			t.Errorf("%s is not valid against %s:\n%s\n%s", filepath.Base(f), junitXSD, strings.Join(problems, "\n"), data)
		}
	}
	t.Run("xmllint", func(t *testing.T) {
		if _, err := exec.LookPath("xmllint"); err != nil {
			t.Skip("xmllint is not installed (apt-get install libxml2-utils): the Go check above stands alone")
		}
		for _, f := range files {
			if out, err := exec.Command("xmllint", "--noout", "--schema", junitXSD, f).CombinedOutput(); err != nil {
				t.Errorf("xmllint %s: %v\n%s", filepath.Base(f), err, out)
			}
		}
	})
}

// TestXSDSchema_Refuses: the schema check finds what junit-10.xsd forbids,
// so that TestJUnit_Schema can fail.
func TestXSDSchema_Refuses(t *testing.T) {
	schema := loadXSD(t, junitXSD)
	valid := `<testsuites><testsuite name="a" tests="1" failures="0" errors="0" time="1.5"><testcase name="x" time="0.1"><system-out>ok</system-out></testcase></testsuite></testsuites>`
	if p := schema.validate([]byte(valid)); len(p) > 0 {
		t.Fatalf("a valid file is refused: %v", p)
	}
	tests := []struct{ name, doc, want string }{
		{"unknown root", `<results/>`, "root <results> is not declared"},
		{"required attribute", `<testsuites><testsuite name="a" tests="1" errors="0"/></testsuites>`, `<testsuite> lacks the required attribute "failures"`},
		{"undeclared attribute", `<testsuites><testsuite name="a" tests="1" failures="0" errors="0" verdict="x"/></testsuites>`, `attribute "verdict" is not declared`},
		{"bad time", `<testsuites time="1.5s"/>`, `"1.5s" does not match SUREFIRE_TIME`},
		{"undeclared child", `<testsuites><testsuite name="a" tests="1" failures="0" errors="0"><level/></testsuite></testsuites>`, "<testsuite>'s children [level] do not match"},
		{"text in element content", `<testsuites>text</testsuites>`, "<testsuites> holds text"},
		{"child of a string element", `<testsuites><testsuite name="a" tests="1" failures="0" errors="0"><system-out><b/></system-out></testsuite></testsuites>`, "<system-out> is text only"},
		{"testcase without a name", `<testsuites><testsuite name="a" tests="1" failures="0" errors="0"><testcase/></testsuite></testsuites>`, `<testcase> lacks the required attribute "name"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems := schema.validate([]byte(tt.doc))
			if !strings.Contains(strings.Join(problems, "\n"), tt.want) {
				t.Errorf("problems %q, want one with %q", problems, tt.want)
			}
		})
	}
}

// everyState is a run whose variants are in every state, with a failure
// detail XML cannot carry as it is.
func everyState() *ci.Run {
	share := 0.5
	level := func(variant string, usable bool) ci.Level {
		return ci.Level{Level: eval.Level{Variant: variant, Mode: "concurrency", Level: 1, Phase: extractbench.PhaseBaseline, Docs: 2, Accepted: 1,
			Verdict: eval.Verdict{Usable: usable, Reason: "accepted 50.0% < threshold 95.0%"}}, Name: "concurrency 1 (baseline)", Baseline: true, Seconds: 1.25,
			NFailed: 1, Failed: []ci.Doc{{ID: "d\x00\x1b1", Repetition: 1, Failure: extractbench.Format, Detail: "output ]]> \xff\xfe and \x07 bell"}}}
	}
	v := func(name, state string, usable bool) ci.Variant {
		return ci.Variant{Outcome: results.Outcome{Variant: name, Model: "m", State: state, Reason: "because <" + state + ">", BaselineShare: &share},
			Levels: []ci.Level{level(name, usable)}}
	}
	pass := v("pass", results.OutcomePass, true)
	fail := v("fail", results.OutcomeFail, false)
	fail.Paired = &ci.Paired{Against: "pass", Mode: "concurrency", Level: 1, Repetition: 1,
		Result: &compare.Result{Margin: 0.02, Equivalence: eval.EquivalenceResult{N: 2, Level: 0.9, Flips: []eval.Pair{{DocID: "d1", AOK: true}}}}}
	errored := v("errored", results.OutcomeError, false)
	errored.Paired = &ci.Paired{Against: "pass", Skipped: "the engine did not start"}
	return &ci.Run{Dir: "out", RunID: "r1", Protocol: "p", Fingerprint: "f", Status: results.RunInterrupted, Started: time.Unix(0, 0).UTC(),
		Variants: []ci.Variant{pass, fail, errored, v("cut", results.OutcomeInterrupted, false), {Outcome: results.Outcome{Variant: "later", State: results.OutcomeNotRun, Reason: "the run was interrupted before this variant was measured"}}}}
}
