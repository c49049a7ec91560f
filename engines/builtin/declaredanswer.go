package builtin

import (
	"strconv"
	"strings"
	"time"
)

// declaredEdit is how a declared answer goes wrong: the fault model of the
// default answer (answerJSON, faultAnswer) carried over to any field set.
type declaredEdit struct {
	wrong    *prop // quality: this leaf answers a wrong value
	drop     bool  // format: the last top-level key is left out
	wrongTyp *prop // format: this leaf's value is written as another JSON type
	wrap     perturbation
}

// leaves returns d's scalar and list properties, depth first.
func (d *declared) leaves() []*prop {
	var out []*prop
	var walk func(ps []*prop)
	walk = func(ps []*prop) {
		for _, p := range ps {
			if p.kind == kindObject {
				walk(p.children)
				continue
			}
			out = append(out, p)
		}
	}
	walk(d.props)
	return out
}

// pickLeaf draws the leaf a perturbation of the document hash touches:
// among those with a value that ok accepts, the same one for every variant.
func (d *declared) pickLeaf(rd reading, hash, why string, ok func(*prop) bool) *prop {
	var cands []*prop
	for _, p := range d.leaves() {
		if (rd.vals[p] != "" || len(rd.items[p]) > 0) && ok(p) {
			cands = append(cands, p)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	return cands[int(unit("declared-leaf", why, hash)*float64(len(cands)))]
}

func anyLeaf(*prop) bool { return true }

// typeable reports whether p's value can be written as another JSON type
// that a schema refuses: a number, integer or boolean as a string.
func typeable(p *prop) bool {
	return !p.list && (p.kind == kindNumber || p.kind == kindInteger || p.kind == kindBoolean)
}

// declaredPerturbation turns a variant's perturbation into an edit of a
// declared answer: a quality perturbation makes one leaf wrong, the
// string amount writes one leaf as a string, the fence and the prose wrap.
func declaredPerturbation(d *declared, rd reading, hash string, p perturbation) declaredEdit {
	switch p {
	case perturbDate, perturbSubtotal, perturbCategory:
		return declaredEdit{wrong: d.pickLeaf(rd, hash, string(p), anyLeaf)}
	case perturbStringAmount:
		if l := d.pickLeaf(rd, hash, string(p), typeable); l != nil {
			return declaredEdit{wrongTyp: l}
		}
		return declaredEdit{wrap: perturbFence}
	case perturbFence, perturbProse:
		return declaredEdit{wrap: p}
	}
	return declaredEdit{}
}

// declaredFaultAnswer writes the answer of a document for a content fault:
// prose, a fence, a missing key, a wrong type, wrong values.
func declaredFaultAnswer(f Fault, d *declared, rd reading, hash string) string {
	switch f {
	case FaultGarbage:
		return declaredProse(d, rd)
	case FaultFence:
		return declaredJSON(d, rd, declaredEdit{wrap: perturbFence})
	case FaultMissingKey:
		return declaredJSON(d, rd, declaredEdit{drop: true})
	case FaultStringAmount:
		l := d.pickLeaf(rd, hash, string(f), typeable)
		if l == nil {
			return declaredJSON(d, rd, declaredEdit{drop: true}) // nothing to mistype: still a format failure
		}
		return declaredJSON(d, rd, declaredEdit{wrongTyp: l})
	case FaultWrongValue:
		l := d.pickLeaf(rd, hash, string(f), anyLeaf)
		if l == nil {
			l = d.leaves()[0] // every value null: answer one where null is right
		}
		return declaredJSON(d, rd, declaredEdit{wrong: l})
	}
	return declaredJSON(d, rd, declaredEdit{})
}

// declaredJSON writes the answer object in the schema's key order, with
// the spacing of answerJSON.
func declaredJSON(d *declared, rd reading, e declaredEdit) string {
	var b strings.Builder
	props := d.props
	if e.drop && len(props) > 1 {
		props = props[:len(props)-1]
	}
	writeObject(&b, props, rd, e)
	obj := b.String()
	switch e.wrap {
	case perturbFence:
		return "```json\n" + obj + "\n```"
	case perturbProse:
		return "Here is the extracted data:\n" + obj
	}
	return obj
}

func writeObject(b *strings.Builder, props []*prop, rd reading, e declaredEdit) {
	b.WriteByte('{')
	for i, p := range props {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(p.name))
		b.WriteString(": ")
		switch {
		case p.kind == kindObject:
			writeObject(b, p.children, rd, e)
		case p.list:
			b.WriteString(listJSON(p, rd.items[p], e.wrong == p))
		default:
			b.WriteString(scalarJSON(p, rd.vals[p], e.wrong == p, e.wrongTyp == p))
		}
	}
	b.WriteByte('}')
}

// listJSON writes a list; a wrong one misses its last item (or, empty,
// gains one).
func listJSON(p *prop, items []string, wrong bool) string {
	if items == nil && !wrong {
		return "null"
	}
	if wrong {
		if len(items) > 0 {
			items = items[:len(items)-1]
		} else {
			items = []string{wrongScalar(p, "")}
		}
	}
	return "[" + strings.Join(items, ", ") + "]"
}

// scalarJSON writes a leaf's value ("" is null), made wrong or written as a
// string when asked.
func scalarJSON(p *prop, v string, wrong, asString bool) string {
	if wrong {
		v = wrongScalar(p, v)
	}
	if v == "" {
		return "null"
	}
	if asString && !strings.HasPrefix(v, `"`) {
		return `"` + v + `"`
	}
	return v
}

// wrongScalar returns a plausible wrong value of p's kind for v (compact
// JSON; "" is null): a day late, a hundred more, the other boolean, the
// next enum value, the string with its last letter or digit misread.
func wrongScalar(p *prop, v string) string {
	switch p.kind {
	case kindDate:
		if s, err := strconv.Unquote(v); err == nil {
			if t, err := time.Parse(time.DateOnly, s); err == nil {
				return quote(t.AddDate(0, 0, 1).Format(time.DateOnly))
			}
		}
		return `"2025-01-01"`
	case kindNumber:
		c := Cents(10000)
		if as := findAmounts(v); len(as) > 0 {
			c += as[0].cents
		}
		return c.String()
	case kindInteger:
		n, _ := strconv.Atoi(v)
		return strconv.Itoa(n + 1)
	case kindBoolean:
		if v == "true" {
			return "false"
		}
		return "true"
	case kindEnum:
		if len(p.enum) == 0 {
			return `""`
		}
		for i, x := range p.enum {
			if quote(x) == v {
				return quote(p.enum[(i+1)%len(p.enum)])
			}
		}
		return quote(p.enum[0])
	}
	s, err := strconv.Unquote(v)
	if err != nil {
		return `"?"`
	}
	r := []rune(s)
	for i := len(r) - 1; i >= 0; i-- { // a misread character that no normalisation hides
		switch {
		case r[i] >= '0' && r[i] <= '9':
			r[i] = '0' + (r[i]-'0'+1)%10
		case r[i] >= 'a' && r[i] < 'z' || r[i] >= 'A' && r[i] < 'Z':
			r[i]++
		default:
			continue
		}
		return quote(string(r))
	}
	return quote(s + "?")
}

// declaredProse is a model ignoring the output format: a sentence, no JSON.
func declaredProse(d *declared, rd reading) string {
	var parts []string
	for _, p := range d.leaves() {
		switch {
		case rd.vals[p] != "":
			parts = append(parts, strings.ReplaceAll(p.name, "_", " ")+" "+strings.Trim(rd.vals[p], `"`))
		case len(rd.items[p]) > 0:
			parts = append(parts, strconv.Itoa(len(rd.items[p]))+" "+strings.ReplaceAll(p.name, "_", " "))
		}
	}
	if len(parts) == 0 {
		return "The document does not say."
	}
	return "Based on the document, " + strings.Join(parts, "; ") + "."
}
