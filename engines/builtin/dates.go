package builtin

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// dateLabels maps the labels documents put before a date to what the date is.
// Only "issue" dates are answers; the others are decoys.
var dateLabels = map[string]string{
	// Portuguese
	"data de emissão": "issue", "emissão": "issue", "emitido em": "issue", "data": "issue",
	"data do documento": "issue", "data da emissão": "issue", "data/hora de emissão": "issue",
	"data do recibo": "issue", "emitida em": "issue", "data emissão": "issue",
	"vencimento": "due", "data de vencimento": "due", "pagar até": "due", "vence em": "due",
	"período de referência": "period", "referência": "period", "período de consumo": "period",
	"competência": "period", "período": "period",
	"data da leitura": "other", "próxima leitura": "other", "data de entrega": "other",
	"data do pagamento": "other", "data de saída": "other", "check-in": "other", "check-out": "other",
	"data do atendimento": "other", "data da viagem": "other", "leitura": "other", "pago em": "other",
	"data de entrada": "other", "validade": "other", "válido até": "other",
	// English
	"invoice date": "issue", "date of issue": "issue", "issue date": "issue", "date": "issue",
	"issued": "issue", "issued on": "issue", "statement date": "issue", "bill date": "issue",
	"receipt date": "issue", "billing date": "issue", "dated": "issue",
	"due date": "due", "payment due": "due", "pay by": "due", "due": "due", "due on": "due",
	"payment due date": "due", "due by": "due",
	"billing period": "period", "service period": "period", "statement period": "period", "period": "period",
	"meter read date": "other", "next reading": "other", "delivery date": "other", "payment date": "other",
	"departure": "other", "arrival": "other", "date of service": "other", "ship date": "other",
	"service date": "other", "read date": "other", "order date": "other", "valid until": "other",
	"expires": "other", "last payment": "other", "paid on": "other", "paid": "other",
}

// Date scores: a labelled issue date wins; a date after unlabelled text (a
// signature line "São Paulo, 12/03/2025.") is a fallback; a decoy, or a
// date that starts a table row, is never an answer.
const (
	scoreIssue      = 10
	scoreUnlabelled = 3
)

var (
	monthsPT = map[string]int{"janeiro": 1, "fevereiro": 2, "março": 3, "abril": 4, "maio": 5, "junho": 6,
		"julho": 7, "agosto": 8, "setembro": 9, "outubro": 10, "novembro": 11, "dezembro": 12,
		"jan": 1, "fev": 2, "mar": 3, "abr": 4, "mai": 5, "jun": 6, "jul": 7, "ago": 8, "set": 9, "out": 10, "nov": 11, "dez": 12}
	monthsEN = map[string]int{"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6,
		"july": 7, "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12}
)

const (
	enMonth = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)`
	ptMonth = `(janeiro|fevereiro|março|abril|maio|junho|julho|agosto|setembro|outubro|novembro|dezembro)`
	ptAbbr  = `(jan|fev|mar|abr|mai|jun|jul|ago|set|out|nov|dez)`
)

// dateForms are the date layouts the extractor reads. Each regexp's groups
// are converted by its parse function.
var dateForms = []struct {
	hint  func(low string) bool // a cheap test that the form may occur, to spare the regexp
	re    *regexp.Regexp
	parse func(m []string, en bool) (y, mo, d int)
}{
	{hasDash, regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`), func(m []string, _ bool) (int, int, int) {
		return atoi(m[1]), atoi(m[2]), atoi(m[3])
	}},
	{hasDe, regexp.MustCompile(`(?i)\b(\d{1,2}) de ` + ptMonth + ` de (\d{4})\b`), func(m []string, _ bool) (int, int, int) {
		return atoi(m[3]), monthsPT[strings.ToLower(m[2])], atoi(m[1])
	}},
	{hasDash, regexp.MustCompile(`(?i)\b(\d{1,2})-` + ptAbbr + `-(\d{4})\b`), func(m []string, _ bool) (int, int, int) {
		return atoi(m[3]), monthsPT[strings.ToLower(m[2])], atoi(m[1])
	}},
	{hasDash, regexp.MustCompile(`(?i)\b(\d{1,2})-` + enMonth + `-(\d{2}|\d{4})\b`), func(m []string, _ bool) (int, int, int) {
		return year(m[3]), monthsEN[strings.ToLower(m[2])], atoi(m[1])
	}},
	{hasMonth, regexp.MustCompile(`(?i)\b` + enMonth + `\.? (\d{1,2}),? (\d{4})\b`), func(m []string, _ bool) (int, int, int) {
		return atoi(m[3]), monthsEN[strings.ToLower(m[1])], atoi(m[2])
	}},
	{hasMonth, regexp.MustCompile(`(?i)\b(\d{1,2}) ` + enMonth + `,? (\d{4})\b`), func(m []string, _ bool) (int, int, int) {
		return atoi(m[3]), monthsEN[strings.ToLower(m[2])], atoi(m[1])
	}},
	{hasSlashOrDot, regexp.MustCompile(`\b(\d{1,2})[./](\d{1,2})[./](\d{4}|\d{2})\b`), func(m []string, en bool) (int, int, int) {
		a, b := atoi(m[1]), atoi(m[2])
		switch {
		case a > 12: // day first
		case b > 12 || en: // month first
			a, b = b, a
		}
		return year(m[3]), b, a
	}},
}

