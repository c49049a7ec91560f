package numfmt

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// The digits rule (MEASUREMENT.md "Digits and dispersion"): a measured
// figure (a latency, a rate, tokens/s, documents/hour) is printed with at
// most MaxDigits significant digits, and, where its repetitions' range is
// known, only down to the first digit that range affects, but never fewer
// than MinDigits. One grouping style everywhere: thousands separated by
// commas ("216,000"), never "216k" on one page and "216000" on another.
const (
	MinDigits = 2
	MaxDigits = 3
)

// Exponent is the power of ten of v's leading digit (215598 → 5); 0 for 0,
// NaN and infinities.
func Exponent(v float64) int {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return int(math.Floor(math.Log10(math.Abs(v))))
}

// SpreadDigits is how many significant digits a median supports when its
// repetitions ranged over [lo, hi]: the median's digits down to the first
// one the range's width affects, at least MinDigits and at most MaxDigits.
// A zero range (or one repetition) supports MaxDigits.
func SpreadDigits(median, lo, hi float64) int {
	width := hi - lo
	if !(width > 0) || median == 0 {
		return MaxDigits
	}
	return min(max(Exponent(median)-Exponent(width)+1, MinDigits), MaxDigits)
}

// Unit is the power of ten a figure of median's size is rounded to when it
// keeps digits significant digits (215598, 2 → 4: rounded to 10,000); one
// more when rounding carries into a new leading digit (9.9996 → "10.0",
// not "10.00"); 0 for 0.
func Unit(median float64, digits int) int {
	if median == 0 {
		return 0
	}
	e := Exponent(median)
	exp := e - digits + 1
	if Exponent(RoundAt(median, exp)) > e {
		exp++
	}
	return exp
}

// RoundAt rounds v to a multiple of 10^exp.
func RoundAt(v float64, exp int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	if exp >= 0 {
		p := math.Pow10(exp)
		return math.Round(v/p) * p
	}
	p := math.Pow10(-exp)
	return math.Round(v*p) / p
}

// FigureAt writes v rounded to a multiple of 10^exp, its integer part
// grouped by thousands ("220,000", "37.5", "0.042"): the one way a measured
// figure is written.
func FigureAt(v float64, exp int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	r := RoundAt(v, exp)
	if exp >= 0 {
		return GroupDigits(int64(r))
	}
	s := strconv.FormatFloat(math.Abs(r), 'f', -exp, 64)
	whole, frac, _ := strings.Cut(s, ".")
	n, _ := strconv.ParseInt(whole, 10, 64)
	out := GroupDigits(n) + "." + frac
	if r < 0 {
		out = "-" + out
	}
	return out
}

// Figure writes a measured figure with MaxDigits significant digits
// ("215598" → "216,000", "37.46" → "37.5").
func Figure(v float64) string { return FigureAt(v, Unit(v, MaxDigits)) }

// FigureSpread writes a median and, when its repetitions differ, their
// range, all three rounded to the digit the range supports (SpreadDigits):
// "220,000 (200,000–230,000)". n is the number of repetitions; below 2
// only the median is written, with MaxDigits.
func FigureSpread(n int, median, lo, hi float64) (med, rng string) {
	if n < 2 || hi <= lo {
		return Figure(median), ""
	}
	exp := Unit(median, SpreadDigits(median, lo, hi))
	return FigureAt(median, exp), FigureAt(lo, exp) + "–" + FigureAt(hi, exp)
}

// Duration writes nanoseconds with MaxDigits significant digits ("178ms",
// "17.3ms", "1.23s", "41.2s").
func Duration(ns int64) string { return DurationAt(ns, Unit(float64(ns), MaxDigits)) }

// DurationAt writes nanoseconds rounded to a multiple of 10^exp ns.
func DurationAt(ns int64, exp int) string {
	d := time.Duration(ns)
	if d <= 0 || exp <= 0 {
		return d.String()
	}
	return d.Round(time.Duration(math.Pow10(exp))).String()
}
