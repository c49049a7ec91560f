package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/ci"
	"github.com/extractbench/extractbench/results/compare"
)

// junitXSD is the JUnit schema the common reporters read (its source is
// noted inside it).
const junitXSD = "testdata/junit-10.xsd"

// TestJUnit_Schema validates what -junit writes against junit-10.xsd: a
// report of the sizing fixture (FAIL, PASS, a broken sweep level, paired
// verdicts), a real run of the built-in engine (FAIL at the baseline, the
// failed documents, a paired verdict), and a run of every state and of
// failure details that XML cannot carry as they are (control characters,
// "]]>", invalid UTF-8).
//
// No XSD validator in Go is both pure Go and kept up (the Go packages that
// exist wrap libxml2 through cgo), so xsdSchema below reads the schema file
// and checks the rules it uses: the root and every child a declared
// element, each content model (sequence, choice, minOccurs, maxOccurs),
// no undeclared attribute, every required one, SUREFIRE_TIME's pattern,
// and no text in element-only content. xmllint, when installed
// (libxml2-utils), validates the same files as well; that subtest skips
// without it.
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
		return ci.Level{Level: eval.Level{Variant: variant, Mode: "concurrency", Level: 1, Phase: eval.PhaseBaseline, Docs: 2, Accepted: 1,
			Verdict: eval.Verdict{Usable: usable, Reason: "accepted 50.0% < threshold 95.0%"}}, Name: "concurrency 1 (baseline)", Baseline: true, Seconds: 1.25,
			NFailed: 1, Failed: []ci.Doc{{ID: "d\x00\x1b1", Repetition: 1, Failure: eval.Format, Detail: "output ]]> \xff\xfe and \x07 bell"}}}
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

// xsdSchema is the part of XML Schema junit-10.xsd uses: global elements
// (a named complex type, an inline one, or xs:string), named complex and
// simple types, sequence and choice with occurrence bounds, element refs,
// attributes with use="required", and xs:pattern restrictions.
type xsdSchema struct {
	elements map[string]*xsdElement
	types    map[string]*xsdComplex
	patterns map[string]*regexp.Regexp // simple type name → its pattern, anchored
}

type xsdElement struct {
	name    string
	complex *xsdComplex // nil: text only (xs:string)
}

type xsdComplex struct {
	mixed   bool
	attrs   map[string]xsdAttr
	content *xsdParticle // nil: empty content
}

type xsdAttr struct {
	typ      string
	required bool
}

// xsdParticle is an element (ref or local), a sequence or a choice.
type xsdParticle struct {
	kind     string // element, sequence, choice
	name     string // element: the name it matches
	local    *xsdElement
	min, max int // max < 0: unbounded
	children []*xsdParticle
}

// xsdNode is the schema document read as a tree.
type xsdNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []xsdNode  `xml:",any"`
}

func (n xsdNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func loadXSD(t *testing.T, path string) *xsdSchema {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root xsdNode
	if err := xml.Unmarshal(raw, &root); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	s := &xsdSchema{elements: map[string]*xsdElement{}, types: map[string]*xsdComplex{}, patterns: map[string]*regexp.Regexp{}}
	for _, n := range root.Children {
		switch n.XMLName.Local {
		case "simpleType":
			for _, r := range n.Children {
				for _, p := range r.Children {
					if p.XMLName.Local == "pattern" {
						s.patterns[n.attr("name")] = regexp.MustCompile("^(?:" + p.attr("value") + ")$")
					}
				}
			}
		case "complexType":
			s.types[n.attr("name")] = s.complexOf(t, n)
		}
	}
	for _, n := range root.Children {
		if n.XMLName.Local == "element" {
			s.elements[n.attr("name")] = s.elementOf(t, n)
		}
	}
	return s
}

func (s *xsdSchema) elementOf(t *testing.T, n xsdNode) *xsdElement {
	e := &xsdElement{name: n.attr("name")}
	switch typ := n.attr("type"); {
	case typ == "xs:string":
	case typ != "":
		if s.types[typ] == nil {
			t.Fatalf("element %s: type %s is not declared", e.name, typ)
		}
		e.complex = s.types[typ]
	default:
		for _, c := range n.Children {
			if c.XMLName.Local == "complexType" {
				e.complex = s.complexOf(t, c)
			}
		}
		if e.complex == nil {
			t.Fatalf("element %s: neither a type nor a complexType", e.name)
		}
	}
	return e
}

func (s *xsdSchema) complexOf(t *testing.T, n xsdNode) *xsdComplex {
	c := &xsdComplex{mixed: n.attr("mixed") == "true", attrs: map[string]xsdAttr{}}
	for _, k := range n.Children {
		switch k.XMLName.Local {
		case "attribute":
			c.attrs[k.attr("name")] = xsdAttr{typ: k.attr("type"), required: k.attr("use") == "required"}
		case "sequence", "choice":
			c.content = s.particleOf(t, k)
		default:
			t.Fatalf("complexType: <%s> is beyond what this check reads", k.XMLName.Local)
		}
	}
	return c
}

func (s *xsdSchema) particleOf(t *testing.T, n xsdNode) *xsdParticle {
	p := &xsdParticle{kind: n.XMLName.Local, min: 1, max: 1}
	if v := n.attr("minOccurs"); v != "" {
		p.min, _ = strconv.Atoi(v)
	}
	switch v := n.attr("maxOccurs"); v {
	case "":
	case "unbounded":
		p.max = -1
	default:
		p.max, _ = strconv.Atoi(v)
	}
	switch p.kind {
	case "element":
		p.name = n.attr("ref")
		if p.name == "" {
			p.name = n.attr("name")
			p.local = s.elementOf(t, n)
		}
	case "sequence", "choice":
		for _, c := range n.Children {
			p.children = append(p.children, s.particleOf(t, c))
		}
	default:
		t.Fatalf("<%s> is beyond what this check reads", p.kind)
	}
	return p
}

// xmlElement is an instance document's element.
type xmlElement struct {
	name     string
	attrs    []xml.Attr
	text     string
	children []*xmlElement
}

func parseXML(data []byte) (*xmlElement, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	var stack []*xmlElement
	var root *xmlElement
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			e := &xmlElement{name: tk.Name.Local, attrs: tk.Attr}
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				top.children = append(top.children, e)
			} else {
				root = e
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(tk)
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("no root element")
	}
	return root, nil
}

