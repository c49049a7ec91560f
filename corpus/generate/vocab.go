package generate

// Lang is the language a generated document is written in.
type Lang string

// The two languages of the default corpus.
const (
	PT Lang = "pt-BR" // Brazilian Portuguese: dd/mm/yyyy dates, R$ 1.234,56 amounts
	EN Lang = "en"    // English: Month d, yyyy dates, USD 1,234.56 amounts
)

// Labels is the label vocabulary of one language: the words a document puts
// before each of its dates and amounts. The generator picks from these, and
// an extractor that reads documents can learn from them which date is the
// issue date and which amount is the total due. Every label listed under
// IssueDate marks the issue date and every label under Total marks the total
// due; every other list marks a decoy.
type Labels struct {
	IssueDate []string // the date the document was issued: the expected date
	DueDate   []string // decoy: when payment is due
	Period    []string // decoy: the billing or service period (two dates)
	OtherDate []string // decoy: reading, delivery, travel, payment dates
	Total     []string // the total due: the expected amount
	Subtotal  []string // decoy: before tax, discount and fees
	Tax       []string // decoy: a tax amount, added to or included in the total
	Discount  []string // decoy: subtracted from the subtotal
	Fee       []string // decoy: added to the subtotal (shipping, service, late fees)
	Previous  []string // decoy: previous balance or payment received, not part of the total
	Credit    []string // titles of credit notes, whose total is negative
	NoDate    []string // what a document says where its issue date is missing
	NoAmount  []string // what a document says where its total is missing
}

// Vocab holds the label vocabulary of each language.
var Vocab = map[Lang]Labels{
	PT: {
		IssueDate: []string{
			"Data de emissão", "Emissão", "Emitido em", "Data", "Data do documento",
			"Data de Emissão", "DATA DA EMISSÃO", "Data/Hora de emissão", "Data do recibo",
		},
		DueDate: []string{
			"Vencimento", "Data de vencimento", "Pagar até", "Vence em", "VENCIMENTO",
		},
		Period: []string{
			"Período de referência", "Referência", "Período de consumo", "Competência",
		},
		OtherDate: []string{
			"Data da leitura", "Próxima leitura", "Data de entrega", "Data do pagamento",
			"Data de saída", "Check-in", "Check-out", "Data do atendimento", "Data da viagem",
		},
		Total: []string{
			"Valor total", "Total a pagar", "Valor a pagar", "VALOR TOTAL DA NOTA",
			"Total da nota", "Valor do documento", "TOTAL", "Valor total do recibo",
			"Valor líquido a pagar",
		},
		Subtotal: []string{
			"Subtotal", "Valor dos produtos", "Valor dos serviços", "Total dos itens",
		},
		Tax: []string{
			"ICMS", "ISS", "Impostos", "PIS/COFINS", "Tributos",
		},
		Discount: []string{
			"Desconto", "Descontos", "Desconto concedido",
		},
		Fee: []string{
			"Frete", "Taxa de serviço", "Juros e multa", "Taxa de entrega", "Encargos",
		},
		Previous: []string{
			"Saldo anterior", "Pagamento recebido", "Valor pago na fatura anterior",
		},
		Credit: []string{
			"NOTA DE CRÉDITO", "Nota de crédito", "Estorno / Nota de crédito",
		},
		NoDate: []string{
			"Data: ____/____/________", "Data de emissão: (não informada)",
		},
		NoAmount: []string{
			"Valor total: a definir", "Valor a pagar: será informado após a medição",
			"Total: consulte o demonstrativo anexo", "VALOR TOTAL: ilegível",
		},
	},
	EN: {
		IssueDate: []string{
			"Invoice date", "Date of issue", "Issue date", "Date", "Issued",
			"Statement date", "Bill date", "Receipt date", "Invoice Date",
		},
		DueDate: []string{
			"Due date", "Payment due", "Pay by", "Due", "DUE DATE",
		},
		Period: []string{
			"Billing period", "Service period", "Statement period", "Period",
		},
		OtherDate: []string{
			"Meter read date", "Next reading", "Delivery date", "Payment date",
			"Departure", "Check-in", "Check-out", "Date of service", "Travel date",
		},
		Total: []string{
			"Total", "Total due", "Amount due", "Balance due", "Grand total",
			"Total amount", "TOTAL DUE", "Amount payable", "Total to pay",
		},
		Subtotal: []string{
			"Subtotal", "Net amount", "Sub-total", "Items total",
		},
		Tax: []string{
			"Tax", "VAT", "Sales tax", "GST", "Taxes",
		},
		Discount: []string{
			"Discount", "Promotional discount", "Credit applied",
		},
		Fee: []string{
			"Shipping", "Service charge", "Late fee", "Delivery fee", "Processing fee",
		},
		Previous: []string{
			"Previous balance", "Payment received - thank you", "Last payment",
		},
		Credit: []string{
			"CREDIT NOTE", "Credit memo", "Credit Note",
		},
		NoDate: []string{
			"Date: __________", "Date of issue: (not stated)",
		},
		NoAmount: []string{
			"Total: to be confirmed", "Amount due: see attached statement",
			"TOTAL: illegible", "Amount: TBD after final reading",
		},
	},
}

