// Package generate writes extractbench's default corpus deterministically:
// Brazilian Portuguese and English business documents (notas fiscais,
// invoices, receipts, boletos, utility and telecom bills, rent receipts,
// SaaS invoices, travel and restaurant receipts, medical bills, tax slips)
// with their reviewed expectations, in three length classes. The same seed
// always gives the same bytes, so the committed corpus/default can be proved
// equal to the generator's output.
package generate

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/extractbench/extractbench/corpus"
)

// DefaultSeed is the seed corpus/default was generated with.
const DefaultSeed int64 = 1

// Class sizes of the default corpus.
const (
	ShortCount = 100
	UsualCount = 150
	LongCount  = 50
)

// DefaultCount is the size of the default corpus; MaxCount the largest
// GenerateN writes (a corpus is held in memory while it is written, about
// 5.5 KB a document).
const (
	DefaultCount = ShortCount + UsualCount + LongCount
	MaxCount     = 100_000
)

// Counts of documents that legitimately lack a field, and of credit notes.
const (
	NoDateCount   = 14 // issue date missing (some still show a due date as a decoy)
	NoAmountCount = 14 // total missing
	NoBothCount   = 2  // both missing
	CreditCount   = 6  // credit notes: negative totals
)

// Token targets, inside corpus.ClassRange with a margin so that a future
// tweak of the estimate does not move a document out of its class.
const (
	shortMax = 280
	usualMin = 330
	usualMax = 1450
	longMin  = 5650
	longMax  = 7350
)

// spec is what the plan decides for one document before it is written.
type spec struct {
	class                    corpus.LengthClass
	cat                      string
	lang                     Lang
	noDate, noAmount, credit bool
}

// share is n × of / DefaultCount, rounded: a count of the default corpus
// scaled to a corpus of n documents.
func share(n, of int) int { return (n*of + DefaultCount/2) / DefaultCount }

// plan assigns classes, categories, languages and the missing fields for n
// documents, in the default corpus's proportions (a third short, half
// usual, a sixth long; about 10% lacking a field, 2% credit notes), each
// class spread evenly over the categories, in a shuffled order. For
// DefaultCount it is the default corpus's plan: every category gets 10
// short, 15 usual and 5 long documents.
func plan(r *rand.Rand, n int) []spec {
	var specs []spec
	cats := corpus.DefaultCategories
	short, long := share(n, ShortCount), share(n, LongCount)
	usual := n - short - long
	per := func(count, c int) int { // category c's part of a class of count documents
		k := count / len(cats)
		if c < count%len(cats) {
			k++
		}
		return k
	}
	for c, cat := range cats {
		for range per(short, c) {
			specs = append(specs, spec{class: corpus.Short, cat: cat})
		}
		for range per(usual, c) {
			specs = append(specs, spec{class: corpus.Usual, cat: cat})
		}
		for range per(long, c) {
			specs = append(specs, spec{class: corpus.Long, cat: cat})
		}
	}
	r.Shuffle(len(specs), func(i, j int) { specs[i], specs[j] = specs[j], specs[i] })
	for i := range specs {
		specs[i].lang = EN
		if r.IntN(100) < 55 {
			specs[i].lang = PT
		}
	}
	// The missing fields and credit notes go to distinct documents, drawn
	// from a second shuffle so they spread over classes and categories.
	order := r.Perm(len(specs))
	noDate, noAmount, noBoth, credits := share(n, NoDateCount), share(n, NoAmountCount), share(n, NoBothCount), share(n, CreditCount)
	k := 0
	for ; k < min(noDate, n); k++ {
		specs[order[k]].noDate = true
	}
	for ; k < min(noDate+noAmount, n); k++ {
		specs[order[k]].noAmount = true
	}
	for ; k < min(noDate+noAmount+noBoth, n); k++ {
		specs[order[k]].noDate, specs[order[k]].noAmount = true, true
	}
	for made := 0; made < credits && k < n; k++ {
		if s := &specs[order[k]]; s.cat != "taxes" && s.cat != "rent" {
			s.credit = true
			made++
		}
	}
	return specs
}

// Generate returns the default corpus for seed: DefaultCount documents
// with ids doc-0001, doc-0002, ... (GenerateN).
func Generate(seed int64) []corpus.Document {
	docs, _ := GenerateN(seed, DefaultCount)
	return docs
}

// GenerateN returns a corpus of n documents for seed, in the default
// corpus's proportions of length classes, categories and missing fields
// (plan), with ids doc-0001 ... (more digits from 10,000 documents on); for
// DefaultCount it is the default corpus. The same seed and n always give the
// same bytes. Each document draws from its own random stream (seed, index),
// so changing how one is written does not change the others.
func GenerateN(seed int64, n int) ([]corpus.Document, error) {
	if n < 1 || n > MaxCount {
		return nil, fmt.Errorf("generate %d documents: want 1 to %d", n, MaxCount)
	}
	specs := plan(rand.New(rand.NewPCG(uint64(seed), 0x9E3779B97F4A7C15)), n)
	width := max(4, len(fmt.Sprint(n)))
	docs := make([]corpus.Document, len(specs))
	for i, s := range specs {
		r := rand.New(rand.NewPCG(uint64(seed), uint64(i+1)))
		docs[i] = build(r, s)
		docs[i].ID = fmt.Sprintf("doc-%0*d", width, i+1)
	}
	return docs, nil
}

