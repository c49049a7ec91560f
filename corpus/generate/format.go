package generate

import (
	"fmt"
	"strings"
	"time"
)

// formatDate writes t in one of the forms of DateLayouts[lang], chosen by
// style (any int; taken modulo the number of forms).
func formatDate(lang Lang, style int, t time.Time) string {
	d, m, y := t.Day(), int(t.Month()), t.Year()
	if lang == PT {
		switch style % 6 {
		case 0:
			return fmt.Sprintf("%02d/%02d/%04d", d, m, y)
		case 1:
			return fmt.Sprintf("%d de %s de %d", d, MonthsPT[m-1], y)
		case 2:
			return t.Format("2006-01-02")
		case 3:
			return fmt.Sprintf("%02d.%02d.%04d", d, m, y)
		case 4:
			return fmt.Sprintf("%02d/%02d/%02d", d, m, y%100)
		default:
			return fmt.Sprintf("%02d-%s-%04d", d, MonthsPT[m-1][:3], y)
		}
	}
	switch style % 6 {
	case 0:
		return fmt.Sprintf("%s %d, %d", MonthsEN[m-1], d, y)
	case 1:
		return fmt.Sprintf("%02d-%s-%02d", d, MonthsEN[m-1][:3], y%100)
	case 2:
		return t.Format("2006-01-02")
	case 3:
		return fmt.Sprintf("%s %d, %d", MonthsEN[m-1][:3], d, y)
	case 4:
		return fmt.Sprintf("%d %s %d", d, MonthsEN[m-1], y)
	default:
		if d > 12 {
			return fmt.Sprintf("%02d/%02d/%04d", m, d, y)
		}
		return fmt.Sprintf("%s %d, %d", MonthsEN[m-1], d, y)
	}
}

// groupThousands writes the integer part of a non-negative number with sep
// between groups of three digits.
func groupThousands(n int64, sep string) string {
	s := fmt.Sprint(n)
	if sep == "" || len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// number writes cents (non-negative) with the given thousands and decimal
// separators: number(123456, ".", ",") = "1.234,56".
func number(cents int64, thousands, decimal string) string {
	return groupThousands(cents/100, thousands) + decimal + fmt.Sprintf("%02d", cents%100)
}

// formatAmount writes cents in currency cur ("BRL", "USD", "EUR") in one of
// the forms of AmountLayouts[cur], chosen by style. A negative amount gets a
// minus sign (or, in some English styles, accounting parentheses).
func formatAmount(cur string, style int, cents int64) string {
	neg := cents < 0
	if neg {
		cents = -cents
	}
	var s string
	switch cur {
	case "BRL":
		switch style % 4 {
		case 0:
			s = "R$ " + number(cents, ".", ",")
		case 1:
			s = "R$" + number(cents, ".", ",")
		case 2:
			s = number(cents, ".", ",")
		default:
			s = "R$ " + number(cents, "", ",")
		}
		if neg {
			return "-" + s
		}
		return s
	case "EUR":
		switch style % 4 {
		case 0:
			s = "€" + number(cents, ".", ",")
		case 1:
			s = "EUR " + number(cents, ",", ".")
		case 2:
			s = number(cents, ".", ",") + " €"
		default:
			s = "€ " + number(cents, ",", ".")
		}
		if neg {
			return "-" + s
		}
		return s
	default:
		switch style % 5 {
		case 0:
			s = "USD " + number(cents, ",", ".")
		case 1:
			s = "$" + number(cents, ",", ".")
		case 2:
			s = "US$ " + number(cents, ",", ".")
		case 3:
			s = number(cents, "", ".")
		default:
			s = number(cents, ",", ".")
		}
		if neg {
			if style%2 == 1 {
				return "(" + s + ")"
			}
			return "-" + s
		}
		return s
	}
}

// decimalString writes cents as the expected-amount decimal string: "1234.56", "-80.00".
func decimalString(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}
