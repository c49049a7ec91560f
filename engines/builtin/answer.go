package builtin

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Perturbation rates per weight format: the share of documents whose answer
// a quantised model gets wrong where the bf16 model gets it right, split into
// format errors (a fence, a string amount, prose around the JSON) and quality
// errors (a date off by a day, the subtotal taken, the wrong category).
// Chosen so that int8 loses ~0.5-1 point of acceptance and int4 ~2-3. One
// draw per document serves every variant, so the documents int8 gets wrong
// are among those int4 gets wrong, as a coarser quantisation of the same
// weights would.
var variantRates = map[string]struct{ format, quality float64 }{
	"bf16": {0, 0},
	"int8": {0.002, 0.005},
	"int4": {0.006, 0.017},
}

// temperatureRate is the extra perturbation rate per unit of temperature:
// sampling at temperature 1 changes ~4% of answers.
const temperatureRate = 0.04

// perturbation is one way an answer goes wrong.
type perturbation string

const (
	perturbNone         perturbation = ""
	perturbFence        perturbation = "fence"         // format (strict): ```json ... ```
	perturbStringAmount perturbation = "string_amount" // format: "amount": "1234.56"
	perturbProse        perturbation = "prose"         // format (strict): a sentence before the object
	perturbDate         perturbation = "date_off"      // quality: a day late
	perturbSubtotal     perturbation = "subtotal"      // quality: a decoy amount
	perturbCategory     perturbation = "category"      // quality: the runner-up category
)

var (
	formatPerturbations  = []perturbation{perturbFence, perturbStringAmount, perturbProse}
	qualityPerturbations = []perturbation{perturbDate, perturbSubtotal, perturbCategory}
)

// unit returns a deterministic number in [0,1) for the given parts.
func unit(parts ...any) float64 {
	h := sha256.Sum256([]byte(fmt.Sprintln(parts...)))
	return float64(binary.BigEndian.Uint64(h[:8])>>11) / (1 << 53)
}

// docHash identifies a document by its text, so that every draw made for it
// is the same whatever the request id, the order or the concurrency.
func docHash(doc string) string {
	h := sha256.Sum256([]byte(doc))
	return hex.EncodeToString(h[:12]) // as fmt's %x, without its cost per request
}

// choosePerturbation draws the perturbation of one answer: per (variant,
// document) for the weight format, plus per (seed, temperature, document)
// when sampling.
func choosePerturbation(variant, doc string, temperature float64, seed string) perturbation {
	r := variantRates[variant]
	u := unit("quantisation", doc)
	switch {
	case u < r.format:
		return formatPerturbations[int(unit("quantisation-kind", doc)*float64(len(formatPerturbations)))]
	case u < r.format+r.quality:
		return qualityPerturbations[int(unit("quantisation-kind", doc)*float64(len(qualityPerturbations)))]
	}
	if temperature > 0 {
		t := unit("temperature", seed, temperature, doc)
		rate := temperatureRate * temperature
		switch {
		case t < rate/3:
			return formatPerturbations[int(unit("temperature-kind", seed, doc)*float64(len(formatPerturbations)))]
		case t < rate:
			return qualityPerturbations[int(unit("temperature-kind", seed, doc)*float64(len(qualityPerturbations)))]
		}
	}
	return perturbNone
}

// answerJSON writes the extraction as compact JSON, in the key order and
// spacing chat models use.
func answerJSON(ex Extraction, p perturbation) string {
	p = applicable(ex, p)
	date, amount, category := "null", "null", "null"
	if ex.Date != nil {
		d := *ex.Date
		if p == perturbDate {
			if t, err := time.Parse(time.DateOnly, d); err == nil {
				d = t.AddDate(0, 0, 1).Format(time.DateOnly)
			}
		}
		date = `"` + d + `"`
	}
	if a := ex.Amount; a != nil {
		if p == perturbSubtotal && ex.AltAmount != nil {
			a = ex.AltAmount
		}
		amount = a.String()
		if p == perturbStringAmount {
			amount = `"` + amount + `"`
		}
	}
	if c := ex.Category; c != nil {
		if p == perturbCategory && ex.AltCategory != nil {
			c = ex.AltCategory
		}
		category = `"` + *c + `"`
	}
	obj := fmt.Sprintf(`{"date": %s, "amount": %s, "category": %s}`, date, amount, category)
	switch p {
	case perturbFence:
		return "```json\n" + obj + "\n```"
	case perturbProse:
		return "Here is the extracted data:\n" + obj
	}
	return obj
}

// applicable returns p, or the next quality perturbation that changes this
// answer when p would not (no date to shift, no decoy amount, no runner-up).
func applicable(ex Extraction, p perturbation) perturbation {
	ok := func(p perturbation) bool {
		switch p {
		case perturbDate:
			return ex.Date != nil
		case perturbSubtotal:
			return ex.Amount != nil && ex.AltAmount != nil && *ex.AltAmount != *ex.Amount
		case perturbCategory:
			return ex.Category != nil && ex.AltCategory != nil
		}
		return true
	}
	for i, q := range qualityPerturbations {
		if q != p {
			continue
		}
		for k := range qualityPerturbations {
			if c := qualityPerturbations[(i+k)%len(qualityPerturbations)]; ok(c) {
				return c
			}
		}
		return perturbNone
	}
	return p
}

// proseAnswer is a model ignoring the output format: a sentence, no JSON.
func proseAnswer(ex Extraction) string {
	var b strings.Builder
	b.WriteString("Based on the document")
	if ex.Date != nil {
		fmt.Fprintf(&b, ", it was issued on %s", *ex.Date)
	}
	if ex.Amount != nil {
		fmt.Fprintf(&b, " and the total due is %s", ex.Amount)
	}
	if ex.Category != nil {
		fmt.Fprintf(&b, "; it looks like a %s expense", strings.ReplaceAll(*ex.Category, "_", " "))
	}
	b.WriteString(".")
	return b.String()
}

// splitTokens cuts text into model-like tokens: a word or a number (with
// its inner separators) carrying the space before it, as BPE vocabularies
// do, or a run of punctuation. A compact answer makes 13 of them; their
// concatenation is the text.
func splitTokens(s string) []string {
	letter := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80 }
	alnum := func(c byte) bool { return letter(c) || isDigit(c) }
	var out []string
	for i := 0; i < len(s); {
		start := i
		if s[i] == ' ' && i+1 < len(s) && alnum(s[i+1]) {
			i++
		}
		switch {
		case letter(s[i]):
			for i < len(s) && letter(s[i]) {
				i++
			}
		case isDigit(s[i]):
			for i < len(s) && (isDigit(s[i]) || (s[i] == '.' || s[i] == ',' || s[i] == '-') && i+1 < len(s) && isDigit(s[i+1])) {
				i++
			}
		default:
			for i < len(s) && !alnum(s[i]) {
				if s[i] == ' ' && i > start && i+1 < len(s) && alnum(s[i+1]) {
					break
				}
				i++
			}
		}
		out = append(out, s[start:i])
	}
	return out
}
