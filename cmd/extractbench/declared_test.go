package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// declaredDocs are the purchase orders of the declared-field fixture: six
// both variants accept, and four the quantised one fails (a date, a
// boolean as a string, an answer that does not parse, a total).
var declaredDocs = []string{"po-0001", "po-0002", "po-0003", "po-0004", "po-0005", "po-0006", "po-0051", "po-0101", "po-0138", "po-0211"}

// buildDeclaredFixture runs examples/purchase-orders' protocol (its nine
// declared fields, bf16 and int4 on the built-in engine) on declaredDocs,
// one level and repetition, into dir.
func buildDeclaredFixture(t *testing.T, dir string) {
	t.Helper()
	raw, err := os.ReadFile("../../examples/purchase-orders/corpus/documents.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		for _, id := range declaredDocs {
			if strings.HasPrefix(line, `{"id":"`+id+`"`) {
				docs = append(docs, line)
			}
		}
	}
	if len(docs) != len(declaredDocs) {
		t.Fatalf("found %d of the %d fixture documents in the purchase-order corpus", len(docs), len(declaredDocs))
	}
	tmp := t.TempDir()
	corpus := writeFile(t, tmp, "po.jsonl", strings.Join(docs, ""))
	proto, err := os.ReadFile("../../examples/purchase-orders/protocol.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := string(proto)
	for _, r := range [][2]string{
		{"\ncorpus: corpus\n", "\ncorpus: " + corpus + "\n"},
		{"acceptance: {min_accepted: 0.95, latency_p95_ms: 400}", "acceptance: {min_accepted: 0.5}"},
		{"levels: [1, 4, 16], repetitions: 2, warmup: 8", "levels: [1], repetitions: 1, warmup: 1"},
		{"model: sim-8b}", "model: sim-8b, builtin: {time_scale: 0}}"},
		{"model: sim-8b-int4}", "model: sim-8b-int4, builtin: {time_scale: 0}}"},
	} {
		if !strings.Contains(p, r[0]) {
			t.Fatalf("examples/purchase-orders/protocol.yaml no longer has %q: update the fixture", r[0])
		}
		p = strings.Replace(p, r[0], r[1], 1)
	}
	if code, _, stderr := runCLI(t, "run", "-quiet", "-protocol", writeFile(t, tmp, "po.yaml", p), "-out", dir); code != exitOK {
		t.Fatalf("declared fixture run: exit %d: %s", code, stderr)
	}
}

// TestCompare_Terminal80Declared compares the two variants of a declared-
// field run on an 80-column terminal: every line fits (the side-by-side
// table compact, each output excerpt cut to a line, sentences wrapped),
// the nine declared fields have their F1 deltas and each flip names the
// fields behind it. -wide gives the full table back.
func TestCompare_Terminal80Declared(t *testing.T) {
	fixture := filepath.Join(t.TempDir(), "po")
	buildDeclaredFixture(t, fixture)
	// A wide margin: ten documents show nothing at ±2 points, and the
	// terminal helper wants exit 0.
	args := []string{"compare", "-margin", "0.9", fixture + ":bf16", fixture + ":int4"}
	stdout, _ := runOnTerminals(t, 80, args...)
	if s := drawn(stdout, 80); s.widest > 80 || s.wraps > 0 {
		t.Errorf("widest line %d columns, %d wrapped; want at most 80, none:\n%s", s.widest, s.wraps, stdout)
	}
	for _, want := range []string{
		"supplier_tax_id  1.000  0.947  -0.053  [-0.176, +0.000]",
		"delivery_date    1.000  0.824  -0.176  [-0.444, +0.000]",
		"fields B got wrong: total (got 1179.83, want 1079.83)",
		"no field of B scored: the answer did not parse",
		"(compact: a wider terminal or compare -wide",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare at 80 columns lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "date  ") && !strings.Contains(stdout, "order_date") {
		t.Errorf("compare lists the default fields for a declared run:\n%s", stdout)
	}
	wide, _ := runOnTerminals(t, 80, append([]string{"compare", "-wide"}, args[1:]...)...)
	if w := drawn(wide, 80); !strings.Contains(wide, "KV peak") || w.widest <= 80 {
		t.Errorf("-wide at 80 columns: widest %d, want the full table:\n%s", w.widest, wide)
	}
}

// TestReport_DeclaredCI writes the JUnit file and the Markdown summary of
// a declared-field run: a case per field and variant with its F1 and the
// failed documents it was wrong in, the flips' fields, and the summary's
// per-field table, the JUnit file valid against junit-10.xsd.
func TestReport_DeclaredCI(t *testing.T) {
	dir := t.TempDir()
	fixture := filepath.Join(dir, "po")
	buildDeclaredFixture(t, fixture)
	junit, md := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "summary.md")
	if code, _, stderr := runCLI(t, "report", "-junit", junit, "-summary-md", md, fixture); code != exitOK && code != exitVerdict {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	x, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<testsuite name="int4" tests="12" failures="1"`, // verdict, level 1, paired, nine fields
		`<testcase name="field supplier_tax_id" classname="extractbench.purchase-orders.int4"`,
		"concurrency 1 (baseline): F1 0.842, precision 0.889, recall 0.800 (TP 8, FP 1, FN 2)",
		"po-0211  repetition 1  quality  got 1179.83, want 1079.83",
		"po-0211  bf16 accepted, this variant failed: total (got 1179.83, want 1079.83)",
		"po-0138  bf16 accepted, this variant failed: no field scored (the answer did not parse)",
	} {
		if !bytes.Contains(x, []byte(want)) {
			t.Errorf("JUnit lacks %s:\n%s", want, x)
		}
	}
	if problems := loadXSD(t, junitXSD).validate(x); len(problems) > 0 {
		t.Errorf("JUnit is not valid against %s:\n%s", junitXSD, strings.Join(problems, "\n"))
	}
	m, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| field | concurrency 1 (baseline) |\n|---|---:|\n| order\\_number | 1.000 |",
		"| total | 0.842 |",
		"- `po-0211` this variant failed: total (got 1179.83, want 1079.83)",
	} {
		if !bytes.Contains(m, []byte(want)) {
			t.Errorf("summary lacks %q:\n%s", want, m)
		}
	}
}
