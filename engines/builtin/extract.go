package builtin

import (
	"strings"
	"unicode"
)

// Extraction is what the rule-based extractor read in one document. Nil
// fields mean the document lacks them (the answer is JSON null).
type Extraction struct {
	Date     *string // issue date, YYYY-MM-DD
	Amount   *Cents  // total due
	Category *string // one of corpus.DefaultCategories

	// The runners-up, which a perturbed (quantised) model answers instead:
	// the best decoy amount (subtotal, tax...) and the second category.
	AltAmount   *Cents
	AltCategory *string
}

// Extract reads a document (or a whole prompt that contains one) and
// returns its issue date, total due and category, the way a careful but
// imperfect model would: it trusts labels, ignores the decoys it recognises
// (due dates, periods, subtotals, taxes) and falls back on the largest
// amount when no total is labelled.
func Extract(text string) Extraction {
	return extractDoc(documentText(text))
}

// extractDoc reads a document already isolated from its prompt.
func extractDoc(doc string) Extraction {
	lines := splitLines(doc)
	en := isEnglish(doc)
	var ex Extraction
	ex.Date = pickDate(lines, en)
	ex.Amount, ex.AltAmount = pickAmount(lines, isCredit(doc))
	ex.Category, ex.AltCategory = pickCategory(doc)
	return ex
}

// documentText isolates the document inside a prompt: what follows a
// "Document:" line or sits between <document> tags, else every line that
// does not read like an instruction (mentions JSON, a date layout or the
// category list), so that the instructions' own words do not vote.
func documentText(prompt string) string {
	if i := strings.Index(prompt, "<document>"); i >= 0 {
		rest := prompt[i+len("<document>"):]
		if j := strings.Index(rest, "</document>"); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	lines := strings.Split(prompt, "\n")
	for i, l := range lines {
		switch strings.ToLower(strings.TrimSpace(l)) {
		case "document:", "documento:", "document text:", "text:", "---", "<<<", "\"\"\"", "```":
			if i+1 < len(lines) {
				return strings.Join(lines[i+1:], "\n")
			}
		}
	}
	var kept []string
	for _, l := range lines {
		if isInstruction(l) {
			continue
		}
		kept = append(kept, l)
	}
	return strings.Join(kept, "\n")
}

var categoryNames = []string{
	"utilities", "telecom", "software", "office_supplies", "travel",
	"meals", "rent", "professional_services", "taxes", "healthcare",
}

func isInstruction(line string) bool {
	low := strings.ToLower(line)
	if strings.Contains(low, "json") || strings.Contains(low, "yyyy") || strings.Contains(low, `"date"`) {
		return true
	}
	n := 0
	for _, c := range categoryNames {
		if strings.Contains(low, c) {
			n++
		}
	}
	return n >= 3
}

// docLine is one non-blank line of the document.
type docLine struct {
	text string
}

func splitLines(doc string) []docLine {
	raw := strings.Split(doc, "\n")
	out := make([]docLine, 0, len(raw))
	for _, l := range raw {
		if strings.TrimSpace(l) == "" {
			continue
		}
		out = append(out, docLine{text: l})
	}
	return out
}

// labelBefore returns the normalised text of line before byte offset i.
func labelBefore(line string, i int) string {
	s := strings.ToLower(line[:i])
	s = strings.TrimRightFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || r == ':' || r == '.' || r == '-' || r == '(' || r == '$' || r == '€'
	})
	// Currency words glued before the number belong to the value, not the label.
	for _, cur := range []string{"r$", "us$", "usd", "eur", "brl", "$"} {
		if t, ok := strings.CutSuffix(s, cur); ok {
			s = strings.TrimRightFunc(t, func(r rune) bool { return unicode.IsSpace(r) || r == ':' || r == '.' || r == '-' })
			break
		}
	}
	return s
}

// classify returns the class of the longest known label that ends label
// (labels sit right before their value), or "" when none does.
func classify(label string, vocab map[string]string) string {
	best, class := 0, ""
	for l, c := range vocab {
		if len(l) > best && strings.HasSuffix(label, l) {
			// A whole word only: "total" must not match "subtotal".
			if k := len(label) - len(l); k > 0 {
				r := rune(label[k-1])
				if unicode.IsLetter(r) || unicode.IsDigit(r) {
					continue
				}
			}
			best, class = len(l), c
		}
	}
	return class
}

var (
	englishWords    = wordSet("the", "and", "invoice", "date", "total", "due", "amount", "thank", "bill", "payment", "to", "of")
	portugueseWords = wordSet("de", "da", "do", "valor", "emissão", "vencimento", "nota", "fiscal", "pagamento", "obrigado", "a", "em")
)

func wordSet(words ...string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words {
		m[w] = true
	}
	return m
}

// isEnglish guesses the document's language, which decides how an
// ambiguous numeric date (03/04/2025) is read.
func isEnglish(doc string) bool {
	en, pt := 0, 0
	for _, w := range strings.FieldsFunc(strings.ToLower(doc), func(r rune) bool { return !unicode.IsLetter(r) }) {
		if englishWords[w] {
			en++
		}
		if portugueseWords[w] {
			pt++
		}
	}
	return en > pt
}

// isCredit recognises a credit note, whose total is negative.
func isCredit(doc string) bool {
	low := strings.ToLower(doc)
	for _, w := range []string{"credit note", "credit memo", "nota de crédito", "estorno"} {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}
