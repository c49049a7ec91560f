package builtin

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func str(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}

func cents(p *Cents) string {
	if p == nil {
		return "null"
	}
	return p.String()
}

func TestExtract_Dates(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"pt dd/mm/yyyy", "Data de emissão: 12/03/2025\nVencimento: 20/03/2025", "2025-03-12"},
		{"pt long", "Emitido em: 12 de março de 2025", "2025-03-12"},
		{"iso", "Data: 2025-03-12", "2025-03-12"},
		{"pt dotted", "Data do documento ........ 02.11.2024", "2024-11-02"},
		{"pt two-digit year", "DATA DA EMISSÃO: 05/01/24", "2024-01-05"},
		{"pt abbreviated", "Data do recibo: 12-dez-2025", "2025-12-12"},
		{"en long", "Invoice date: March 12, 2025", "2025-03-12"},
		{"en dd-Mon-yy", "Date of issue: 12-Mar-25", "2025-03-12"},
		{"en Mon d, yyyy", "Issued: Sep 3, 2024", "2024-09-03"},
		{"en d Month yyyy", "Statement date       3 September 2024", "2024-09-03"},
		{"en mm/dd/yyyy", "Bill date: 03/15/2025", "2025-03-15"},
		{"en ambiguous reads month first", "Receipt date: 03/04/2025\nThank you for the payment, the invoice is due.", "2025-03-04"},
		{"due date first is a decoy", "Due date: April 11, 2025\nInvoice date: March 12, 2025", "2025-03-12"},
		{"period and due are decoys", "Período de referência: 01/02/2025 a 28/02/2025\nVencimento: 10/03/2025\nEmissão: 01/03/2025", "2025-03-01"},
		{"payment history rows are decoys", "Documento 123  R$ 10,00  pago em 11/08/2024\nEmitido em: 28/08/2024", "2024-08-28"},
		{"signature line", "Pagar até: 06/02/2024\nRio de Janeiro - RJ, 15/01/2024.", "2024-01-15"},
		{"issued on closing", "Due: May 1, 2025\nIssued on 12 March 2025.", "2025-03-12"},
		{"table rows are not dates", "24-out-2025  1,5 h    Atendimento\nCuritiba - PR, 11-dez-2025.", "2025-12-11"},
		{"blank issue date", "Data: ____/____/________\nVencimento: 10/03/2025", "null"},
		{"not stated", "Date of issue: (not stated)\nDue date: March 30, 2025", "null"},
		{"only decoys", "Pay by 2025-06-03\nDocument 1  US$ 13.25  paid on 2025-04-30", "null"},
		{"invalid day", "Invoice date: 2025-02-30", "null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := str(Extract(tt.doc).Date); got != tt.want {
				t.Errorf("date %s, want %s", got, tt.want)
			}
		})
	}
}

