package purchaseorders

// The words purchase orders are made of, per language. PT is Brazilian
// (BRL, CNPJ) or, for a share of suppliers, Portuguese (EUR, NIF).

var (
	supplierHeadsPT = []string{"Metalúrgica", "Distribuidora", "Comercial", "Indústria de Plásticos", "Papelaria", "Ferragens", "Embalagens", "Tecelagem"}
	supplierCoresPT = []string{"São João", "Paulista", "Horizonte", "Três Rios", "Ipiranga", "Açores", "Guanabara", "Conceição"}
	supplierTailsPT = []string{"Ltda.", "S.A.", "EIRELI", "Lda."}
	supplierHeadsEN = []string{"Northwind", "Blue Ridge", "Harbor", "Summit", "Crescent", "Redwood", "Lakeside", "Ironbridge"}
	supplierCoresEN = []string{"Components", "Industrial Supply", "Packaging", "Office Products", "Tooling", "Fasteners", "Electrical", "Labware"}
	supplierTailsEN = []string{"Ltd.", "Inc.", "LLC", "Co."}

	buyersPT  = []string{"Construtora Vale Verde Ltda.", "Hospital Santa Clara", "Tech Soluções Digitais Ltda.", "Escola Nova Era", "Transportes Rápido Sul S.A.", "Padaria Pão Dourado"}
	buyersEN  = []string{"Greenfield Construction Inc.", "St. Mary Clinic", "Brightpath Software LLC", "Oakwood School District", "Riverside Logistics Co.", "Maple Street Bakery"}
	peoplePT  = []string{"Ana Beatriz Souza", "João Pedro Almeida", "Mariana Costa", "Carlos Eduardo Lima", "Fernanda Ribeiro", "Rafael Gonçalves"}
	peopleEN  = []string{"Maria Lopez", "James Carter", "Emily Chen", "Robert Hughes", "Priya Nair", "Daniel Brooks"}
	streetsPT = []string{"Rua Augusta", "Av. Paulista", "Rua da Consolação", "Av. Brasil", "Rua XV de Novembro", "Av. da Liberdade"}
	citiesPT  = []string{"São Paulo - SP", "Curitiba - PR", "Belo Horizonte - MG", "Porto Alegre - RS", "Recife - PE", "Lisboa"}
	streetsEN = []string{"Main Street", "Oak Avenue", "Harbor Road", "Industrial Parkway", "Elm Street", "Commerce Drive"}
	citiesEN  = []string{"Springfield, IL", "Portland, OR", "Austin, TX", "Columbus, OH", "Raleigh, NC", "Denver, CO"}
)

// item is a catalogue entry: what the line says and its unit price range,
// in cents.
type item struct {
	desc     string
	min, max int64
}

var (
	itemsPT = []item{
		{"Parafuso sextavado M8 x 40 (caixa c/ 100)", 2500, 9000}, {"Porca sextavada M8 (caixa c/ 100)", 1200, 4000},
		{"Chapa de aço galvanizado 2 mm", 8000, 32000}, {"Tubo de PVC 50 mm (barra 6 m)", 3000, 9000},
		{"Papel sulfite A4 75 g (caixa c/ 10 resmas)", 18000, 32000}, {"Toner para impressora laser", 15000, 60000},
		{"Luva de proteção nitrílica (par)", 500, 2500}, {"Caixa de papelão ondulado 40x30x20", 300, 1500},
		{"Fita adesiva transparente 48 mm", 400, 1200}, {"Cabo flexível 2,5 mm² (rolo 100 m)", 20000, 45000},
		{"Disjuntor bipolar 32 A", 3500, 9000}, {"Tinta acrílica branca 18 L", 25000, 60000},
		{"Óleo lubrificante industrial 20 L", 30000, 70000}, {"Rolamento 6205 ZZ", 1500, 6000},
		{"Filme stretch 500 mm", 4000, 11000}, {"Detergente neutro 5 L", 1500, 4500},
	}
	itemsEN = []item{
		{"Hex bolt M8 x 40 (box of 100)", 2500, 9000}, {"Hex nut M8 (box of 100)", 1200, 4000},
		{"Galvanised steel sheet 2 mm", 8000, 32000}, {"PVC pipe 2 in (20 ft)", 3000, 9000},
		{"Copy paper letter 20 lb (case of 10 reams)", 4500, 9000}, {"Laser printer toner cartridge", 6000, 24000},
		{"Nitrile gloves (box of 100)", 900, 2500}, {"Corrugated box 16x12x8", 100, 500},
		{"Clear packing tape 2 in", 300, 900}, {"Flexible cable 12 AWG (250 ft)", 6000, 15000},
		{"Circuit breaker 2-pole 30 A", 1500, 4500}, {"Acrylic paint white 5 gal", 9000, 25000},
		{"Industrial lubricant oil 5 gal", 8000, 20000}, {"Ball bearing 6205 ZZ", 500, 2500},
		{"Stretch film 18 in", 1500, 4000}, {"Neutral detergent 1 gal", 500, 1500},
	}
)

// clause is one section of terms and conditions: a heading and the
// sentences its body draws from. Nothing in a clause has a colon, so no
// clause line reads as a labelled field.
type clause struct {
	heading   string
	sentences []string
}

