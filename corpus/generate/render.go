package generate

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// line is one billed line of a document.
type line struct {
	desc string
	qty  int
	unit int64 // cents
}

// doc is one document being generated: its facts, then its text.
type doc struct {
	r         *rand.Rand
	lang      Lang
	cat       string
	k         kind
	lab       Labels
	cur       string
	amtStyle  int
	dateStyle int
	lineStyle int

	issuer, customer, title, number, city string

	issue, due         time.Time
	hasDue             bool
	periodFrom, period time.Time
	catalog            []item // what this document's issuer bills for
	lines              []line
	used               map[string]bool // fillers a document carries at most once
	discount, fee, tax int64
	taxPct             int64 // tax as a percentage of the subtotal
	taxIncluded        bool
	previous           int64
	total              int64

	noDate, noAmount, credit bool
}

func (d *doc) pick(list []string) string { return list[d.r.IntN(len(list))] }

func (d *doc) between(min, max int64) int64 {
	if max <= min {
		return min
	}
	return min + d.r.Int64N(max-min+1)
}

// money writes an amount in the document's currency and style.
func (d *doc) money(cents int64) string { return formatAmount(d.cur, d.amtStyle, cents) }

// plain writes an amount in the document's locale without a currency sign,
// as item tables do.
func (d *doc) plain(cents int64) string {
	neg := ""
	if cents < 0 {
		neg, cents = "-", -cents
	}
	if d.cur == "BRL" || (d.cur == "EUR" && d.amtStyle%2 == 0) {
		return neg + number(cents, ".", ",")
	}
	return neg + number(cents, ",", ".")
}

func (d *doc) date(t time.Time) string { return formatDate(d.lang, d.dateStyle, t) }

// field writes one labelled value in the document's line style.
func (d *doc) field(label, value string) string {
	switch d.lineStyle % 4 {
	case 0:
		return label + ": " + value
	case 1:
		dots := 34 - len([]rune(label))
		if dots < 3 {
			dots = 3
		}
		return label + " " + strings.Repeat(".", dots) + " " + value
	case 2:
		pad := 30 - len([]rune(label))
		if pad < 2 {
			pad = 2
		}
		return label + strings.Repeat(" ", pad) + value
	default:
		return strings.ToUpper(label) + ": " + value
	}
}

func (d *doc) pt() bool { return d.lang == PT }

// header is the issuer block and the title.
func (d *doc) header() string {
	var b strings.Builder
	b.WriteString(d.issuer + "\n")
	if d.pt() {
		fmt.Fprintf(&b, "CNPJ: %02d.%03d.%03d/0001-%02d\n", d.r.IntN(100), d.r.IntN(1000), d.r.IntN(1000), d.r.IntN(100))
		fmt.Fprintf(&b, "%s, %d - %s\n", d.pick(streetsPT), 10+d.r.IntN(3000), d.city)
	} else {
		fmt.Fprintf(&b, "%d %s, %s\n", 10+d.r.IntN(9000), d.pick(streetsEN), d.city)
		if d.r.IntN(2) == 0 {
			fmt.Fprintf(&b, "Tax ID: %02d-%07d\n", d.r.IntN(100), d.r.IntN(10000000))
		}
	}
	title := d.title
	if d.credit {
		title = d.pick(d.lab.Credit)
	}
	b.WriteString("\n" + title)
	if d.pt() {
		fmt.Fprintf(&b, " Nº %s", d.number)
	} else {
		fmt.Fprintf(&b, " #%s", d.number)
	}
	return b.String()
}

// issueLine is the labelled issue date, or what stands for it when missing.
func (d *doc) issueLine() string {
	if d.noDate {
		if d.r.IntN(2) == 0 {
			return d.pick(d.lab.NoDate)
		}
		return ""
	}
	return d.field(d.pick(d.lab.IssueDate), d.date(d.issue))
}

// meta is the block of dates (issue, due, period, other) and references.
func (d *doc) meta(withIssue bool) string {
	var ls []string
	if withIssue {
		if l := d.issueLine(); l != "" {
			ls = append(ls, l)
		}
	}
	if d.k.period {
		from, to := d.date(d.periodFrom), d.date(d.period)
		sep := " a "
		if !d.pt() {
			sep = " to "
		}
		ls = append(ls, d.field(d.pick(d.lab.Period), from+sep+to))
	}
	if d.hasDue {
		ls = append(ls, d.field(d.pick(d.lab.DueDate), d.date(d.due)))
	}
	if others := otherDates[d.cat]; len(others) > 0 && d.r.IntN(3) == 0 {
		i := others[d.r.IntN(len(others))]
		other := d.issue.AddDate(0, 0, -1-d.r.IntN(20)) // readings, stays, services: before the issue
		if i == 1 || i == 2 {
			other = d.issue.AddDate(0, 0, 1+d.r.IntN(20)) // next reading, delivery: after it
		}
		label := d.lab.OtherDate[i]
		ls = append(ls, d.field(label, d.date(other)))
	}
	if d.r.IntN(2) == 0 {
		ls = append(ls, d.reference())
	}
	return strings.Join(ls, "\n")
}

