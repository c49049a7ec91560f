package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// No XSD validator in Go is both pure Go and kept up: the Go packages that
// exist wrap libxml2 through cgo. This file reads the subset of XML Schema
// that testdata/junit-10.xsd is written in and validates against it (see
// TestJUnit_Schema; TestXSDSchema_Refuses shows that it refuses).

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
