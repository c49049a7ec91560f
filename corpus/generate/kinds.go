package generate

// item is a line-item template: a description and a unit price range in cents.
type item struct {
	desc     string
	min, max int64
	maxQty   int
}

// kind is what the generator knows about one category in one language: who
// issues such documents, what they are called and what they charge for.
type kind struct {
	titles  []string
	issuers []string
	items   []item
	sets    [][]int // optional: per title, the items it bills (by index); issuers[i%len] issues titles[i]
	dueProb float64 // how often such a document carries a due date
	period  bool    // whether it bills a period (utilities, telecom, rent, SaaS)
	pad     string  // the long-document padding it uses: "cdr", "usage", "items", "terms", "folio"
}

// kinds holds the kind of every default category in every language.
var kinds = map[string]map[Lang]kind{
	"utilities": {
		PT: {
			titles:  []string{"CONTA DE ENERGIA ELÉTRICA", "Fatura de Água e Esgoto", "CONTA DE GÁS CANALIZADO", "Nota Fiscal/Conta de Energia Elétrica"},
			issuers: []string{"Companhia Paulista de Energia S.A.", "Águas do Vale Saneamento S.A.", "GásSul Distribuidora de Gás Canalizado", "Energisa Litoral Distribuição S.A."},
			sets:    [][]int{{0, 1, 2}, {3, 4}, {5}, {0, 1, 2}},
			items:   []item{{"Consumo de energia (kWh)", 18000, 61000, 1}, {"Adicional bandeira amarela", 900, 4800, 1}, {"Contribuição de iluminação pública", 1200, 3900, 1}, {"Tarifa de água (m³)", 4500, 19000, 1}, {"Tarifa de esgoto", 3600, 15200, 1}, {"Consumo de gás (m³)", 6500, 24000, 1}},
			dueProb: 0.95, period: true, pad: "usage",
		},
		EN: {
			titles:  []string{"ELECTRIC SERVICE STATEMENT", "Water & Sewer Bill", "Natural Gas Service Invoice", "Utility Bill"},
			issuers: []string{"Bayview Power & Light", "Cedar County Water Authority", "Northern Plains Gas Co.", "Riverside Municipal Utilities"},
			sets:    [][]int{{0, 1, 2}, {3, 4, 2}, {5, 1, 2}, {0, 1, 2, 3, 4}},
			items:   []item{{"Electric energy charge", 6500, 28000, 1}, {"Delivery charge", 2100, 6400, 1}, {"Customer charge", 900, 1500, 1}, {"Water usage", 2500, 9000, 1}, {"Sewer service", 2200, 7800, 1}, {"Gas supply (therms)", 3000, 14000, 1}},
			dueProb: 0.95, period: true, pad: "usage",
		},
	},
	"telecom": {
		PT: {
			titles:  []string{"FATURA DE SERVIÇOS DE TELECOMUNICAÇÕES", "Fatura Celular Pós-pago", "Fatura Internet Banda Larga", "Nota Fiscal de Serviços de Telecomunicação"},
			issuers: []string{"Conecta Telecom S.A.", "TelAlpha Móvel S.A.", "Fibra Norte Internet Ltda.", "VivaNet Comunicações Ltda."},
			sets:    [][]int{{0, 1, 2, 3, 4, 5}, {0, 2, 3, 4}, {1, 5, 3}, {0, 1, 2, 3, 4, 5}},
			items:   []item{{"Plano Controle 25GB", 6999, 12999, 1}, {"Internet Fibra 500 Mega", 9990, 15990, 1}, {"Pacote adicional de dados 5GB", 1990, 2990, 2}, {"Serviços de valor adicionado", 490, 1490, 1}, {"Linha adicional dependente", 2990, 4990, 3}, {"Aluguel de modem", 990, 1990, 1}},
			dueProb: 0.95, period: true, pad: "cdr",
		},
		EN: {
			titles:  []string{"WIRELESS STATEMENT", "Mobile Phone Bill", "Broadband Internet Invoice", "Business Communications Invoice"},
			issuers: []string{"Horizon Wireless", "Pinnacle Mobile Inc.", "Lakeshore Broadband LLC", "ClearLine Communications"},
			sets:    [][]int{{0, 2, 3, 4}, {0, 2, 3, 4}, {1, 5}, {0, 1, 3, 4, 5}},
			items:   []item{{"Unlimited Plus plan", 6000, 9500, 1}, {"Fiber Internet 1 Gig", 7000, 12000, 1}, {"Device installment 12 of 36", 2500, 4200, 1}, {"International day pass", 1000, 1000, 3}, {"Additional line", 2000, 3500, 3}, {"Router rental", 1000, 1500, 1}},
			dueProb: 0.95, period: true, pad: "cdr",
		},
	},
	"software": {
		PT: {
			titles:  []string{"NOTA FISCAL DE SERVIÇOS ELETRÔNICA - NFS-e", "Fatura de Assinatura", "Recibo de Licenciamento de Software", "Fatura"},
			issuers: []string{"Nuvemtec Sistemas Ltda.", "ContaFácil Software S.A.", "Gestor ERP Tecnologia Ltda.", "DevPrime Soluções em Nuvem Ltda."},
			items:   []item{{"Licença ERP - usuário/mês", 8900, 19900, 25}, {"Assinatura plataforma de CRM - plano Pro", 14900, 49900, 1}, {"Armazenamento em nuvem adicional 1TB", 4990, 9990, 3}, {"Suporte técnico premium", 29900, 89900, 1}, {"Implantação e treinamento", 150000, 450000, 1}},
			dueProb: 0.7, period: true, pad: "items",
		},
		EN: {
			titles:  []string{"INVOICE", "Subscription Invoice", "Tax Invoice", "Receipt"},
			issuers: []string{"Cloudlift, Inc.", "Stackwise Software Ltd.", "Formbase Inc.", "Datapane Analytics GmbH", "Ticketly Software Inc."},
			items:   []item{{"Team plan - per seat / month", 800, 2500, 40}, {"Business plan (annual)", 59900, 299900, 1}, {"API requests overage (per 10k)", 150, 400, 90}, {"Additional storage 100 GB", 500, 1500, 5}, {"Premium support add-on", 9900, 29900, 1}},
			dueProb: 0.6, period: true, pad: "items",
		},
	},
	"office_supplies": {
		PT: {
			titles:  []string{"DANFE - Documento Auxiliar da Nota Fiscal Eletrônica", "CUPOM FISCAL ELETRÔNICO - SAT", "Nota Fiscal de Venda", "Pedido de Venda / Nota Fiscal"},
			issuers: []string{"Papelaria Central Ltda.", "Kalunga Sul Comércio de Papéis Ltda.", "Escritório Total Suprimentos EIRELI", "Distribuidora Papel & Cia Ltda."},
			items:   []item{{"Papel sulfite A4 75g c/500 fls", 2290, 3490, 20}, {"Caneta esferográfica azul cx c/50", 3990, 5990, 4}, {"Toner compatível HP 85A", 8990, 18990, 6}, {"Grampeador de mesa 26/6", 2590, 6990, 3}, {"Pasta suspensa marmorizada", 190, 390, 50}, {"Bloco adesivo 76x76mm", 590, 1290, 24}, {"Cadeira de escritório giratória", 49900, 129900, 4}},
			dueProb: 0.4, pad: "items",
		},
		EN: {
			titles:  []string{"INVOICE", "Sales Receipt", "Packing Slip / Invoice", "Order Invoice"},
			issuers: []string{"Staples & Co. Business Supply", "Office Depot Express LLC", "Paperline Wholesale", "DeskPro Supplies Inc."},
			items:   []item{{"Copy paper letter 20 lb, case", 3999, 5999, 10}, {"Gel pens, black, 12 pack", 899, 1699, 12}, {"Toner cartridge 26A", 6999, 15999, 6}, {"Heavy duty stapler", 1999, 4599, 3}, {"3-ring binder 2 in.", 499, 999, 20}, {"Ergonomic office chair", 19999, 49999, 3}, {"Sticky notes 3x3, 24 pads", 1299, 2199, 10}},
			dueProb: 0.5, pad: "items",
		},
	},
	"travel": {
		PT: {
			titles:  []string{"Recibo de Hospedagem", "Bilhete Eletrônico - Recibo de Passagem Aérea", "Recibo de Corrida", "Contrato de Locação de Veículo - Fechamento"},
			issuers: []string{"Hotel Atlântico Rio Ltda.", "Azul Céu Linhas Aéreas S.A.", "Táxi Cooperativa Paulistana", "RodaBem Locadora de Veículos Ltda."},
			sets:    [][]int{{0, 5}, {1, 2}, {4}, {3}},
			items:   []item{{"Diária apartamento standard", 28900, 69900, 4}, {"Tarifa aérea GRU-SDU", 38900, 129900, 1}, {"Taxa de embarque", 3800, 6400, 1}, {"Locação de veículo - diária", 11900, 24900, 5}, {"Corrida GRU - Centro", 9800, 17500, 1}, {"Frigobar", 1200, 4800, 1}},
			dueProb: 0.1, pad: "folio",
		},
		EN: {
			titles:  []string{"Hotel Folio", "E-Ticket Receipt", "Trip Receipt", "Car Rental Receipt"},
			issuers: []string{"Harborview Hotel & Suites", "SkyBridge Airlines", "Metro Cab Company", "Coastal Car Rental Inc."},
			sets:    [][]int{{0, 5}, {1, 2}, {4}, {3}},
			items:   []item{{"Room charge - King Deluxe", 15900, 38900, 4}, {"Airfare JFK-ORD", 18900, 64900, 1}, {"Carrier-imposed fees", 2500, 5600, 1}, {"Car rental - daily rate", 4900, 11900, 5}, {"Taxi fare", 2400, 8500, 1}, {"Room service", 2800, 7600, 1}},
			dueProb: 0.1, pad: "folio",
		},
	},
	"meals": {
		PT: {
			titles:  []string{"DANFE NFC-e - Documento Auxiliar da Nota Fiscal de Consumidor Eletrônica", "CUPOM FISCAL", "Conta de Mesa", "Nota Fiscal de Serviço - Buffet"},
			issuers: []string{"Restaurante Sabor da Terra Ltda.", "Cantina Bella Nonna", "Churrascaria Fogo Alto Ltda.", "Padaria e Confeitaria Flor de Lis", "Buffet Delícias Eventos Ltda."},
			items:   []item{{"Prato executivo frango grelhado", 3290, 4890, 4}, {"Picanha na chapa p/ 2", 11900, 16900, 1}, {"Refrigerante lata", 690, 990, 6}, {"Suco natural laranja", 890, 1390, 4}, {"Couvert artístico", 1500, 2500, 4}, {"Sobremesa pudim", 1490, 1990, 3}, {"Café expresso", 590, 890, 4}},
			dueProb: 0.05, pad: "items",
		},
		EN: {
			titles:  []string{"Guest Check", "RECEIPT", "Catering Invoice", "Restaurant Receipt"},
			issuers: []string{"The Copper Kettle", "Bella Vista Trattoria", "Smoke & Oak BBQ", "Green Leaf Cafe", "Urban Bites Catering LLC"},
			items:   []item{{"Grilled salmon", 2400, 3400, 4}, {"Caesar salad", 1200, 1600, 4}, {"Ribeye steak 12oz", 3800, 5200, 2}, {"Iced tea", 350, 450, 6}, {"House red wine, glass", 1100, 1600, 4}, {"Cheesecake", 900, 1200, 3}, {"Espresso", 350, 500, 4}},
			dueProb: 0.05, pad: "items",
		},
	},
	"rent": {
		PT: {
			titles:  []string{"RECIBO DE ALUGUEL", "Boleto de Aluguel e Encargos", "Demonstrativo de Locação", "Recibo de Pagamento de Aluguel"},
			issuers: []string{"Imobiliária Horizonte Ltda.", "Administradora Predial Santos & Filhos", "Lar Seguro Administração de Imóveis", "João Carlos Mendes (locador)"},
			items:   []item{{"Aluguel mensal", 120000, 850000, 1}, {"Condomínio", 45000, 190000, 1}, {"IPTU (parcela)", 8000, 42000, 1}, {"Fundo de reserva", 3000, 12000, 1}, {"Seguro incêndio", 2500, 6000, 1}},
			dueProb: 0.8, period: true, pad: "terms",
		},
		EN: {
			titles:  []string{"RENT INVOICE", "Rent Receipt", "Lease Statement", "Monthly Rent Statement"},
			issuers: []string{"Oakridge Property Management", "Harbor Point Realty LLC", "Maple Street Holdings", "Crescent Commercial Leasing"},
			items:   []item{{"Base rent", 95000, 650000, 1}, {"Common area maintenance (CAM)", 15000, 60000, 1}, {"Parking space", 7500, 25000, 2}, {"Utilities reimbursement", 5000, 30000, 1}, {"Pet rent", 2500, 5000, 1}},
			dueProb: 0.8, period: true, pad: "terms",
		},
	},
	"professional_services": {
		PT: {
			titles:  []string{"NOTA FISCAL DE SERVIÇOS ELETRÔNICA - NFS-e", "Recibo de Honorários", "Fatura de Serviços Prestados", "Nota Fiscal de Serviços"},
			issuers: []string{"Almeida & Rocha Advogados Associados", "Contábil Exata Assessoria Ltda.", "Prisma Consultoria Empresarial Ltda.", "Marina Tavares Arquitetura ME"},
			items:   []item{{"Honorários advocatícios - consultivo", 250000, 1200000, 1}, {"Serviços contábeis mensais", 80000, 350000, 1}, {"Consultoria em gestão - horas", 22000, 45000, 40}, {"Elaboração de laudo técnico", 150000, 600000, 1}, {"Assessoria tributária", 120000, 480000, 1}},
			dueProb: 0.7, pad: "terms",
		},
		EN: {
			titles:  []string{"INVOICE", "Statement for Professional Services", "Invoice for Services Rendered", "Fee Note"},
			issuers: []string{"Whitfield & Park LLP", "Brightline Consulting Group", "Keller Accounting Services", "Northgate Engineering Advisors"},
			items:   []item{{"Legal services - hours", 25000, 65000, 30}, {"Monthly bookkeeping", 40000, 150000, 1}, {"Strategy consulting - days", 120000, 250000, 10}, {"Tax return preparation", 35000, 180000, 1}, {"Expert report", 200000, 800000, 1}},
			dueProb: 0.8, pad: "terms",
		},
	},
	"taxes": {
		PT: {
			titles:  []string{"DARF - Documento de Arrecadação de Receitas Federais", "IPTU - Carnê de Pagamento", "DAS - Documento de Arrecadação do Simples Nacional", "Guia de Recolhimento do IPVA"},
			issuers: []string{"Receita Federal do Brasil", "Prefeitura Municipal de São Paulo - Secretaria da Fazenda", "Simples Nacional - Receita Federal", "Secretaria da Fazenda do Estado de Minas Gerais"},
			sets:    [][]int{{0}, {1, 2}, {0}, {3, 4}},
			items:   []item{{"Valor do principal", 30000, 2500000, 1}, {"IPTU exercício - parcela", 15000, 120000, 1}, {"Taxa de lixo", 2000, 9000, 1}, {"IPVA - cota única", 80000, 450000, 1}, {"Licenciamento anual", 9000, 16000, 1}},
			dueProb: 0.95, pad: "terms",
		},
		EN: {
			titles:  []string{"PROPERTY TAX BILL", "Estimated Tax Payment Voucher", "Sales and Use Tax Return - Payment Coupon", "Notice of Tax Due"},
			issuers: []string{"Franklin County Treasurer", "Internal Revenue Service", "Department of Revenue - State of Oregon", "City of Westbrook Tax Collector"},
			sets:    [][]int{{0, 3}, {1}, {2}, {0, 3}},
			items:   []item{{"Real property tax - first half", 80000, 650000, 1}, {"Estimated tax payment", 50000, 2000000, 1}, {"Sales and use tax due", 20000, 900000, 1}, {"Special assessment - lighting district", 2000, 12000, 1}},
			dueProb: 0.95, pad: "terms",
		},
	},
	"healthcare": {
		PT: {
			titles:  []string{"RECIBO MÉDICO", "Recibo de Consulta", "Nota Fiscal de Serviços - Laboratório", "Recibo Odontológico", "Conta Hospitalar"},
			issuers: []string{"Clínica Vida Plena Ltda.", "Dr. Ricardo Nogueira - CRM/SP 123456", "Laboratório Diagnóstico Precisão S.A.", "Odonto Sorriso Clínica Odontológica", "Hospital Santa Clara"},
			sets:    [][]int{{0, 1, 2}, {0}, {1, 2}, {3, 4}, {0, 1, 2, 5}},
			items:   []item{{"Consulta médica - clínica geral", 25000, 60000, 1}, {"Hemograma completo", 2500, 6000, 1}, {"Ultrassonografia abdominal", 18000, 42000, 1}, {"Limpeza e profilaxia dental", 15000, 35000, 1}, {"Restauração em resina", 20000, 45000, 3}, {"Diária de enfermaria", 90000, 250000, 5}},
			dueProb: 0.3, pad: "items",
		},
		EN: {
			titles:  []string{"PATIENT STATEMENT", "Statement of Services", "Medical Bill", "Dental Invoice", "Lab Services Invoice"},
			issuers: []string{"Lakeside Family Medicine", "St. Anne's Regional Hospital", "Evergreen Physical Therapy", "Bright Smile Dental Group", "ClearView Diagnostics Lab"},
			sets:    [][]int{{0, 1, 2, 5}, {0, 1, 2, 5}, {4}, {3}, {1, 5, 2}},
			items:   []item{{"Office visit, established patient", 12000, 28000, 1}, {"Comprehensive metabolic panel", 4500, 12000, 1}, {"X-ray, chest 2 views", 9000, 24000, 1}, {"Dental cleaning", 9500, 18000, 1}, {"Physical therapy session", 9000, 16000, 6}, {"Venipuncture (blood draw)", 1500, 3500, 1}},
			dueProb: 0.7, pad: "items",
		},
	},
}