// reference is an account or order reference line, so the date lines are
// not always the last lines of their block.
func (d *doc) reference() string {
	if d.pt() {
		return d.field(d.pick([]string{"Código do cliente", "Nº da instalação", "Pedido", "Protocolo"}), fmt.Sprint(100000+d.r.IntN(9000000)))
	}
	return d.field(d.pick([]string{"Account number", "Customer ID", "PO number", "Reference"}), fmt.Sprintf("%d-%04d", 1000+d.r.IntN(9000), d.r.IntN(10000)))
}

// parties is the customer block.
func (d *doc) parties() string {
	labels := []string{"Cliente", "Destinatário"}
	if !d.pt() {
		labels = []string{"Bill to", "Customer", "Sold to"}
	}
	if extra := partyLabels[d.cat]; extra != nil {
		labels = append(labels, extra[d.lang]...)
	}
	if d.pt() {
		return d.pick(labels) + ": " + d.customer +
			fmt.Sprintf("\nCPF/CNPJ: %03d.%03d.%03d-%02d", d.r.IntN(1000), d.r.IntN(1000), d.r.IntN(1000), d.r.IntN(100))
	}
	return d.pick(labels) + ": " + d.customer +
		fmt.Sprintf("\n%d %s, %s", 10+d.r.IntN(9000), d.pick(streetsEN), d.pick(citiesEN))
}

