package builtin

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// categoryWords are the words that vote for each category, with a weight:
// 3 for words that name the business (a title, "aluguel"), 1 for words that
// other kinds of documents also use now and then.
var categoryWords = map[string]map[string]int{
	"utilities": {
		"energia elétrica": 3, "conta de luz": 3, "kwh": 2, "água e esgoto": 3, "gás canalizado": 3, "saneamento": 3,
		"distribuidora": 1, "bandeira": 2, "iluminação pública": 2, "tarifa de água": 3, "tarifa de esgoto": 3, "consumo de gás": 3,
		"electricity": 3, "electric": 2, "water and sewer": 3, "water & sewer": 3, "sewer": 2, "natural gas": 3, "therms": 2,
		"utility bill": 3, "meter": 1, "power & light": 3, "water usage": 2, "leitura": 1, "m³": 1,
	},
	"telecom": {
		"telefonia": 3, "telecomunicações": 3, "telecomunicação": 3, "internet": 2, "banda larga": 3, "plano móvel": 3,
		"celular": 3, "ligações": 2, "dados móveis": 3, "modem": 2, "fibra": 2, "pós-pago": 3, "telecom": 3,
		"wireless": 3, "mobile": 2, "broadband": 3, "call detail": 3, "data usage": 2, "phone bill": 3, "router": 2,
		"communications": 2, "unlimited plus": 3, "additional line": 2, "linha adicional": 2, "long dist": 2,
	},
	"software": {
		"licença de software": 3, "software": 3, "assinatura": 2, "saas": 3, "nuvem": 2, "usuários": 1, "plano anual": 2,
		"erp": 3, "crm": 1, "plataforma": 1, "armazenamento": 2, "implantação": 1, "suporte técnico": 1,
		"subscription": 3, "license": 2, "seats": 3, "per seat": 3, "cloud": 2, "api": 2, "annual plan": 2,
		"business plan": 2, "team plan": 3, "storage": 1, "premium support": 2, "overage": 2,
	},
	"office_supplies": {
		"papelaria": 3, "papel a4": 3, "papel sulfite": 3, "canetas": 2, "caneta": 2, "toner": 3, "material de escritório": 3,
		"grampeador": 3, "pasta suspensa": 2, "bloco adesivo": 2, "cadeira de escritório": 2, "suprimentos": 2, "danfe": 1,
		"office supplies": 3, "office supply": 3, "business supply": 3, "copy paper": 3, "pens": 2, "stapler": 3, "binders": 2,
		"binder": 2, "sticky notes": 2, "office chair": 2, "packing slip": 2, "paper": 1,
	},
	"travel": {
		"passagem aérea": 3, "passagem": 2, "hospedagem": 3, "hotel": 3, "diária apartamento": 3, "táxi": 3, "locação de veículo": 3,
		"bilhete": 2, "linhas aéreas": 3, "tarifa aérea": 3, "taxa de embarque": 3, "pousada": 3, "corrida": 2, "locadora": 2,
		"frigobar": 2, "airfare": 3, "lodging": 3, "room night": 3, "room charge": 3, "taxi": 3, "car rental": 3,
		"boarding": 2, "airlines": 3, "e-ticket": 3, "folio": 3, "trip receipt": 3, "cab": 2, "room service": 2,
	},
	"meals": {
		"restaurante": 3, "refeição": 3, "cupom fiscal": 1, "nfc-e": 1, "couvert": 3, "almoço": 2, "jantar": 2,
		"churrascaria": 3, "cantina": 3, "padaria": 3, "buffet": 3, "prato executivo": 3, "sobremesa": 2, "refrigerante": 2,
		"café expresso": 2, "conta de mesa": 3, "restaurant": 3, "meal": 2, "dinner": 2, "lunch": 2, "gratuity": 3,
		"catering": 3, "guest check": 3, "trattoria": 3, "bbq": 3, "cafe": 2, "salad": 2, "steak": 2, "espresso": 2,
		"wine": 2, "cheesecake": 2, "iced tea": 2, "salmon": 2,
	},
	"rent": {
		"aluguel": 3, "recibo de aluguel": 3, "locatário": 2, "locador": 2, "imóvel": 2, "imóveis": 2, "condomínio": 2,
		"imobiliária": 3, "locação": 1, "fundo de reserva": 2, "seguro incêndio": 2, "administradora predial": 3,
		"rent": 3, "lease": 3, "tenant": 2, "landlord": 2, "premises": 2, "monthly rent": 3, "base rent": 3,
		"property management": 3, "realty": 2, "leasing": 2, "common area": 2, "parking space": 1, "pet rent": 2,
	},
	"professional_services": {
		"nfs-e": 1, "consultoria": 3, "honorários": 3, "assessoria": 3, "serviços prestados": 2, "contabilidade": 3,
		"contábil": 3, "contábeis": 3, "advogados": 3, "advocatícios": 3, "laudo técnico": 3, "arquitetura": 2,
		"consulting": 3, "professional fees": 3, "professional services": 3, "legal services": 3, "hours": 1,
		"retainer": 3, "advisory": 2, "advisors": 2, "bookkeeping": 3, "expert report": 3, "fee note": 3,
		"services rendered": 3, "llp": 2, "accounting": 2, "strategy": 2,
	},
	"taxes": {
		"darf": 3, "iptu": 2, "ipva": 3, "das": 2, "documento de arrecadação": 3, "receita federal": 2, "guia de recolhimento": 3,
		"prefeitura": 2, "secretaria da fazenda": 3, "carnê": 2, "taxa de lixo": 2, "licenciamento anual": 2,
		"valor do principal": 2, "property tax": 3, "tax bill": 3, "estimated tax": 3, "assessment": 1,
		"tax payment voucher": 3, "payment voucher": 2, "county treasurer": 3, "treasurer": 2, "department of revenue": 3,
		"tax collector": 3, "internal revenue": 3, "notice of tax due": 3, "use tax": 2, "payment coupon": 2,
	},
	"healthcare": {
		"consulta médica": 3, "consulta": 2, "clínica": 3, "exames": 2, "laboratório": 2, "recibo médico": 3, "crm/": 2,
		"odontológico": 3, "odontológica": 3, "hospital": 3, "hemograma": 3, "ultrassonografia": 3, "enfermaria": 3,
		"médico": 2, "medical": 3, "patient": 3, "clinic": 3, "lab tests": 3, "physician": 3, "dental": 3,
		"diagnostics": 3, "office visit": 3, "metabolic panel": 3, "x-ray": 3, "physical therapy": 3, "venipuncture": 3,
		"medicine": 2, "diagnóstico": 3,
	},
}

// pickCategory returns the category whose words weigh most in the document,
// and the runner-up; nil when no word votes.
func pickCategory(doc string) (best, second *string) {
	low := strings.ToLower(doc)
	bestScore, secondScore := 0, 0
	for _, cat := range categoryNames { // a fixed order breaks ties the same way every time
		score := 0
		for w, weight := range categoryWords[cat] {
			if containsWord(low, w) {
				score += weight
			}
		}
		c := cat
		switch {
		case score > bestScore:
			second, secondScore = best, bestScore
			best, bestScore = &c, score
		case score > secondScore:
			second, secondScore = &c, score
		}
	}
	return best, second
}

// containsWord reports whether w occurs in s between non-letters, so that
// "rent" does not match "current" nor "consulta" "consultoria".
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		before, _ := utf8.DecodeLastRuneInString(s[:j])
		after, _ := utf8.DecodeRuneInString(s[j+len(w):])
		if !unicode.IsLetter(before) && !unicode.IsLetter(after) {
			return true
		}
		i = j + 1
	}
}