// WriteDir writes the default corpus for seed into dir as documents.jsonl
// and manifest.json, creating dir if needed.
func WriteDir(dir string, seed int64) error { return WriteDirN(dir, seed, DefaultCount) }

// WriteDirN writes a corpus of n documents for seed (GenerateN) into dir.
func WriteDirN(dir string, seed int64, n int) error {
	docs, err := GenerateN(seed, n)
	if err != nil {
		return err
	}
	if err := corpus.WriteDir(dir, docs, corpus.DefaultCategories); err != nil {
		return fmt.Errorf("write generated corpus (seed %d, %d documents): %w", seed, n, err)
	}
	return nil
}

// build writes one document.
func build(r *rand.Rand, s spec) corpus.Document {
	d := newDoc(r, s)
	var text string
	switch s.class {
	case corpus.Short:
		text = d.short()
	case corpus.Usual:
		text = d.sized(usualMin+r.IntN(usualMax-usualMin-200), usualMax, []int{0, 1, 2, 3, 5})
	default:
		text = d.sized(longMin+r.IntN(longMax-longMin-300), longMax, []int{0, 1, 2, 3, 4, 5})
	}
	cat := s.cat
	doc := corpus.Document{Text: text, LengthClass: s.class, Expected: corpus.Expected{Category: &cat}}
	if !s.noDate {
		v := d.issue.Format("2006-01-02")
		doc.Expected.Date = &v
	}
	if !s.noAmount {
		v := decimalString(d.total)
		doc.Expected.Amount = &v
	}
	return doc
}

// newDoc draws the facts of a document: parties, dates, lines and amounts.
func newDoc(r *rand.Rand, s spec) *doc {
	d := &doc{r: r, lang: s.lang, cat: s.cat, k: kinds[s.cat][s.lang], lab: Vocab[s.lang],
		noDate: s.noDate, noAmount: s.noAmount, credit: s.credit}
	d.cur = "BRL"
	if d.lang == EN {
		d.cur = "USD"
		if (s.cat == "software" || s.cat == "travel" || s.cat == "professional_services") && r.IntN(4) == 0 {
			d.cur = "EUR"
		}
	}
	d.amtStyle, d.dateStyle, d.lineStyle = r.IntN(20), r.IntN(6), r.IntN(4)
	j := r.IntN(len(d.k.titles))
	d.title, d.issuer, d.catalog = d.k.titles[j], d.pick(d.k.issuers), d.k.items
	if d.k.sets != nil {
		d.issuer = d.k.issuers[j%len(d.k.issuers)]
		d.catalog = nil
		for _, i := range d.k.sets[j] {
			d.catalog = append(d.catalog, d.k.items[i])
		}
	}
	if d.pt() {
		d.city, d.customer = d.pick(citiesPT), d.pick(peoplePT)
	} else {
		d.city, d.customer = d.pick(citiesEN), d.pick(peopleEN)
	}
	d.number = fmt.Sprintf("%d", 1000+r.IntN(999000))
	base := time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	d.issue = base.AddDate(0, 0, r.IntN(3*365))
	d.hasDue = (r.Float64() < d.k.dueProb || (s.noDate && r.IntN(2) == 0)) && !s.credit
	d.due = d.issue.AddDate(0, 0, 5+r.IntN(26))
	d.period = d.issue.AddDate(0, 0, -1-r.IntN(10))
	d.periodFrom = d.period.AddDate(0, -1, 1)

	n := 1 + r.IntN(3)
	switch {
	case s.class == corpus.Usual:
		n = 2 + r.IntN(9)
	case s.class == corpus.Long && (d.k.pad == "items" || d.k.pad == "folio"):
		n = 25 + r.IntN(45)
	case s.class == corpus.Long:
		n = 3 + r.IntN(8)
	}
	if s.class != corpus.Long && n > len(d.catalog) {
		n = len(d.catalog)
	}
	d.lines = d.makeLines(n)
	sub := d.subtotal()
	if r.IntN(5) == 0 && s.class != corpus.Short {
		d.discount = sub * int64(3+r.IntN(8)) / 100
	}
	if r.IntN(5) == 0 {
		d.fee = d.between(300, 5000)
	}
	if r.IntN(5) < 3 {
		d.taxIncluded = d.pt() || r.IntN(3) == 0
		d.taxPct = int64(5 + r.IntN(20))
	}
	if (s.cat == "utilities" || s.cat == "telecom") && s.class != corpus.Short && r.IntN(5) < 2 {
		d.previous = d.between(5000, 50000)
	}
	d.recompute()
	return d
}