// itemTable writes lines as a table; without money it shows quantities only.
func (d *doc) itemTable(lines []line, money bool) string {
	var b strings.Builder
	switch {
	case d.pt() && money:
		b.WriteString("Descrição                                   Qtd   Vl. unit.     Vl. total\n")
	case d.pt():
		b.WriteString("Descrição                                   Qtd\n")
	case money:
		b.WriteString("Description                                 Qty   Unit price    Amount\n")
	default:
		b.WriteString("Description                                 Qty\n")
	}
	for i, l := range lines {
		desc := l.desc
		if len([]rune(desc)) < 42 {
			desc += strings.Repeat(" ", 42-len([]rune(desc)))
		}
		if money {
			fmt.Fprintf(&b, "%s  %3d   %10s  %11s", desc, l.qty, d.plain(l.unit), d.plain(int64(l.qty)*l.unit))
		} else {
			fmt.Fprintf(&b, "%s  %3d", desc, l.qty)
		}
		if i < len(lines)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func (d *doc) subtotal() int64 {
	var s int64
	for _, l := range d.lines {
		s += int64(l.qty) * l.unit
	}
	return s
}

// totals is the block with the decoy amounts and the total line.
func (d *doc) totals() string {
	if d.noAmount {
		return d.pick(d.lab.NoAmount)
	}
	var ls []string
	sub := d.subtotal()
	if len(d.lines) > 1 || d.discount > 0 || d.fee > 0 || (d.tax > 0 && !d.taxIncluded) {
		ls = append(ls, d.field(d.pick(d.lab.Subtotal), d.money(sub)))
	}
	if d.discount > 0 {
		ls = append(ls, d.field(d.pick(d.lab.Discount), "-"+d.money(d.discount)))
	}
	if d.fee > 0 {
		fees := feeLabels[d.cat]
		if len(fees) == 0 {
			fees = []int{2, 4}
		}
		ls = append(ls, d.field(d.lab.Fee[fees[d.r.IntN(len(fees))]], d.money(d.fee)))
	}
	if d.tax > 0 && !d.taxIncluded {
		ls = append(ls, d.field(d.pick(d.lab.Tax), d.money(d.tax)))
	}
	if d.previous > 0 {
		ls = append(ls, d.field(d.lab.Previous[0], d.money(d.previous)))
		ls = append(ls, d.field(d.lab.Previous[1], "-"+d.money(d.previous)))
	}
	ls = append(ls, d.field(d.pick(d.lab.Total), d.money(d.total)))
	if d.tax > 0 && d.taxIncluded {
		if d.pt() {
			ls = append(ls, fmt.Sprintf("Valor aproximado dos tributos: %s (Lei 12.741/2012)", d.money(d.tax)))
		} else {
			ls = append(ls, fmt.Sprintf("Includes %s of %s", d.money(d.tax), d.pick(d.lab.Tax)))
		}
	}
	return strings.Join(ls, "\n")
}

// footer is the payment instructions and a closing line.
func (d *doc) footer() string {
	if d.pt() {
		opts := []string{
			fmt.Sprintf("Linha digitável: %05d.%05d %05d.%06d %05d.%06d %d %014d", d.r.IntN(100000), d.r.IntN(100000), d.r.IntN(100000), d.r.IntN(1000000), d.r.IntN(100000), d.r.IntN(1000000), d.r.IntN(10), d.r.Int64N(1e14)),
			"Pagamento via PIX: chave " + fmt.Sprintf("%02d.%03d.%03d/0001-%02d", d.r.IntN(100), d.r.IntN(1000), d.r.IntN(1000), d.r.IntN(100)),
			"Documento emitido por ME ou EPP optante pelo Simples Nacional.",
			"Obrigado pela preferência! Volte sempre.",
			"Em caso de dúvidas, ligue 0800 " + fmt.Sprintf("%03d %04d", d.r.IntN(1000), d.r.IntN(10000)) + ".",
		}
		return opts[d.r.IntN(len(opts))]
	}
	opts := []string{
		"Please make checks payable to " + strings.TrimSuffix(d.issuer, ".") + ".",
		fmt.Sprintf("Pay online at www.%s.com/pay or call 1-800-%03d-%04d.", strings.ToLower(strings.Fields(d.issuer)[0]), d.r.IntN(1000), d.r.IntN(10000)),
		"Thank you for your business!",
		fmt.Sprintf("Wire transfer: ABA %09d, account %010d.", d.r.IntN(1e9), d.r.Int64N(1e10)),
		"Questions about this bill? Contact billing@" + strings.ToLower(strings.Trim(strings.Fields(d.issuer)[0], ".,&'")) + ".example",
	}
	return opts[d.r.IntN(len(opts))]
}

// closing states the issue date at the very end, as a signature line does.
func (d *doc) closing() string {
	if d.noDate {
		return ""
	}
	if d.pt() {
		return fmt.Sprintf("%s, %s.\n\n______________________________\n%s", d.city, d.date(d.issue), d.issuer)
	}
	return fmt.Sprintf("Issued on %s.\n\n______________________________\nAuthorized signature, %s", d.date(d.issue), d.issuer)
}

// finalTotal states the total due as the document's last line.
func (d *doc) finalTotal() string {
	if d.noAmount {
		return d.pick(d.lab.NoAmount)
	}
	return d.field(strings.ToUpper(d.pick(d.lab.Total)), d.money(d.total))
}

// partyLabels adds, per category, the names its documents give the customer.
var partyLabels = map[string]map[Lang][]string{
	"software":              {PT: {"Tomador do serviço"}},
	"professional_services": {PT: {"Tomador do serviço"}, EN: {"Client"}},
	"rent":                  {PT: {"Locatário"}, EN: {"Tenant"}},
	"healthcare":            {PT: {"Paciente"}, EN: {"Patient", "Guarantor"}},
	"travel":                {PT: {"Hóspede / Passageiro"}, EN: {"Guest", "Passenger"}},
}

// otherDates lists, per category, which OtherDate labels (by index, the same
// in both languages) fit its documents.
var otherDates = map[string][]int{
	"utilities":             {0, 1, 3},
	"telecom":               {3},
	"office_supplies":       {2},
	"travel":                {4, 5, 6, 8},
	"healthcare":            {7},
	"software":              {3},
	"rent":                  {3},
	"taxes":                 {3},
	"professional_services": {7, 3},
}

// feeLabels lists, per category, which Fee labels (by index) fit; others
// use the late fee and the processing charge.
var feeLabels = map[string][]int{
	"office_supplies": {0, 3},
	"meals":           {1, 3},
	"travel":          {1},
}

var (
	streetsPT = []string{"Av. Paulista", "Rua das Flores", "Rua XV de Novembro", "Av. Afonso Pena", "Rua Augusta", "Av. Brasil", "Rua Sete de Setembro", "Av. Beira Mar"}
	streetsEN = []string{"Main Street", "Oak Avenue", "Market St.", "Commerce Drive", "Elm Street", "Harbor Blvd.", "Park Lane", "Industrial Pkwy"}
	citiesPT  = []string{"São Paulo - SP", "Rio de Janeiro - RJ", "Belo Horizonte - MG", "Curitiba - PR", "Porto Alegre - RS", "Recife - PE", "Salvador - BA", "Campinas - SP"}
	citiesEN  = []string{"Springfield, IL 62701", "Portland, OR 97205", "Austin, TX 78701", "Columbus, OH 43215", "Denver, CO 80202", "Raleigh, NC 27601", "Madison, WI 53703"}
	peoplePT  = []string{"Mariana Souza Lima", "Carlos Eduardo Pereira", "Tech Soluções Digitais Ltda.", "Ana Paula Ribeiro", "Construtora Horizonte Ltda.", "Fernando Costa Alves", "Grupo Nova Era Comércio Ltda.", "Juliana Martins"}
	peopleEN  = []string{"Acme Analytics LLC", "Jordan Miller", "Blue River Logistics Inc.", "Sarah Thompson", "Northwind Traders", "David Chen", "Evergreen Design Studio", "Emily Rodriguez"}
)
