package purchaseorders

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode"

	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/corpus/generate"
	"golang.org/x/text/unicode/norm"
)

// Token targets, inside corpus.ClassRange with a margin (as the default
// generator's).
const (
	shortMax = 280
	usualMin = 330
	usualMax = 1450
	longMin  = 5650
	longMax  = 7350
)

// line is one ordered line.
type line struct {
	sku, desc string
	qty       int
	unit      int64 // cents
}

// order is the facts of one purchase order, drawn before it is written.
type order struct {
	r                      *rand.Rand
	pt, europe             bool // europe: a Portuguese supplier, EUR and a NIF
	lang                   string
	number                 string
	supplier, taxID        string
	buyer, signer          string
	currency               string
	date, delivery         time.Time
	hasDelivery, signed    bool
	lines                  []line
	freight, taxPct        int64
	dateStyle, amountStyle int
	upperSupplier          bool // the order writes the supplier's name in capitals
	stripAccents           bool // ... and without accents
}

func (o *order) pick(xs []string) string { return xs[o.r.IntN(len(xs))] }

// newOrder draws the facts of one order.
func newOrder(r *rand.Rand, s spec) *order {
	o := &order{r: r, pt: s.pt, hasDelivery: !s.noDelivery, signed: !s.unsigned}
	o.dateStyle, o.amountStyle = r.IntN(4), r.IntN(3)
	year := 2023 + r.IntN(3)
	switch {
	case o.pt:
		o.lang = string(generate.PT)
		o.europe = r.IntN(5) == 0
		o.supplier = o.pick(supplierHeadsPT) + " " + o.pick(supplierCoresPT) + " " + o.pick(supplierTailsPT)
		o.buyer, o.signer = o.pick(buyersPT), o.pick(peoplePT)
		o.currency = "BRL"
		o.taxID = fmt.Sprintf("%02d.%03d.%03d/0001-%02d", r.IntN(100), r.IntN(1000), r.IntN(1000), r.IntN(100))
		if o.europe {
			o.currency, o.taxID = "EUR", fmt.Sprintf("5%08d", r.IntN(100_000_000))
		}
		o.number = fmt.Sprintf("PC-%d/%05d", year, r.IntN(100000))
		if r.IntN(2) == 0 {
			o.number = fmt.Sprintf("%d", 4500000000+r.IntN(999999))
		}
	default:
		o.lang = string(generate.EN)
		o.supplier = o.pick(supplierHeadsEN) + " " + o.pick(supplierCoresEN) + " " + o.pick(supplierTailsEN)
		o.buyer, o.signer = o.pick(buyersEN), o.pick(peopleEN)
		o.currency = "USD"
		if r.IntN(4) == 0 {
			o.currency = "EUR"
		}
		o.taxID = fmt.Sprintf("%02d-%07d", 10+r.IntN(90), r.IntN(10_000_000))
		o.number = fmt.Sprintf("PO-%d-%06d", year, r.IntN(1000000))
	}
	if s.noTaxID {
		o.taxID = ""
	}
	o.upperSupplier = r.IntN(4) == 0
	o.stripAccents = o.upperSupplier && r.IntN(2) == 0
	o.date = time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, r.IntN(365))
	o.delivery = o.date.AddDate(0, 0, 7+r.IntN(54))
	n := 1 + r.IntN(4)
	switch s.class {
	case corpus.Usual:
		n = 3 + r.IntN(10)
	case corpus.Long:
		n = 8 + r.IntN(13)
	}
	o.lines = o.makeLines(n)
	if r.IntN(2) == 0 {
		o.freight = int64(1000 + r.IntN(20000))
	}
	if r.IntN(3) == 0 {
		o.taxPct = int64(3 + r.IntN(15))
	}
	return o
}

// makeLines draws n lines with distinct SKUs: a prefix from the
// supplier's initials and a number.
func (o *order) makeLines(n int) []line {
	items := itemsEN
	if o.pt {
		items = itemsPT
	}
	prefix := initials(o.supplier)
	seen := map[string]bool{}
	ls := make([]line, 0, n)
	for len(ls) < n {
		it := items[o.r.IntN(len(items))]
		sku := fmt.Sprintf("%s-%05d", prefix, o.r.IntN(100000))
		if seen[sku] {
			continue
		}
		seen[sku] = true
		unit := it.min + o.r.Int64N(it.max-it.min+1)
		ls = append(ls, line{sku: sku, desc: it.desc, qty: 1 + o.r.IntN(24), unit: unit})
	}
	return ls
}

// initials are the capitals of a name's first two words: "NW" for
// Northwind Components, "MS" for Metalúrgica São João.
func initials(name string) string {
	var b strings.Builder
	for _, w := range strings.Fields(name)[:2] {
		r := []rune(stripMarks(w))
		b.WriteRune(unicode.ToUpper(r[0]))
		if len(r) > 1 {
			b.WriteRune(unicode.ToUpper(r[1]))
		}
	}
	return b.String()
}

// stripMarks drops accents: "São" → "Sao".
func stripMarks(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (o *order) subtotal() int64 {
	var s int64
	for _, l := range o.lines {
		s += int64(l.qty) * l.unit
	}
	return s
}

func (o *order) tax() int64 { return o.subtotal() * o.taxPct / 100 }

func (o *order) total() int64 { return o.subtotal() + o.freight + o.tax() }

// t picks the Portuguese or the English text.
func (o *order) t(pt, en string) string {
	if o.pt {
		return pt
	}
	return en
}

// dateText writes a date in one of the language's forms (all unambiguous).
func (o *order) dateText(d time.Time) string {
	day, m, y := d.Day(), int(d.Month()), d.Year()
	if o.pt {
		switch o.dateStyle {
		case 0:
			return fmt.Sprintf("%02d/%02d/%04d", day, m, y)
		case 1:
			return fmt.Sprintf("%d de %s de %d", day, generate.MonthsPT[m-1], y)
		case 2:
			return fmt.Sprintf("%02d.%02d.%04d", day, m, y)
		}
		return d.Format(time.DateOnly)
	}
	switch o.dateStyle {
	case 0:
		return fmt.Sprintf("%s %d, %d", generate.MonthsEN[m-1], day, y)
	case 1:
		return fmt.Sprintf("%d %s %d", day, generate.MonthsEN[m-1][:3], y)
	case 2:
		return fmt.Sprintf("%s %d, %d", generate.MonthsEN[m-1][:3], day, y)
	}
	return d.Format(time.DateOnly)
}

// num writes cents in the document's locale: 1.234,56 (pt) or 1,234.56.
func (o *order) num(cents int64) string {
	th, dec := ",", "."
	if o.pt {
		th, dec = ".", ","
	}
	s := fmt.Sprint(cents / 100)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(th)
		}
		b.WriteRune(c)
	}
	return fmt.Sprintf("%s%s%02d", b.String(), dec, cents%100)
}

// money writes an amount with the order's currency, in one of its forms.
func (o *order) money(cents int64) string {
	v := o.num(cents)
	switch o.currency {
	case "BRL":
		return "R$ " + v
	case "EUR":
		if o.pt || o.amountStyle == 0 {
			return v + " €"
		}
		return "EUR " + v
	}
	if o.amountStyle == 0 {
		return "$" + v
	}
	return "USD " + v
}
