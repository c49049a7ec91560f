package purchaseorders

import (
	"fmt"
	"strings"

	"github.com/extractbench/extractbench/corpus"
)

// render writes the order's text in its length class: the blocks every
// order has, the long ones padded with terms and conditions up to a drawn
// target. A short order that comes out too long loses its buyer block,
// then lines.
func (o *order) render(class corpus.LengthClass) string {
	switch class {
	case corpus.Short:
		buyer := true
		for {
			text := o.join(o.blocks(buyer, false))
			if corpus.ApproxTokens(text) <= shortMax {
				return text
			}
			if buyer {
				buyer = false
				continue
			}
			if len(o.lines) == 1 {
				return text
			}
			o.lines = o.lines[:len(o.lines)-1]
		}
	case corpus.Usual:
		return o.padded(usualMin+o.r.IntN(usualMax-usualMin-300), usualMax)
	}
	return o.padded(longMin+o.r.IntN(longMax-longMin-400), longMax)
}

// padded writes the order with clauses of terms after its signature
// block until it holds at least target tokens, never more than max.
func (o *order) padded(target, max int) string {
	blocks := o.blocks(true, true)
	heading := o.t("CONDIÇÕES GERAIS DE FORNECIMENTO", "GENERAL TERMS AND CONDITIONS OF PURCHASE")
	blocks = append(blocks, heading)
	tokens := corpus.ApproxTokens(o.join(blocks))
	clauses := clausesEN
	if o.pt {
		clauses = clausesPT
	}
	for n := 1; tokens < target; n++ {
		c := clauses[o.r.IntN(len(clauses))]
		var b strings.Builder
		fmt.Fprintf(&b, "%d. %s", n, c.heading)
		perm := o.r.Perm(len(c.sentences))
		for _, i := range perm[:2+o.r.IntN(len(c.sentences)-1)] {
			b.WriteString("\n" + c.sentences[i])
		}
		t := corpus.ApproxTokens(b.String()) + 1
		if tokens+t > max {
			break
		}
		blocks = append(blocks, b.String())
		tokens += t
	}
	return o.join(blocks)
}

func (o *order) join(blocks []string) string {
	var keep []string
	for _, b := range blocks {
		if b = strings.TrimSpace(b); b != "" {
			keep = append(keep, b)
		}
	}
	return strings.Join(keep, "\n\n")
}

// blocks are the parts every order has: header, order data, supplier,
// buyer (optional), lines, totals, signature; notes on longer ones.
func (o *order) blocks(buyer, notes bool) []string {
	bs := []string{o.header(), o.meta(), o.supplierBlock()}
	if buyer {
		bs = append(bs, o.buyerBlock())
	}
	bs = append(bs, o.table(), o.totals())
	if notes {
		bs = append(bs, o.notes())
	}
	return append(bs, o.signature())
}

func (o *order) header() string {
	title := o.t("PEDIDO DE COMPRA", "PURCHASE ORDER")
	if o.r.IntN(2) == 0 {
		return o.buyer + "\n" + title
	}
	return title + "\n" + o.buyer
}

func (o *order) meta() string {
	var ls []string
	ls = append(ls, o.t(o.pick([]string{"Número do pedido", "Nº do pedido", "Pedido nº"}),
		o.pick([]string{"PO number", "Order number", "Order No."}))+": "+o.number)
	ls = append(ls, o.t(o.pick([]string{"Data do pedido", "Data de emissão do pedido"}),
		o.pick([]string{"Order date", "Date of order"}))+": "+o.dateText(o.date))
	switch {
	case o.hasDelivery:
		ls = append(ls, o.t(o.pick([]string{"Data de entrega", "Data prevista de entrega"}),
			o.pick([]string{"Delivery date", "Requested delivery date"}))+": "+o.dateText(o.delivery))
	case o.r.IntN(2) == 0:
		ls = append(ls, o.t("Data de entrega: a combinar", "Delivery date: to be agreed"))
	}
	ls = append(ls, o.t("Moeda", "Currency")+": "+o.currency)
	if o.r.IntN(2) == 0 {
		ls = append(ls, o.t("Condições de pagamento: 30 dias", "Payment terms: Net 30"))
	}
	return strings.Join(ls, "\n")
}

