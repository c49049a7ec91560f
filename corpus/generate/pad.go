package generate

import (
	"fmt"
	"strings"
	"time"
)

// filler returns one block of realistic content that carries neither the
// issue date nor the total due: what makes a usual document usual and a long
// one long. Without money it writes no monetary amount, so a document whose
// total is missing stays without one.
func (d *doc) filler(money bool) string {
	if d.used == nil {
		d.used = map[string]bool{}
	}
	switch n := d.r.IntN(10); {
	case n < 4:
		switch d.k.pad {
		case "cdr":
			return d.cdr(money)
		case "usage":
			if !d.used["usage"] {
				d.used["usage"] = true
				return d.usage(money)
			}
		case "terms":
			return d.log()
		}
		return d.terms()
	case n < 6 && !d.used["history"]:
		d.used["history"] = true
		return d.history(money)
	case n < 8:
		return d.terms()
	default:
		if msg := d.notice(); !d.used[msg] {
			d.used[msg] = true
			return msg
		}
		return d.terms()
	}
}

// log is a dated activity record (a timesheet, a property or case log):
// dates that are not the issue date and no amounts.
func (d *doc) log() string {
	var b strings.Builder
	acts, head := actsEN, "ACTIVITY LOG"
	if d.pt() {
		acts, head = actsPT, "REGISTRO DE ATIVIDADES"
	}
	b.WriteString(head)
	t := d.issue.AddDate(0, 0, -40-d.r.IntN(20))
	for i := 0; i < 8+d.r.IntN(10); i++ {
		t = t.AddDate(0, 0, 1+d.r.IntN(3))
		hours := fmt.Sprintf("%d,%d h", d.r.IntN(6), 5*d.r.IntN(2))
		if !d.pt() {
			hours = fmt.Sprintf("%d.%d h", d.r.IntN(6), 5*d.r.IntN(2))
		}
		fmt.Fprintf(&b, "\n%s  %-8s %s", d.date(t), hours, acts[d.r.IntN(len(acts))])
	}
	return b.String()
}

// cdr is a page of call and data detail records.
func (d *doc) cdr(money bool) string {
	var b strings.Builder
	phone := fmt.Sprintf("(%02d) 9%04d-%04d", 11+d.r.IntN(80), d.r.IntN(10000), d.r.IntN(10000))
	if d.pt() {
		b.WriteString("DETALHAMENTO DE LIGAÇÕES E DADOS - Linha " + phone + "\nData   Hora   Número chamado    Tipo         Duração/Volume   Valor")
	} else {
		phone = fmt.Sprintf("(%03d) 555-%04d", 200+d.r.IntN(700), d.r.IntN(10000))
		b.WriteString("CALL & DATA DETAIL - Line " + phone + "\nDate   Time   Number            Type         Min/Volume       Charge")
	}
	t := d.periodFrom
	rows := 15 + d.r.IntN(20)
	for i := 0; i < rows; i++ {
		t = t.Add(time.Duration(1+d.r.IntN(30)) * time.Hour)
		var kind, vol string
		switch d.r.IntN(3) {
		case 0:
			kind, vol = "Local", fmt.Sprintf("%02d:%02d", d.r.IntN(40), d.r.IntN(60))
		case 1:
			kind, vol = "DDD", fmt.Sprintf("%02d:%02d", d.r.IntN(20), d.r.IntN(60))
			if !d.pt() {
				kind = "Long dist."
			}
		default:
			kind, vol = "Dados", fmt.Sprintf("%d MB", 1+d.r.IntN(900))
			if !d.pt() {
				kind = "Data"
			}
		}
		num := fmt.Sprintf("(%02d) %04d-%04d", 11+d.r.IntN(80), d.r.IntN(10000), d.r.IntN(10000))
		if strings.HasPrefix(kind, "Dad") || kind == "Data" {
			num = "internet.movel   "
		}
		day := fmt.Sprintf("%02d/%02d", t.Day(), int(t.Month()))
		if !d.pt() {
			day = fmt.Sprintf("%02d/%02d", int(t.Month()), t.Day())
		}
		charge := ""
		if money {
			charge = d.plain(0)
			if d.pt() && d.r.IntN(2) == 0 {
				charge = "incluso"
			} else if !d.pt() && d.r.IntN(2) == 0 {
				charge = "incl."
			}
		}
		fmt.Fprintf(&b, "\n%s  %02d:%02d  %-16s  %-11s  %-15s  %s", day, t.Hour(), t.Minute(), num, kind, vol, charge)
	}
	return b.String()
}

