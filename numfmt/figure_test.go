package numfmt

import (
	"math"
	"strings"
	"testing"
)

func TestFigure(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{
		{215598, "216,000"}, {3274.4, "3,270"}, {81000, "81,000"}, {37.46, "37.5"}, {40, "40.0"},
		{0.04213, "0.0421"}, {999.6, "1,000"}, {9.99949, "10.0"}, {-1234.5, "-1,230"}, {0, "0"}, {1234567.4, "1,230,000"},
	} {
		if got := Figure(tt.v); got != tt.want {
			t.Errorf("Figure(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestSpreadDigits(t *testing.T) {
	for _, tt := range []struct {
		median, lo, hi float64
		want           int
	}{
		{215598, 201667, 227900, 2}, // the range changes the second digit: 220,000
		{215598, 215000, 216000, 3}, // a narrow range: capped at 3
		{215598, 100000, 400000, 2}, // a wide range: floored at 2
		{178, 150, 207, 2},
		{178, 178, 178, 3}, // no range
	} {
		if got := SpreadDigits(tt.median, tt.lo, tt.hi); got != tt.want {
			t.Errorf("SpreadDigits(%v, %v, %v) = %d, want %d", tt.median, tt.lo, tt.hi, got, tt.want)
		}
	}
	med, rng := FigureSpread(3, 215598, 201667, 227900)
	if med != "220,000" || rng != "200,000–230,000" {
		t.Errorf("FigureSpread = %q %q", med, rng)
	}
	if med, rng := FigureSpread(1, 215598, 215598, 215598); med != "216,000" || rng != "" {
		t.Errorf("FigureSpread of one repetition = %q %q", med, rng)
	}
}

// TestFigureDigits: whatever the figure, at most three significant digits
// are printed (trailing zeros of a grouped integer are not significant).
func TestFigureDigits(t *testing.T) {
	for e := -4; e <= 9; e++ {
		for _, m := range []float64{1.23456, 2.71828, 9.99949, 5.5555} {
			v := m * math.Pow10(e)
			if n := significant(Figure(v)); n > MaxDigits {
				t.Errorf("Figure(%v) = %q: %d significant digits", v, Figure(v), n)
			}
		}
	}
}

// significant counts a written figure's significant digits: from its
// first non-zero digit to its last digit, trailing zeros of an integer
// left out.
func significant(s string) int {
	s = strings.TrimLeft(strings.ReplaceAll(strings.TrimPrefix(s, "-"), ",", ""), "0.")
	if !strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
	}
	return len(strings.ReplaceAll(s, ".", ""))
}