func TestExtract_Amounts(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"brl", "Valor total: R$ 1.234,56", "1234.56"},
		{"brl glued", "Total a pagar: R$1.234,56", "1234.56"},
		{"brl bare", "TOTAL .......... 1.234,56", "1234.56"},
		{"brl no thousands", "Valor a pagar: R$ 1234,56", "1234.56"},
		{"usd code", "Total due: USD 1,234.56", "1234.56"},
		{"usd sign", "Amount due: $1,234.56", "1234.56"},
		{"us$", "Balance due: US$ 1,234.56", "1234.56"},
		{"plain", "Grand total: 1234.56", "1234.56"},
		{"eur sign", "Total amount: €1.234,56", "1234.56"},
		{"eur code", "TOTAL DUE: EUR 1,234.56", "1234.56"},
		{"eur after", "Total: 1.234,56 €", "1234.56"},
		{"credit note minus", "CREDIT NOTE #12\nTotal: -$80.00", "-80.00"},
		{"credit note parentheses", "Credit memo\nTotal due: ($80.00)", "-80.00"},
		{"nota de crédito", "NOTA DE CRÉDITO Nº 1\nValor total: -R$ 80,00", "-80.00"},
		{"credit note without sign", "Credit Note\nTotal: 80.00", "-80.00"},
		{"subtotal and tax are decoys", "Subtotal: $279.00\nSales tax: $22.32\nTotal due: $301.32", "301.32"},
		{"previous balance decoy", "Saldo anterior: R$ 314,66\nPagamento recebido: -R$ 314,66\nValor total do recibo: R$ 899,23", "899.23"},
		{"discount decoy", "Subtotal: $100.00\nDiscount: -$10.00\nTotal: $90.00", "90.00"},
		{"tax included after total", "Total: R$ 100,00\nValor aproximado dos tributos: R$ 13,45 (Lei 12.741/2012)", "100.00"},
		{"missing total", "Subtotal: R$ 50,00\nValor total: a definir", "null"},
		{"tbd", "Amount: TBD after final reading", "null"},
		{"unlabelled takes the largest", "Item A  10.00\nItem B  250.00\nItem C  40.00", "250.00"},
		{"unusual label takes the largest", "Previous balance: $500.00\nAmount payable: $120.00", "500.00"},
		{"tax id is not an amount", "CNPJ: 12.345.678/0001-90\nTotal: R$ 10,00", "10.00"},
		{"date is not an amount", "Data: 12.03.2025\nTotal: R$ 10,00", "10.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cents(Extract(tt.doc).Amount); got != tt.want {
				t.Errorf("amount %s, want %s", got, tt.want)
			}
		})
	}
}

func TestExtract_Category(t *testing.T) {
	tests := []struct{ doc, want string }{
		{"CONTA DE ENERGIA ELÉTRICA\nConsumo de energia (kWh)", "utilities"},
		{"Horizon Wireless\nMobile Phone Bill\nUnlimited Plus plan", "telecom"},
		{"Subscription Invoice\nTeam plan - per seat / month", "software"},
		{"Papelaria Central Ltda.\nPapel sulfite A4 75g\nToner compatível", "office_supplies"},
		{"Hotel Folio\nRoom charge - King Deluxe", "travel"},
		{"Restaurante Sabor da Terra\nPrato executivo\nCouvert artístico", "meals"},
		{"RECIBO DE ALUGUEL\nAluguel mensal\nCondomínio\nIPTU (parcela)", "rent"},
		{"Almeida & Rocha Advogados Associados\nHonorários advocatícios - consultivo", "professional_services"},
		{"DARF - Documento de Arrecadação de Receitas Federais\nReceita Federal do Brasil", "taxes"},
		{"PATIENT STATEMENT\nOffice visit, established patient\nLab tests", "healthcare"},
		{"Recibo de Consulta\nConsulta médica - clínica geral", "healthcare"},
		{"Nothing to see here.", "null"},
	}
	for _, tt := range tests {
		if got := str(Extract(tt.doc).Category); got != tt.want {
			t.Errorf("category of %q = %s, want %s", tt.doc, got, tt.want)
		}
	}
}

func TestExtract_IgnoresInstructions(t *testing.T) {
	prompt := `Extract the issue date (YYYY-MM-DD), the total due and the category.
Categories: utilities, telecom, software, office_supplies, travel, meals, rent, professional_services, taxes, healthcare.
Answer with JSON like {"date": "2024-01-01", "amount": 9999.99, "category": "rent"}.

` + invoiceEN
	ex := Extract(prompt)
	if got := answerJSON(ex, perturbNone); got != wantInvoiceEN {
		t.Errorf("got %s, want %s", got, wantInvoiceEN)
	}
}

