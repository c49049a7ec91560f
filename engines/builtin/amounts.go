package builtin

import (
	"fmt"
	"regexp"
	"strings"
)

// Cents is an amount of money in hundredths, so that no float ever rounds it.
type Cents int64

// String writes c as a JSON number with two decimals: 1234.56, -80.00.
func (c Cents) String() string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// amountLabels maps the labels documents put before an amount to what the
// amount is. Only "total" amounts are answers; the others are decoys. Three
// total labels ("Total a pagar", "Amount payable", "Total to pay") are left
// out on purpose: a real model misreads some labels, and without them the
// extractor falls back on the largest amount, which is sometimes a previous
// balance or a subtotal before a discount. That keeps bf16 near 98% on the
// default corpus instead of a perfect score no model reaches.
var amountLabels = map[string]string{
	// Portuguese
	"valor total": "total", "valor a pagar": "total", "valor total da nota": "total",
	"total da nota": "total", "valor do documento": "total", "total": "total", "valor total do recibo": "total",
	"valor líquido a pagar": "total", "total geral": "total", "valor cobrado": "total", "total do recibo": "total",
	"subtotal": "subtotal", "valor dos produtos": "subtotal", "valor dos serviços": "subtotal",
	"total dos itens": "subtotal", "sub-total": "subtotal", "valor bruto": "subtotal",
	"icms": "tax", "iss": "tax", "impostos": "tax", "pis/cofins": "tax", "tributos": "tax",
	"valor aproximado dos tributos": "tax", "desconto": "discount", "descontos": "discount",
	"desconto concedido": "discount", "frete": "fee", "taxa de serviço": "fee", "juros e multa": "fee",
	"taxa de entrega": "fee", "encargos": "fee", "saldo anterior": "previous", "pagamento recebido": "previous",
	"valor pago na fatura anterior": "previous",
	// English
	"total due": "total", "amount due": "total", "balance due": "total", "grand total": "total",
	"total amount": "total", "amount": "total",
	"net amount": "subtotal", "items total": "subtotal",
	"tax": "tax", "vat": "tax", "sales tax": "tax", "gst": "tax", "taxes": "tax", "includes": "tax",
	"discount": "discount", "promotional discount": "discount", "credit applied": "discount",
	"shipping": "fee", "service charge": "fee", "late fee": "fee", "delivery fee": "fee", "processing fee": "fee",
	"previous balance": "previous", "payment received - thank you": "previous", "payment received": "previous",
	"last payment": "previous",
}

// amountNumber matches 1.234,56 / 1,234.56 / 1234,56 / 1234.56: the corpus
// always writes two decimals.
var amountNumber = regexp.MustCompile(`\d{1,3}(?:[.,]\d{3})+[.,]\d{2}|\d+[.,]\d{2}`)

// currencies are the signs and codes written before an amount, longest first.
var currencies = []string{"us$", "usd", "eur", "brl", "r$", "$", "€"}

// signAndCurrency reads back from the end of prefix (the text before a
// number) over a sign and a currency, in either order ("-R$ ", "R$ -",
// "(", "US$ "). It returns where the amount really starts and whether it is
// negative.
func signAndCurrency(prefix string) (start int, neg bool) {
	i := len(prefix)
	space := func() {
		if i > 0 && prefix[i-1] == ' ' {
			i--
		}
	}
	sign := func() bool {
		switch {
		case i > 0 && (prefix[i-1] == '-' || prefix[i-1] == '('):
			i--
			return true
		case strings.HasSuffix(prefix[:i], "−"):
			i -= len("−")
			return true
		}
		return false
	}
	start = i
	if sign() {
		neg, start = true, i
	}
	space()
	for _, c := range currencies {
		if i >= len(c) && strings.EqualFold(prefix[i-len(c):i], c) {
			i -= len(c)
			start = i
			space()
			if !neg && sign() {
				neg, start = true, i
			}
			return start, neg
		}
	}
	return start, neg
}

// foundAmount is one amount in a line.
type foundAmount struct {
	start int
	cents Cents
}

// findAmounts returns the amounts of a line, in order. A number glued to
// other digits or separators (a date, a tax id, a barcode) is not one.
func findAmounts(line string) []foundAmount {
	var out []foundAmount
	for _, m := range amountNumber.FindAllStringIndex(line, -1) {
		if m[0] > 0 && isNumChar(line[m[0]-1]) {
			continue
		}
		if m[1] < len(line) && (isDigit(line[m[1]]) || (m[1]+1 < len(line) && (line[m[1]] == '.' || line[m[1]] == ',' || line[m[1]] == '/') && isDigit(line[m[1]+1]))) {
			continue
		}
		var digits strings.Builder
		for _, c := range []byte(line[m[0]:m[1]]) {
			if isDigit(c) {
				digits.WriteByte(c)
			}
		}
		var v int64
		fmt.Sscan(digits.String(), &v)
		start, neg := signAndCurrency(line[:m[0]])
		if neg {
			v = -v
		}
		out = append(out, foundAmount{start: start, cents: Cents(v)})
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isNumChar(c byte) bool { return isDigit(c) || c == '.' || c == ',' || c == '/' }

// pickAmount returns the total due and the best decoy. The total is the
// last amount labelled as one (the total line comes after the subtotal
// block); a total label without an amount ("Total: a definir") means the
// total is missing; with no total label at all it takes the largest amount,
// as a model guessing would. A credit note's total is negative.
func pickAmount(lines []docLine, credit bool) (total, alt *Cents) {
	var largest, sub, other *Cents
	missing := false
	for _, l := range lines {
		amounts := findAmounts(l.text)
		if len(amounts) == 0 {
			if label := strings.ToLower(strings.TrimSpace(l.text)); isMissingTotal(label) {
				missing = true
			}
			continue
		}
		class := classify(labelBefore(l.text, amounts[0].start), amountLabels)
		v := amounts[0].cents
		switch class {
		case "total":
			if total == nil || *total != v {
				c := v
				total = &c
			}
		case "subtotal":
			if sub == nil {
				c := v
				sub = &c
			}
		case "tax", "fee":
			if other == nil || v > *other {
				c := v
				other = &c
			}
		}
		for _, a := range amounts {
			if largest == nil || abs(a.cents) > abs(*largest) {
				c := a.cents
				largest = &c
			}
		}
	}
	decoy := sub
	if decoy == nil {
		decoy = other
	}
	switch {
	case total != nil:
	case missing:
		return nil, decoy
	default:
		total = largest
	}
	if total != nil && credit && *total > 0 {
		c := -*total
		total = &c
	}
	if decoy == nil || (total != nil && *decoy == *total) {
		decoy = largest
		if decoy != nil && total != nil && *decoy == *total {
			decoy = nil
		}
	}
	if decoy != nil && credit && *decoy > 0 {
		c := -*decoy
		decoy = &c
	}
	return total, decoy
}

var missingTotal = regexp.MustCompile(`^(valor total|valor a pagar|total|amount due|amount|total due)\s*:\s*\D*$`)

// isMissingTotal recognises a total line that states no amount ("Total: to be confirmed").
func isMissingTotal(label string) bool { return missingTotal.MatchString(label) }

func abs(c Cents) Cents {
	if c < 0 {
		return -c
	}
	return c
}