// validate returns every problem of data against the schema.
func (s *xsdSchema) validate(data []byte) []string {
	root, err := parseXML(data)
	if err != nil {
		return []string{"not well-formed XML: " + err.Error()}
	}
	decl := s.elements[root.name]
	if decl == nil {
		return []string{fmt.Sprintf("root <%s> is not declared", root.name)}
	}
	var problems []string
	s.check(root, decl, &problems)
	return problems
}

func (s *xsdSchema) check(e *xmlElement, decl *xsdElement, problems *[]string) {
	add := func(format string, a ...any) { *problems = append(*problems, fmt.Sprintf(format, a...)) }
	if decl.complex == nil {
		if len(e.children) > 0 {
			add("<%s> is text only (xs:string) but has child elements", e.name)
		}
		if len(e.attrs) > 0 {
			add("<%s> is text only (xs:string) but has attributes", e.name)
		}
		return
	}
	c := decl.complex
	seen := map[string]bool{}
	for _, a := range e.attrs {
		seen[a.Name.Local] = true
		def, ok := c.attrs[a.Name.Local]
		if !ok {
			add("<%s>: attribute %q is not declared", e.name, a.Name.Local)
			continue
		}
		if re := s.patterns[def.typ]; re != nil && !re.MatchString(a.Value) {
			add("<%s> %s=%q does not match %s", e.name, a.Name.Local, a.Value, def.typ)
		}
	}
	for name, def := range c.attrs {
		if def.required && !seen[name] {
			add("<%s> lacks the required attribute %q", e.name, name)
		}
	}
	if !c.mixed && strings.TrimSpace(e.text) != "" {
		add("<%s> holds text, but its content is elements only", e.name)
	}
	names := make([]string, len(e.children))
	for i, k := range e.children {
		names[i] = k.name
	}
	ok := len(names) == 0
	if c.content != nil {
		ok = matchParticle(c.content, names, 0)[len(names)]
	}
	if !ok {
		add("<%s>'s children %v do not match its content model", e.name, names)
		return
	}
	for _, k := range e.children {
		kd := s.elements[k.name]
		if local := localDecl(c.content, k.name); local != nil {
			kd = local
		}
		if kd == nil {
			add("<%s> is not declared", k.name)
			continue
		}
		s.check(k, kd, problems)
	}
}

func localDecl(p *xsdParticle, name string) *xsdElement {
	if p == nil {
		return nil
	}
	if p.kind == "element" && p.name == name {
		return p.local
	}
	for _, c := range p.children {
		if d := localDecl(c, name); d != nil {
			return d
		}
	}
	return nil
}

// matchParticle returns the positions in names where p, started at i, can
// end (a set by position).
func matchParticle(p *xsdParticle, names []string, i int) map[int]bool {
	once := func(at int) map[int]bool {
		out := map[int]bool{}
		switch p.kind {
		case "element":
			if at < len(names) && names[at] == p.name {
				out[at+1] = true
			}
		case "sequence":
			cur := map[int]bool{at: true}
			for _, c := range p.children {
				next := map[int]bool{}
				for pos := range cur {
					for end := range matchParticle(c, names, pos) {
						next[end] = true
					}
				}
				cur = next
			}
			out = cur
		case "choice":
			for _, c := range p.children {
				for end := range matchParticle(c, names, at) {
					out[end] = true
				}
			}
		}
		return out
	}
	ends := map[int]bool{}
	if p.min == 0 {
		ends[i] = true
	}
	cur := map[int]bool{i: true}
	for n := 1; p.max < 0 || n <= p.max; n++ {
		next := map[int]bool{}
		for pos := range cur {
			for end := range once(pos) {
				if end > pos || n <= p.min { // a repetition that consumes nothing adds nothing past the minimum
					next[end] = true
				}
			}
		}
		if len(next) == 0 {
			break
		}
		if n >= p.min {
			for end := range next {
				ends[end] = true
			}
		}
		cur = next
		if n > len(names)+p.min { // every further repetition consumes nothing
			break
		}
	}
	return ends
}