func hasDash(low string) bool       { return strings.Contains(low, "-") }
func hasDe(low string) bool         { return strings.Contains(low, " de ") }
func hasSlashOrDot(low string) bool { return strings.ContainsAny(low, "./") }

// hasMonth tests for the three letters every English month name starts with.
func hasMonth(low string) bool {
	for _, m := range []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"} {
		if strings.Contains(low, m) {
			return true
		}
	}
	return false
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func year(s string) int {
	y := atoi(s)
	if len(s) == 2 {
		y += 2000
	}
	return y
}

// foundDate is one date in a line.
type foundDate struct {
	start int
	iso   string
}

// findDates returns the valid calendar dates of a line, in order.
func findDates(line string, en bool) []foundDate {
	if !strings.ContainsAny(line, "0123456789") {
		return nil
	}
	var out []foundDate
	low := strings.ToLower(line)
	taken := make([]bool, len(line)+1)
	for _, f := range dateForms {
		if !f.hint(low) {
			continue
		}
		for _, m := range f.re.FindAllStringSubmatchIndex(line, -1) {
			if taken[m[0]] || taken[m[1]-1] {
				continue
			}
			groups := make([]string, len(m)/2)
			for g := range groups {
				if m[2*g] >= 0 {
					groups[g] = line[m[2*g]:m[2*g+1]]
				}
			}
			y, mo, d := f.parse(groups, en)
			t := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
			if mo < 1 || mo > 12 || t.Day() != d || t.Year() != y {
				continue
			}
			for i := m[0]; i < m[1]; i++ {
				taken[i] = true
			}
			out = append(out, foundDate{start: m[0], iso: fmt.Sprintf("%04d-%02d-%02d", y, mo, d)})
		}
	}
	// Regexps ran one form after another: put the dates back in line order.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].start < out[j-1].start; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// pickDate returns the issue date: the first date labelled as one, else the
// first unlabelled date, else nil. A line labelled as the issue date that
// carries no readable date ("Data: ____") means the date is missing.
func pickDate(lines []docLine, en bool) *string {
	best, bestScore := "", 0
	for _, l := range lines {
		dates := findDates(l.text, en)
		if len(dates) == 0 {
			if isMissingIssue(l.text) && bestScore < scoreIssue {
				return nil
			}
			continue
		}
		label := labelBefore(l.text, dates[0].start)
		score := scoreUnlabelled
		switch classify(label, dateLabels) {
		case "issue":
			score = scoreIssue
		case "":
			if label == "" {
				continue // a table row (a timesheet, call records) starts with its date
			}
		default:
			continue
		}
		if score > bestScore {
			best, bestScore = dates[0].iso, score
		}
	}
	if bestScore == 0 {
		return nil
	}
	return &best
}

var missingIssue = regexp.MustCompile(`(?i)^\s*(data|date|data de emissão|date of issue)\s*:\s*(_|\(n)`)

// isMissingIssue recognises an issue-date line left blank or "not stated".
func isMissingIssue(line string) bool { return missingIssue.MatchString(line) }