// MonthsPT are the Portuguese month names, January first, as written in
// "12 de março de 2025".
var MonthsPT = []string{
	"janeiro", "fevereiro", "março", "abril", "maio", "junho",
	"julho", "agosto", "setembro", "outubro", "novembro", "dezembro",
}

// MonthsEN are the English month names, January first, as written in
// "March 12, 2025"; the generator abbreviates them to three letters too
// ("12-Mar-25", "Mar 12, 2025").
var MonthsEN = []string{
	"January", "February", "March", "April", "May", "June",
	"July", "August", "September", "October", "November", "December",
}

// DateLayouts names the date forms the generator writes, with an example of
// each for 2025-03-12. Every form is unambiguous: the generator writes the
// US month-first form (03/15/2025) only when the day is above 12.
var DateLayouts = map[Lang][]string{
	PT: {"12/03/2025", "12 de março de 2025", "2025-03-12", "12.03.2025", "12/03/25", "12-mar-2025"},
	EN: {"March 12, 2025", "12-Mar-25", "2025-03-12", "Mar 12, 2025", "12 March 2025", "03/15/2025 (day > 12 only)"},
}

// AmountLayouts names the amount forms the generator writes, with an example
// of each for 1234.56 (negative totals of credit notes add a minus sign or
// parentheses).
var AmountLayouts = map[string][]string{
	"BRL": {"R$ 1.234,56", "R$1.234,56", "1.234,56", "R$ 1234,56"},
	"USD": {"USD 1,234.56", "$1,234.56", "US$ 1,234.56", "1234.56", "1,234.56"},
	"EUR": {"€1.234,56", "EUR 1,234.56", "1.234,56 €", "€ 1,234.56"},
}

// CategoryKeywords are words that documents of each category use, per
// language (the title and item vocabulary the generator draws on).
var CategoryKeywords = map[string]map[Lang][]string{
	"utilities": {
		PT: {"energia elétrica", "conta de luz", "kWh", "água e esgoto", "gás canalizado", "m³", "distribuidora"},
		EN: {"electricity", "kWh", "water and sewer", "natural gas", "therms", "utility", "meter"},
	},
	"telecom": {
		PT: {"telefonia", "internet", "banda larga", "plano móvel", "fatura de celular", "ligações", "dados móveis"},
		EN: {"wireless", "mobile plan", "broadband", "internet", "call detail", "data usage", "phone bill"},
	},
	"software": {
		PT: {"licença de software", "assinatura", "SaaS", "nuvem", "usuários", "plano anual"},
		EN: {"subscription", "SaaS", "license", "seats", "cloud", "API usage", "annual plan"},
	},
	"office_supplies": {
		PT: {"papelaria", "papel A4", "canetas", "toner", "material de escritório", "grampeador"},
		EN: {"office supplies", "copy paper", "toner", "pens", "stapler", "binders"},
	},
	"travel": {
		PT: {"passagem aérea", "hospedagem", "hotel", "diária", "táxi", "locação de veículo", "bilhete"},
		EN: {"airfare", "hotel", "lodging", "room night", "taxi", "car rental", "boarding"},
	},
	"meals": {
		PT: {"restaurante", "refeição", "cupom fiscal", "NFC-e", "couvert", "taxa de serviço", "almoço"},
		EN: {"restaurant", "meal", "dinner", "lunch", "gratuity", "catering", "server"},
	},
	"rent": {
		PT: {"aluguel", "recibo de aluguel", "locatário", "locador", "imóvel", "condomínio"},
		EN: {"rent", "lease", "tenant", "landlord", "premises", "monthly rent"},
	},
	"professional_services": {
		PT: {"NFS-e", "consultoria", "honorários", "assessoria", "serviços prestados", "contabilidade"},
		EN: {"consulting", "professional fees", "legal services", "hours", "retainer", "advisory"},
	},
	"taxes": {
		PT: {"DARF", "IPTU", "IPVA", "DAS", "Simples Nacional", "Receita Federal", "guia de recolhimento"},
		EN: {"property tax", "tax bill", "estimated tax", "assessment", "tax payment voucher", "county treasurer"},
	},
	"healthcare": {
		PT: {"consulta médica", "clínica", "exames", "laboratório", "recibo médico", "CRM", "odontológico"},
		EN: {"medical", "patient", "clinic", "lab tests", "physician", "dental", "statement of services"},
	},
}