func (o *order) supplierBlock() string {
	name := o.supplier
	if o.upperSupplier {
		name = strings.ToUpper(name)
	}
	if o.stripAccents {
		name = stripMarks(name)
	}
	ls := []string{o.t(o.pick([]string{"Fornecedor", "Razão social do fornecedor"}), o.pick([]string{"Supplier", "Vendor"})) + ": " + name}
	taxLabel := o.t("CNPJ", "Tax ID")
	switch {
	case o.europe:
		taxLabel = "NIF"
	case !o.pt && o.r.IntN(3) == 0:
		taxLabel = "EIN"
	}
	switch {
	case o.taxID != "":
		ls = append(ls, taxLabel+": "+o.taxID)
	case o.r.IntN(2) == 0:
		ls = append(ls, taxLabel+": "+o.t("não informado", "not provided"))
	}
	ls = append(ls, o.t("Endereço", "Address")+": "+o.address())
	return strings.Join(ls, "\n")
}

func (o *order) address() string {
	if o.pt {
		return fmt.Sprintf("%s, %d - %s", o.pick(streetsPT), 10+o.r.IntN(2000), o.pick(citiesPT))
	}
	return fmt.Sprintf("%d %s, %s", 10+o.r.IntN(9000), o.pick(streetsEN), o.pick(citiesEN))
}

func (o *order) buyerBlock() string {
	return strings.Join([]string{
		o.t("Comprador", "Bill to") + ": " + o.buyer,
		o.t("Endereço de entrega", "Ship to") + ": " + o.address(),
		o.t("Contato", "Contact") + ": " + o.signer,
	}, "\n")
}

// table writes the lines under their label, SKU first, columns two
// spaces apart or more.
func (o *order) table() string {
	var b strings.Builder
	b.WriteString(o.t(o.pick([]string{"Itens do pedido", "Itens"}), o.pick([]string{"Line items", "Items"})) + ":\n")
	fmt.Fprintf(&b, "%-10s  %-44s %5s  %12s  %12s", o.t("Código", "SKU"), o.t("Descrição", "Description"),
		o.t("Qtd", "Qty"), o.t("Vl. unit.", "Unit price"), o.t("Vl. total", "Amount"))
	for _, l := range o.lines {
		fmt.Fprintf(&b, "\n%-10s  %-44s %5d  %12s  %12s", l.sku, l.desc, l.qty, o.num(l.unit), o.num(int64(l.qty)*l.unit))
	}
	return b.String()
}

func (o *order) totals() string {
	ls := []string{"Subtotal: " + o.money(o.subtotal())}
	if o.freight > 0 {
		ls = append(ls, o.t("Frete", "Freight")+": "+o.money(o.freight))
	}
	if o.taxPct > 0 {
		ls = append(ls, fmt.Sprintf("%s (%d%%): %s", o.t("IPI", "Sales tax"), o.taxPct, o.money(o.tax())))
	}
	label := o.t(o.pick([]string{"Total", "Valor total", "Total do pedido"}), o.pick([]string{"Total", "Order total", "Total amount"}))
	return strings.Join(append(ls, label+": "+o.money(o.total())), "\n")
}

// notes are free text a buyer adds; no colon, so no labelled line.
func (o *order) notes() string {
	if o.pt {
		return "Observações\nFavor mencionar o número do pedido na nota fiscal e no canhoto de entrega.\nMateriais sujeitos a inspeção no recebimento."
	}
	return "Notes\nPlease quote the order number on every invoice and packing slip.\nGoods are subject to inspection on receipt."
}

// signature says whether the order is signed, in one of the ways orders
// do: yes/no, the signer's name, a blank line, a pending approval.
func (o *order) signature() string {
	if o.signed {
		return o.t(o.pick([]string{"Assinado: sim", "Assinado por: " + o.signer, "Assinatura: " + o.signer + " (assinatura eletrônica)"}),
			o.pick([]string{"Signed: yes", "Signed by: " + o.signer, "Signature: " + o.signer + " (signed electronically)"}))
	}
	return o.t(o.pick([]string{"Assinado: não", "Assinatura: ______________________", "Assinado: pendente de aprovação"}),
		o.pick([]string{"Signed: no", "Signature: ______________________", "Signed: pending approval"}))
}
