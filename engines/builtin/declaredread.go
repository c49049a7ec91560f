package builtin

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
)

// reading is what the engine read in a document for a declared field set:
// each leaf property's value as compact JSON ("" for null), a list's as
// its items.
type reading struct {
	vals  map[*prop]string
	items map[*prop][]string
}

// labelWordMap turns the words of a label, Portuguese or English, into
// canonical English ones, as a bilingual model reads "Número do pedido"
// as "order number"; a word mapped to "" is dropped. Words not listed are
// kept as written.
var labelWordMap = map[string][]string{
	// Portuguese
	"número": {"number"}, "numero": {"number"}, "nº": {"number"}, "n°": {"number"},
	"pedido": {"order"}, "ordem": {"order"}, "compra": {"purchase"}, "data": {"date"},
	"entrega": {"delivery"}, "fornecedor": {"supplier"}, "comprador": {"buyer"},
	"cnpj": {"tax", "id"}, "nif": {"tax", "id"}, "cpf": {"tax", "id"}, "moeda": {"currency"},
	"itens": {"line"}, "linhas": {"line"}, "linha": {"line"}, "assinado": {"signed"}, "assinatura": {"signed"},
	"valor": {"amount"}, "nome": {"name"}, "razão": {"name"}, "social": {}, "emissão": {"issue"},
	"imposto": {"tax"}, "impostos": {"tax"}, "frete": {"shipping"}, "pagamento": {"payment"},
	"condições": {"terms"}, "prazo": {"term"}, "identificação": {"id"}, "fiscal": {"tax"},
	// English
	"items": {"line"}, "item": {"line"}, "lines": {"line"}, "signature": {"signed"}, "ein": {"tax", "id"},
	"identification": {"id"}, "no": {"number"}, "po": {"order", "number"}, "vendor": {"supplier"}, "vat": {"tax"},
	// Words that never decide (articles, prepositions)
	"de": {}, "do": {}, "da": {}, "dos": {}, "das": {}, "e": {}, "o": {}, "a": {}, "em": {}, "por": {},
	"the": {}, "of": {}, "by": {}, "and": {}, "for": {},
}

// labelWords returns the canonical words of a label or a property name:
// lower case, split on what is not a letter or digit, translated by
// labelWordMap, a plural's final "s" dropped.
func labelWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != 'º' && r != '°'
	}) {
		ws, ok := labelWordMap[w]
		if !ok {
			ws = []string{strings.TrimSuffix(w, "s")}
			if len(w) <= 3 {
				ws = []string{w}
			}
		}
		for _, x := range ws {
			if !hasWord(out, x) {
				out = append(out, x)
			}
		}
	}
	return out
}

func hasWord(ws []string, w string) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

// labelledLine is one "Label: value" line of a document.
type labelledLine struct {
	index int      // its line number among the document's lines
	words []string // the label's canonical words
	value string   // what follows the colon, trimmed
}

// labelledLines returns the document's "Label: value" lines: a short
// label (at most six words) before the line's first colon.
func labelledLines(lines []string) []labelledLine {
	var out []labelledLine
	for i, l := range lines {
		label, value, ok := strings.Cut(l, ":")
		if !ok || len(strings.Fields(label)) > 6 || strings.TrimSpace(label) == "" {
			continue
		}
		ws := labelWords(label)
		if len(ws) == 0 {
			continue
		}
		out = append(out, labelledLine{index: i, words: ws, value: strings.TrimSpace(value)})
	}
	return out
}

// labelFor returns the line whose label is p's: it says every word of
// p's own name (or, when the name is generic, one word of its path), and
// among those it says most of the path's words and fewest others; the
// first such line wins. ok is false when no label is p's.
func labelFor(p *prop, ls []labelledLine) (labelledLine, bool) {
	var best labelledLine
	bestHit, bestExtra := 0, 0
	for _, l := range ls {
		hit := 0
		for _, w := range p.words {
			if hasWord(l.words, w) {
				hit++
			}
		}
		all := true
		for _, w := range p.own {
			all = all && hasWord(l.words, w)
		}
		if !all || hit == 0 {
			continue
		}
		extra := len(l.words) - hit
		if hit > bestHit || hit == bestHit && extra < bestExtra {
			best, bestHit, bestExtra = l, hit, extra
		}
	}
	return best, bestHit > 0
}

