package generate

import (
	"testing"
	"time"
)

func TestFormatDate(t *testing.T) {
	mar12 := time.Date(2025, 3, 12, 0, 0, 0, 0, time.UTC)
	mar15 := time.Date(2025, 3, 15, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		lang  Lang
		style int
		t     time.Time
		want  string
	}{
		{PT, 0, mar12, "12/03/2025"},
		{PT, 1, mar12, "12 de março de 2025"},
		{PT, 2, mar12, "2025-03-12"},
		{PT, 3, mar12, "12.03.2025"},
		{PT, 4, mar12, "12/03/25"},
		{PT, 5, mar12, "12-mar-2025"},
		{EN, 0, mar12, "March 12, 2025"},
		{EN, 1, mar12, "12-Mar-25"},
		{EN, 3, mar12, "Mar 12, 2025"},
		{EN, 4, mar12, "12 March 2025"},
		{EN, 5, mar15, "03/15/2025"},
		{EN, 5, mar12, "March 12, 2025"}, // month-first only when unambiguous
	}
	for _, tt := range tests {
		if got := formatDate(tt.lang, tt.style, tt.t); got != tt.want {
			t.Errorf("formatDate(%s, %d) = %q, want %q", tt.lang, tt.style, got, tt.want)
		}
	}
}

func TestFormatAmount(t *testing.T) {
	tests := []struct {
		cur   string
		style int
		cents int64
		want  string
	}{
		{"BRL", 0, 123456, "R$ 1.234,56"},
		{"BRL", 1, 123456, "R$1.234,56"},
		{"BRL", 2, 123456, "1.234,56"},
		{"BRL", 3, 123456, "R$ 1234,56"},
		{"BRL", 0, -8000, "-R$ 80,00"},
		{"USD", 0, 123456, "USD 1,234.56"},
		{"USD", 1, 123456, "$1,234.56"},
		{"USD", 3, 123456, "1234.56"},
		{"USD", 1, -8000, "($80.00)"},
		{"USD", 0, 123456789, "USD 1,234,567.89"},
		{"EUR", 0, 123456, "€1.234,56"},
		{"EUR", 1, 123456, "EUR 1,234.56"},
		{"EUR", 2, 5, "0,05 €"},
	}
	for _, tt := range tests {
		if got := formatAmount(tt.cur, tt.style, tt.cents); got != tt.want {
			t.Errorf("formatAmount(%s, %d, %d) = %q, want %q", tt.cur, tt.style, tt.cents, got, tt.want)
		}
	}
	if got, want := decimalString(-8000), "-80.00"; got != want {
		t.Errorf("decimalString(-8000) = %q, want %q", got, want)
	}
}