func TestAnswerJSON_Perturbations(t *testing.T) {
	ex := Extract(invoiceEN)
	tests := []struct {
		p    perturbation
		want string
	}{
		{perturbNone, wantInvoiceEN},
		{perturbFence, "```json\n" + wantInvoiceEN + "\n```"},
		{perturbStringAmount, `{"date": "2025-03-12", "amount": "301.32", "category": "software"}`},
		{perturbProse, "Here is the extracted data:\n" + wantInvoiceEN},
		{perturbDate, `{"date": "2025-03-13", "amount": 301.32, "category": "software"}`},
		{perturbSubtotal, `{"date": "2025-03-12", "amount": 279.00, "category": "software"}`},
	}
	for _, tt := range tests {
		if got := answerJSON(ex, tt.p); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.p, got, tt.want)
		}
	}
}

// TestChoosePerturbation_Variants checks the variant differences are
// deterministic, nested (int8's errors are among int4's) and near their rates.
func TestChoosePerturbation_Variants(t *testing.T) {
	const n = 20000
	count := map[string]int{}
	for i := 0; i < n; i++ {
		h := docHash(fmt.Sprint("document ", i))
		for _, v := range []string{"bf16", "int8", "int4"} {
			p := choosePerturbation(v, h, 0, "")
			if again := choosePerturbation(v, h, 0, ""); again != p {
				t.Fatalf("%s document %d: %q then %q", v, i, p, again)
			}
			if p != perturbNone {
				count[v]++
			}
		}
		if choosePerturbation("int8", h, 0, "") != perturbNone && choosePerturbation("int4", h, 0, "") == perturbNone {
			t.Errorf("document %d perturbed by int8 but not by int4", i)
		}
	}
	for v, want := range map[string]float64{"bf16": 0, "int8": 0.007, "int4": 0.023} {
		if got := float64(count[v]) / n; got < want*0.8 || got > want*1.2 {
			t.Errorf("%s perturbs %.4f of documents, want ~%.3f", v, got, want)
		}
	}
	// Sampling: the same seed gives the same answers; another seed differs somewhere.
	same, differ := true, false
	for i := 0; i < 2000; i++ {
		h := docHash(fmt.Sprint("document ", i))
		a, b, c := choosePerturbation("bf16", h, 1, "7"), choosePerturbation("bf16", h, 1, "7"), choosePerturbation("bf16", h, 1, "8")
		same = same && a == b
		differ = differ || a != c
	}
	if !same || !differ {
		t.Errorf("temperature 1: same seed same answers %v, other seed differs %v; want both", same, differ)
	}
}

func TestSplitTokens(t *testing.T) {
	got := splitTokens(wantInvoiceEN)
	want := []string{`{"`, `date`, `": "`, `2025-03-12`, `", "`, `amount`, `":`, ` 301.32`, `, "`, `category`, `": "`, `software`, `"}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

func FuzzSplitTokens(f *testing.F) {
	f.Add(wantInvoiceEN)
	f.Add("Based on the document, it was issued on 2025-03-12.")
	f.Add("  a  1..2 -- ç")
	f.Fuzz(func(t *testing.T, s string) {
		tokens := splitTokens(s)
		if strings.Join(tokens, "") != s {
			t.Fatalf("tokens %q do not rebuild %q", tokens, s)
		}
		for _, tok := range tokens {
			if tok == "" {
				t.Fatalf("empty token in %q", tokens)
			}
		}
	})
}

func FuzzExtract(f *testing.F) {
	f.Add(invoiceEN)
	f.Add("Valor total: -R$ 1.234,56\nData: 31/12/2024\nNOTA DE CRÉDITO")
	f.Add("Total: (1,234.56)\nDate: Feb 29, 2024")
	f.Fuzz(func(t *testing.T, doc string) {
		ex := Extract(doc)
		for _, p := range append(append([]perturbation{perturbNone}, formatPerturbations...), qualityPerturbations...) {
			answer := answerJSON(ex, p)
			if p == perturbNone || p == perturbStringAmount || p == perturbDate || p == perturbSubtotal || p == perturbCategory {
				if !json.Valid([]byte(answer)) {
					t.Fatalf("%s answer is not JSON: %s", p, answer)
				}
			}
		}
	})
}