var clausesPT = []clause{
	{"ENTREGA", []string{
		"A entrega deverá ser realizada no endereço indicado neste pedido, em horário comercial, de segunda a sexta-feira.",
		"Mercadorias entregues fora do prazo combinado poderão ser recusadas sem qualquer ônus para o comprador.",
		"O fornecedor deverá avisar com antecedência mínima de dois dias úteis qualquer atraso previsto.",
		"Entregas parciais somente serão aceitas mediante autorização prévia e por escrito do setor de compras.",
	}},
	{"QUALIDADE", []string{
		"Os materiais fornecidos deverão atender às normas técnicas brasileiras aplicáveis e às especificações deste pedido.",
		"O comprador poderá inspecionar os materiais no recebimento e devolver os itens que não estiverem conformes.",
		"Lotes reprovados na inspeção serão devolvidos com frete por conta do fornecedor.",
		"O fornecedor deverá manter registros de rastreabilidade de cada lote por um período mínimo de cinco anos.",
	}},
	{"FATURAMENTO E PAGAMENTO", []string{
		"A nota fiscal deverá mencionar o número deste pedido e ser emitida em nome da empresa compradora.",
		"O pagamento será efetuado por transferência bancária após o recebimento e a conferência dos materiais.",
		"Notas fiscais com divergência de preço ou quantidade serão devolvidas para correção.",
		"Não serão aceitos boletos ou cobranças emitidos em nome de terceiros.",
	}},
	{"GARANTIA", []string{
		"O fornecedor garante os materiais contra defeitos de fabricação pelo prazo mínimo de doze meses.",
		"Durante a garantia, o fornecedor substituirá sem custo os itens defeituosos no prazo de dez dias.",
		"A garantia não cobre danos causados por uso inadequado ou armazenamento fora das condições indicadas.",
	}},
	{"CONFIDENCIALIDADE", []string{
		"As partes manterão sigilo sobre as informações técnicas e comerciais trocadas em razão deste pedido.",
		"O fornecedor não poderá divulgar o nome do comprador como referência comercial sem autorização prévia.",
		"A obrigação de sigilo permanece válida por dois anos após o encerramento do fornecimento.",
	}},
	{"RESPONSABILIDADE SOCIAL E AMBIENTAL", []string{
		"O fornecedor declara cumprir a legislação trabalhista e não utilizar mão de obra infantil ou análoga à escrava.",
		"Embalagens e resíduos deverão ser descartados conforme a Política Nacional de Resíduos Sólidos.",
		"O comprador poderá realizar auditorias nas instalações do fornecedor mediante aviso prévio.",
	}},
	{"RESCISÃO", []string{
		"O comprador poderá cancelar este pedido, total ou parcialmente, em caso de descumprimento de qualquer cláusula.",
		"O cancelamento não gera direito a indenização quando motivado por atraso ou falha de qualidade do fornecedor.",
		"Fica eleito o foro da comarca do comprador para dirimir quaisquer dúvidas oriundas deste pedido.",
	}},
	{"TRANSPORTE E SEGURO", []string{
		"O transporte correrá por conta e risco do fornecedor até a efetiva entrega no local indicado.",
		"Os materiais deverão ser acondicionados de forma a evitar danos durante o transporte e o manuseio.",
		"Avarias constatadas no recebimento serão registradas no conhecimento de transporte.",
	}},
}

var clausesEN = []clause{
	{"DELIVERY", []string{
		"Goods shall be delivered to the address shown on this order during business hours, Monday through Friday.",
		"Goods delivered after the agreed schedule may be refused at no cost to the buyer.",
		"The supplier shall give at least two business days notice of any expected delay.",
		"Partial shipments are accepted only with the prior written consent of the purchasing department.",
	}},
	{"QUALITY", []string{
		"All materials shall meet the applicable industry standards and the specifications referenced in this order.",
		"The buyer may inspect the goods on receipt and return any item that does not conform.",
		"Rejected lots will be returned at the supplier's expense, freight included.",
		"The supplier shall keep traceability records for every lot for at least five years.",
	}},
	{"INVOICING AND PAYMENT", []string{
		"Invoices must quote the number of this purchase order and be addressed to the buying company.",
		"Payment will be made by bank transfer after the goods have been received and checked.",
		"Invoices whose prices or quantities differ from this order will be returned for correction.",
		"The buyer will not pay invoices issued in the name of a third party.",
	}},
	{"WARRANTY", []string{
		"The supplier warrants the goods against defects in materials and workmanship for at least twelve months.",
		"During the warranty the supplier shall replace defective items free of charge within ten days.",
		"The warranty does not cover damage caused by misuse or storage outside the stated conditions.",
	}},
	{"CONFIDENTIALITY", []string{
		"Both parties shall keep confidential the technical and commercial information exchanged under this order.",
		"The supplier shall not name the buyer as a commercial reference without prior consent.",
		"The duty of confidentiality survives for two years after the last delivery.",
	}},
	{"COMPLIANCE", []string{
		"The supplier represents that it complies with applicable labour laws and does not use child or forced labour.",
		"Packaging and waste shall be disposed of in accordance with local environmental regulations.",
		"The buyer may audit the supplier's facilities with reasonable notice.",
	}},
	{"TERMINATION", []string{
		"The buyer may cancel this order in whole or in part if the supplier breaches any of these terms.",
		"Cancellation for late delivery or poor quality gives the supplier no right to compensation.",
		"This order is governed by the laws of the state in which the buyer is located.",
	}},
	{"SHIPPING AND INSURANCE", []string{
		"Goods travel at the supplier's risk until they are delivered at the stated location.",
		"Goods shall be packed so as to prevent damage in transit and handling.",
		"Damage found on receipt will be noted on the bill of lading.",
	}},
}