// readDeclared reads every leaf of d in a document.
func readDeclared(doc string, d *declared) reading {
	raw := strings.Split(doc, "\n")
	ls := labelledLines(raw)
	en := isEnglish(doc)
	rd := reading{vals: map[*prop]string{}, items: map[*prop][]string{}}
	var walk func(ps []*prop)
	walk = func(ps []*prop) {
		for _, p := range ps {
			if p.kind == kindObject {
				walk(p.children)
				continue
			}
			l, ok := labelFor(p, ls)
			if !ok {
				continue
			}
			if p.list {
				rd.items[p] = readItems(p, raw, l)
				continue
			}
			rd.vals[p] = readValue(p, l.value, en)
		}
	}
	walk(d.props)
	return rd
}

// readItems reads a list: the label's own value split on commas or
// semicolons, or, when the label stands alone, the table under it (the
// rows up to a blank line, a header row without digits skipped), one item
// a row from its first column.
func readItems(p *prop, raw []string, l labelledLine) []string {
	var cells []string
	if l.value != "" {
		for _, c := range strings.FieldsFunc(l.value, func(r rune) bool { return r == ',' || r == ';' }) {
			cells = append(cells, strings.TrimSpace(c))
		}
	} else {
		for _, row := range raw[l.index+1:] {
			if strings.TrimSpace(row) == "" {
				break
			}
			if !strings.ContainsAny(row, "0123456789") {
				continue
			}
			first, _, _ := strings.Cut(strings.TrimSpace(row), "  ")
			cells = append(cells, strings.TrimSpace(first))
		}
	}
	items := []string{}
	for _, c := range cells {
		if v := readValue(p, c, true); v != "" {
			items = append(items, v)
		}
	}
	return items
}

// readValue reads one value of p's kind as compact JSON; "" when the text
// holds none (blank, "____", or not of the kind).
func readValue(p *prop, text string, en bool) string {
	text = strings.TrimSpace(text)
	if text == "" || strings.Trim(text, "_-—. ") == "" || notGiven[strings.ToLower(strings.Trim(text, "()"))] {
		if p.kind == kindBoolean {
			return "false" // a signature line left blank: not signed
		}
		return ""
	}
	switch p.kind {
	case kindDate:
		if ds := findDates(text, en); len(ds) > 0 {
			return quote(ds[0].iso)
		}
	case kindNumber:
		if as := findAmounts(text); len(as) > 0 {
			return as[0].cents.String()
		}
		if n, err := strconv.ParseFloat(strings.Fields(text)[0], 64); err == nil {
			return strconv.FormatFloat(n, 'f', -1, 64)
		}
	case kindInteger:
		digits := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, strings.Fields(text)[0])
		if n, err := strconv.Atoi(digits); err == nil {
			return strconv.Itoa(n)
		}
	case kindBoolean:
		return readBoolean(text)
	case kindEnum:
		return readEnum(p.enum, text)
	default:
		return quote(text)
	}
	return ""
}

// notGiven are the values that say a label's value is not given.
var notGiven = map[string]bool{"n/a": true, "none": true, "not provided": true, "not stated": true, "to be agreed": true,
	"não informado": true, "nao informado": true, "a combinar": true, "não consta": true}

// noWords, first in a boolean's text, say no; any other text ("yes", a
// signer's name) says yes.
var noWords = map[string]bool{"no": true, "não": true, "nao": true, "false": true, "n": true, "pending": true, "pendente": true, "unsigned": true}

func readBoolean(text string) string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) })
	if len(words) > 0 && noWords[words[0]] {
		return "false"
	}
	return "true"
}

// currencySigns are the signs a model reads as an ISO currency code.
var currencySigns = []struct{ sign, code string }{{"R$", "BRL"}, {"US$", "USD"}, {"€", "EUR"}, {"$", "USD"}, {"£", "GBP"}}

// readEnum returns the first of values the text says (as a whole word,
// any case), or that a currency sign in it stands for.
func readEnum(values []string, text string) string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' })
	for _, w := range words {
		for _, v := range values {
			if strings.ToLower(v) == w {
				return quote(v)
			}
		}
	}
	for _, cs := range currencySigns {
		if strings.Contains(text, cs.sign) && hasWord(values, cs.code) {
			return quote(cs.code)
		}
	}
	return ""
}

// quote writes s as a JSON string, without HTML escaping.
func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