// makeLines draws n billed lines from the kind's catalogue. Long lists get
// references (or, on hotel folios, the night's date) so lines differ.
func (d *doc) makeLines(n int) []line {
	ls := make([]line, n)
	perm := d.r.Perm(len(d.catalog))
	for i := range ls {
		it := d.catalog[d.r.IntN(len(d.catalog))]
		if n <= len(d.catalog) {
			it = d.catalog[perm[i]] // few lines: each item once
		}
		desc := it.desc
		switch {
		case d.k.pad == "folio" && n > len(d.catalog):
			night := d.issue.AddDate(0, 0, i-n)
			desc = fmt.Sprintf("%02d/%02d %s", night.Day(), int(night.Month()), desc)
			if !d.pt() {
				desc = fmt.Sprintf("%02d/%02d %s", int(night.Month()), night.Day(), it.desc)
			}
		case n > len(d.catalog):
			desc = fmt.Sprintf("%s - ref. %05d", desc, d.r.IntN(100000))
		}
		qty := 1
		if it.maxQty > 1 {
			qty = 1 + d.r.IntN(it.maxQty)
		}
		ls[i] = line{desc: desc, qty: qty, unit: d.between(it.min, it.max)}
	}
	return ls
}

// short writes a receipt-sized document: when it comes out too long it
// loses, in turn, its footer, its customer block, billed lines and the
// decoy dates.
func (d *doc) short() string {
	parties, footer := d.r.IntN(2) == 0, d.r.IntN(2) == 0
	meta, compact := d.meta(true), false
	for {
		blocks := []string{d.header(), meta}
		if parties {
			blocks = append(blocks, d.parties())
		}
		blocks = append(blocks, d.itemTable(d.lines, !d.noAmount), d.totals())
		if footer {
			blocks = append(blocks, d.footer())
		}
		text := join(blocks)
		if corpus.ApproxTokens(text) <= shortMax {
			return text
		}
		switch {
		case footer:
			footer = false
		case parties:
			parties = false
		case len(d.lines) > 1:
			d.shrink()
		case !compact:
			meta, compact = d.issueLine(), true
		default:
			return text
		}
	}
}

// shrink drops the last billed line and the discount, keeping the total
// consistent with what is printed.
func (d *doc) shrink() {
	d.lines = d.lines[:len(d.lines)-1]
	d.discount = 0
	d.recompute()
}

// recompute sets tax and total from the lines, discount, fee and tax rate.
func (d *doc) recompute() {
	sub := d.subtotal()
	d.tax = sub * d.taxPct / 100
	d.total = sub - d.discount + d.fee
	if !d.taxIncluded {
		d.total += d.tax
	}
	if d.credit {
		d.total = -d.total
	}
}

// skeletons are the layouts of usual and long documents: where the key
// blocks go. H header, M meta with the issue date, m meta without it, P
// parties, I items, T totals, F footer, C closing (the issue date at the
// very end), Z the total as the very last line, _ a place for fillers.
var skeletons = []string{
	"HMP_IT_F",
	"HMTP_I_F",
	"HMPI_FT",
	"HmP_IT_C",
	"HmPI_FCZ",
	"H_MPI_T_F",
}

// sized writes a document of at least target and at most max tokens, with
// the layout drawn from the given skeletons.
func (d *doc) sized(target, max int, layouts []int) string {
	skel := skeletons[layouts[d.r.IntN(len(layouts))]]
	if d.noAmount && strings.ContainsAny(skel, "Z") {
		skel = skeletons[0]
	}
	key := map[byte]string{
		'H': d.header(), 'M': d.meta(true), 'm': d.meta(false), 'P': d.parties(),
		'I': d.itemTable(d.lines, !d.noAmount), 'T': d.totals(), 'F': d.footer(),
		'C': d.closing(), 'Z': d.finalTotal(),
	}
	tokens := 0
	slots := 0
	for i := 0; i < len(skel); i++ {
		if skel[i] == '_' {
			slots++
			continue
		}
		tokens += corpus.ApproxTokens(key[skel[i]]) + 1
	}
	fill := make([][]string, slots)
	for tokens < target {
		f := d.filler(!d.noAmount)
		t := corpus.ApproxTokens(f) + 1
		if tokens+t > max {
			continue
		}
		s := d.r.IntN(slots)
		fill[s] = append(fill[s], f)
		tokens += t
	}
	var blocks []string
	slot := 0
	for i := 0; i < len(skel); i++ {
		if skel[i] == '_' {
			blocks = append(blocks, fill[slot]...)
			slot++
			continue
		}
		blocks = append(blocks, key[skel[i]])
	}
	return join(blocks)
}

// join separates blocks by a blank line, leaving out empty ones.
func join(blocks []string) string {
	var keep []string
	for _, b := range blocks {
		if b = strings.TrimSpace(b); b != "" {
			keep = append(keep, b)
		}
	}
	return strings.Join(keep, "\n\n")
}