// usage is a consumption history table, as utility bills print it.
func (d *doc) usage(money bool) string {
	var b strings.Builder
	unit := "kWh"
	if strings.Contains(strings.ToLower(d.title), "gás") || strings.Contains(strings.ToLower(d.title), "gas") {
		unit = "m³"
	}
	if d.pt() {
		b.WriteString("HISTÓRICO DE CONSUMO (últimos 12 meses)\nMês/Ano      Consumo      Dias")
	} else {
		b.WriteString("USAGE HISTORY (last 12 months)\nMonth        Usage        Days")
	}
	if money {
		if d.pt() {
			b.WriteString("     Valor faturado")
		} else {
			b.WriteString("     Amount billed")
		}
	}
	t := d.periodFrom
	for i := 0; i < 12; i++ {
		t = t.AddDate(0, -1, 0)
		label := fmt.Sprintf("%s/%d", MonthsPT[t.Month()-1][:3], t.Year())
		if !d.pt() {
			label = fmt.Sprintf("%s %d", MonthsEN[t.Month()-1][:3], t.Year())
		}
		fmt.Fprintf(&b, "\n%-12s %5d %s   %3d", label, 80+d.r.IntN(700), unit, 28+d.r.IntN(5))
		if money {
			fmt.Fprintf(&b, "     %s", d.plain(d.between(5000, 60000)))
		}
	}
	if d.pt() {
		fmt.Fprintf(&b, "\nLeitura anterior: %d   Leitura atual: %d   Constante de multiplicação: 1", 10000+d.r.IntN(50000), 60000+d.r.IntN(30000))
	} else {
		fmt.Fprintf(&b, "\nPrevious reading: %d   Current reading: %d   Multiplier: 1", 10000+d.r.IntN(50000), 60000+d.r.IntN(30000))
	}
	return b.String()
}

// history lists earlier bills and payments: dates and amounts that are not
// this document's.
func (d *doc) history(money bool) string {
	var b strings.Builder
	if d.pt() {
		b.WriteString("HISTÓRICO DE PAGAMENTOS")
	} else {
		b.WriteString("PAYMENT HISTORY")
	}
	t := d.issue
	for i := 0; i < 4+d.r.IntN(6); i++ {
		t = t.AddDate(0, -1, 0)
		paid := t.AddDate(0, 0, 3+d.r.IntN(12))
		amt := ""
		if money {
			amt = "  " + d.money(d.between(2000, 90000))
		}
		if d.pt() {
			fmt.Fprintf(&b, "\nDocumento %d%s  pago em %s", 10000+d.r.IntN(90000), amt, d.date(paid))
		} else {
			fmt.Fprintf(&b, "\nDocument %d%s  paid on %s", 10000+d.r.IntN(90000), amt, d.date(paid))
		}
	}
	return b.String()
}

