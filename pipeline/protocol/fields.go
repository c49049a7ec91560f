package protocol

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// checkFields enforces what the schema cannot say of a protocol's
// fields: names and pointers unique, no pointer inside another field's
// value, and each option only where its type uses it (values for an enum,
// items for a list, formats for a date, tolerances and locale for a
// decimal, match and normalise for a string, order for a list).
func (p *Protocol) checkFields(doc *yaml.Node) []string {
	var problems []string
	at := func(path, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s:%d: %s: %s", p.Source, lineOf(doc, path), path, fmt.Sprintf(format, args...)))
	}
	names := map[string]int{}
	pointers := map[string]int{}
	for i, f := range p.Fields {
		key := func(k string) string { return fmt.Sprintf("fields.%d.%s", i, k) }
		if j, dup := names[f.Name]; dup {
			at(key("name"), "duplicate field name %q (fields.%d has it)", f.Name, j)
		} else {
			names[f.Name] = i
		}
		ptr := f.PointerOf()
		ptrKey := key("pointer")
		if f.Pointer == "" {
			ptrKey = key("name")
		}
		if _, err := eval.PointerTokens(ptr); err != nil {
			at(ptrKey, "%v", err)
		}
		if j, dup := pointers[ptr]; dup {
			at(ptrKey, "field %s answers at %s, as field %s does: give each field its own pointer", f.Name, ptr, p.Fields[j].Name)
		} else {
			pointers[ptr] = i
		}
		for j, g := range p.Fields[:i] {
			inner, outer := ptr, g.PointerOf()
			if strings.HasPrefix(outer, inner+"/") {
				inner, outer = outer, inner
			}
			if strings.HasPrefix(inner, outer+"/") {
				at(ptrKey, "%s lies inside %s, the value of field %s (fields.%d): a field's value is an object of other fields or a value, not both", inner, outer, g.Name, j)
			}
		}
		checkFieldOptions(f, fmt.Sprintf("fields.%d", i), at, false)
	}
	if len(p.Fields) > 0 && !p.defaultFieldNames() && p.Prompt.User == defaultPrompt().User {
		at("prompt.user", "the default prompt asks for date, amount and category, not the declared fields: write a prompt that names them (%s)", strings.Join(p.fieldNames(), ", "))
	}
	return problems
}

// defaultFieldNames reports whether the declared fields are the default
// ones by name, for which the default prompt is right.
func (p *Protocol) defaultFieldNames() bool {
	return slices.Equal(p.fieldNames(), extractbench.DefaultFieldNames)
}

func (p *Protocol) fieldNames() []string {
	names := make([]string, len(p.Fields))
	for i, f := range p.Fields {
		names[i] = f.Name
	}
	return names
}

// defaultPrompt is the embedded default protocol's prompt, which a
// minimal protocol takes.
func defaultPrompt() extractbench.Prompt {
	var d struct {
		Prompt extractbench.Prompt `yaml:"prompt"`
	}
	if err := yaml.Unmarshal(DefaultYAML, &d); err != nil {
		panic("embedded default protocol: " + err.Error()) // TestDefaultProtocol parses it
	}
	return d.Prompt
}

// checkFieldOptions checks one field's (or a list's item rule's) options
// against its type, reporting through at; item says f is a list's items.
func checkFieldOptions(f extractbench.Field, path string, at func(path, format string, args ...any), item bool) {
	only := func(set bool, k string, types ...extractbench.FieldType) {
		for _, t := range types {
			if f.Type == t {
				return
			}
		}
		if set {
			names := make([]string, len(types))
			for i, t := range types {
				names[i] = string(t)
			}
			at(path+"."+k, "only for type %s (this field's type is %s)", strings.Join(names, " or "), f.Type)
		}
	}
	only(f.Values != nil, "values", extractbench.FieldEnum)
	only(f.Items != nil, "items", extractbench.FieldList)
	only(f.Order != "", "order", extractbench.FieldList)
	only(f.Formats != nil, "formats", extractbench.FieldDate)
	only(f.AbsTolerance != "", "abs_tolerance", extractbench.FieldDecimal)
	only(f.RelTolerance != "", "rel_tolerance", extractbench.FieldDecimal)
	only(f.Locale != "", "locale", extractbench.FieldDecimal)
	only(f.Match != "", "match", extractbench.FieldString)
	only(f.Normalise != nil, "normalise", extractbench.FieldString)
	switch f.Type {
	case extractbench.FieldEnum:
		if len(f.Values) == 0 {
			at(path+".type", "an enum lists its values (values: [a, b])")
		}
	case extractbench.FieldList:
		if f.Items == nil {
			at(path+".type", "a list states its items' rule (items: {type: string})")
		}
	case extractbench.FieldDate:
		for k, layout := range f.Formats {
			if err := eval.CheckDateLayout(layout); err != nil {
				at(fmt.Sprintf("%s.formats.%d", path, k), "%v", err)
			}
		}
	case extractbench.FieldString:
		if f.Normalise != nil && f.Match != extractbench.MatchNormalised {
			at(path+".normalise", "only with match: normalised (an exact match normalises nothing)")
		}
	}
	if f.Missing == extractbench.MissingSkip && f.Required {
		at(path+".missing", "skip is for a null expectation, and a required field has none: drop one of the two")
	}
	if item {
		for _, k := range []struct {
			key string
			set bool
		}{{"name", f.Name != ""}, {"pointer", f.Pointer != ""}, {"missing", f.Missing != ""}, {"required", f.Required}} {
			if k.set {
				at(path+"."+k.key, "not for a list's items (the list field has it)")
			}
		}
	}
	if f.Items != nil {
		if f.Items.Type == extractbench.FieldList {
			at(path+".items.type", "a list's items are scalars (a list of lists is not scored)")
		} else {
			checkFieldOptions(*f.Items, path+".items", at, true)
		}
	}
}