// terms is a numbered clause of terms and conditions.
func (d *doc) terms() string {
	pool, heads := termsEN, headsEN
	if d.pt() {
		pool, heads = termsPT, headsPT
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d. %s\n", 1+d.r.IntN(20), heads[d.r.IntN(len(heads))])
	n := 3 + d.r.IntN(4)
	perm := d.r.Perm(len(pool)) // no sentence twice in one clause
	for i := 0; i < n; i++ {
		s := pool[perm[i]]
		s = strings.ReplaceAll(s, "{n}", fmt.Sprint(2+d.r.IntN(28)))
		s = strings.ReplaceAll(s, "{p}", fmt.Sprint(1+d.r.IntN(10)))
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	return b.String()
}

// notice is a short customer notice.
func (d *doc) notice() string {
	if d.pt() {
		return d.pick(noticesPT)
	}
	return d.pick(noticesEN)
}

var (
	actsPT = []string{
		"Reunião com o cliente para levantamento de requisitos", "Análise de documentos e contratos",
		"Elaboração de parecer técnico", "Vistoria do imóvel e registro fotográfico", "Conferência de lançamentos contábeis",
		"Atendimento telefônico e envio de esclarecimentos", "Revisão da minuta e ajustes solicitados",
		"Protocolo de requerimento junto ao órgão competente", "Manutenção preventiva das áreas comuns",
		"Conciliação bancária e fechamento do período", "Preparação de relatório gerencial",
	}
	actsEN = []string{
		"Client meeting to review requirements", "Review of documents and contracts", "Drafting of technical memo",
		"Property inspection and photo record", "Reconciliation of ledger entries", "Phone call and follow-up email",
		"Revision of draft per client comments", "Filing with the county office", "Preventive maintenance of common areas",
		"Bank reconciliation and period close", "Preparation of management report",
	}
	headsPT = []string{"CONDIÇÕES GERAIS", "DO PAGAMENTO", "DA INADIMPLÊNCIA", "DA PROTEÇÃO DE DADOS", "DISPOSIÇÕES FINAIS", "DO REAJUSTE", "DA RESCISÃO", "INFORMAÇÕES AO CONSUMIDOR"}
	headsEN = []string{"GENERAL TERMS", "PAYMENT TERMS", "LATE PAYMENT", "DATA PROTECTION", "MISCELLANEOUS", "PRICE ADJUSTMENTS", "TERMINATION", "CUSTOMER INFORMATION"}
	termsPT = []string{
		"O não pagamento até a data de vencimento sujeitará o contratante à multa de {p}% e juros de mora de 1% ao mês, calculados pro rata die.",
		"Os valores deste documento poderão ser reajustados anualmente pelo IPCA ou índice que venha a substituí-lo.",
		"A contestação de valores deverá ser feita em até {n} dias contados do recebimento deste documento, pelos canais oficiais de atendimento.",
		"O contratante declara ter recebido os produtos e serviços descritos em perfeitas condições, nada tendo a reclamar.",
		"Os dados pessoais coletados são tratados conforme a Lei Geral de Proteção de Dados (Lei nº 13.709/2018) e a política de privacidade vigente.",
		"Após {n} dias de atraso, o serviço poderá ser suspenso mediante aviso prévio, sem prejuízo da cobrança dos valores devidos.",
		"Este documento não quita débitos anteriores, que permanecem exigíveis até a comprovação do respectivo pagamento.",
		"Eventuais créditos serão compensados automaticamente nos documentos subsequentes, salvo solicitação expressa em contrário.",
		"A rescisão antecipada implicará o pagamento proporcional da multa prevista no contrato, equivalente a {p} vezes o valor mensal.",
		"Fica eleito o foro da comarca da sede do fornecedor para dirimir quaisquer dúvidas oriundas deste instrumento.",
		"O pagamento por meio de boleto bancário será compensado em até {p} dias úteis após a quitação.",
		"Reclamações não solucionadas poderão ser encaminhadas à ouvidoria, que responderá em até {n} dias úteis.",
		"A emissão deste documento não implica renúncia a direitos nem novação das obrigações contratuais.",
		"Conserve este documento pelo prazo de cinco anos para fins de comprovação junto aos órgãos fiscais.",
		"Os serviços foram prestados de acordo com as especificações técnicas acordadas entre as partes.",
		"O débito automático pode ser cadastrado em qualquer agência bancária conveniada ou pelo aplicativo.",
	}
	termsEN = []string{
		"Payments not received by the due date are subject to a late charge of {p}% per month on the unpaid balance.",
		"Prices are subject to change with {n} days' written notice, in accordance with the master services agreement.",
		"Billing disputes must be submitted in writing within {n} days of the statement date, or the charges are deemed accepted.",
		"All goods remain the property of the seller until payment has been received in full.",
		"We collect and process personal data as described in our privacy notice, available on our website.",
		"Service may be suspended after {n} days of non-payment, and a reconnection fee may apply.",
		"This statement does not reflect payments received after the closing date shown above.",
		"Credits on the account are applied automatically to the next invoice unless a refund is requested.",
		"Early termination requires payment of {p} months of the recurring fee, as stated in the agreement.",
		"This agreement is governed by the laws of the state in which the services were provided.",
		"Checks returned unpaid by the bank will incur a processing fee and may require payment by certified funds.",
		"Unresolved complaints may be escalated to our customer advocacy team, which responds within {n} business days.",
		"Acceptance of partial payment does not waive our right to collect the full balance.",
		"Keep this document for your records; it may be required for tax or reimbursement purposes.",
		"Services were performed in accordance with the scope of work agreed between the parties.",
		"Enroll in autopay through your online account to avoid missing a payment.",
	}
	noticesPT = []string{
		"AVISO IMPORTANTE: mantenha seus dados cadastrais atualizados para receber documentos por e-mail.",
		"Economize: cadastre-se na fatura digital e ajude o meio ambiente.",
		"Central de atendimento 24 horas. Deficientes auditivos: ligue 0800 com acesso TDD.",
		"Atenção: desconfie de boletos recebidos por canais não oficiais. Confira sempre o beneficiário antes de pagar.",
		"Programa de fidelidade: acumule pontos a cada pagamento em dia e troque por descontos.",
	}
	noticesEN = []string{
		"IMPORTANT: keep your contact details up to date to receive statements by email.",
		"Go paperless: sign up for e-billing in your online account.",
		"Customer service is available 24/7. TTY users dial 711.",
		"Beware of scams: we will never ask for your password or payment by gift card.",
		"Loyalty rewards: earn points for every on-time payment.",
	}
)
