package eval

import (
	"fmt"
	"math"

	"github.com/extractbench/extractbench/numfmt"
)

// The one printer of figures: every table, report, verdict and plan prints
// a duration, a rate or a share through these, so one figure reads the same
// everywhere, and no more digits are quoted than repeated passes support
// (numfmt's digits rule: at most three significant digits, fewer where the
// repetitions' range already changes the third; MEASUREMENT.md "Digits and
// dispersion").

// FormatDuration prints nanoseconds with three significant digits ("178ms",
// "17.3ms", "1.23s", "41.2s").
func FormatDuration(ns int64) string { return numfmt.Duration(ns) }

// FormatRate prints a rate (documents/hour, tokens/s, requests/s) with three
// significant digits, thousands grouped ("216,000", "37.5").
func FormatRate(v float64) string { return numfmt.Figure(v) }

// FormatShare prints a share as a percentage with one decimal ("98.0%").
func FormatShare(share float64) string { return fmt.Sprintf("%.1f%%", share*100) }

// unit is the power of ten the spread's figures are rounded to: the digit
// its range supports (numfmt.SpreadDigits), three significant digits for
// one repetition.
func (s Spread) unit() int {
	digits := numfmt.MaxDigits
	if s.N > 1 {
		digits = numfmt.SpreadDigits(s.Median, s.Min, s.Max)
	}
	return numfmt.Unit(s.Median, digits)
}

// varies reports whether the spread has a range worth printing.
func (s Spread) varies() bool { return s.N > 1 && s.Max > s.Min }

// Duration prints the median of a spread of nanoseconds with the digits its
// range supports ("210ms" for 212ms over 170ms–250ms); "-" when no
// repetition had the figure.
func (s Spread) Duration() string {
	if s.N == 0 {
		return "-"
	}
	return numfmt.DurationAt(int64(math.Round(s.Median)), s.unit())
}

// DurationRange prints the range of a spread of nanoseconds at the median's
// digits ("170ms–250ms"); "" for one repetition or none.
func (s Spread) DurationRange() string {
	if !s.varies() {
		return ""
	}
	u := s.unit()
	return numfmt.DurationAt(int64(math.Round(s.Min)), u) + "–" + numfmt.DurationAt(int64(math.Round(s.Max)), u)
}

// Rate prints the median of a spread of rates with the digits its range
// supports ("220,000" for 215,598 over 201,667–227,900); "-" when none.
func (s Spread) Rate() string {
	if s.N == 0 {
		return "-"
	}
	med, _ := numfmt.FigureSpread(s.N, s.Median, s.Min, s.Max)
	return med
}

// RateRange prints the range of a spread of rates at the median's digits
// ("200,000–230,000"); "" for one repetition or none.
func (s Spread) RateRange() string {
	if !s.varies() {
		return ""
	}
	_, rng := numfmt.FigureSpread(s.N, s.Median, s.Min, s.Max)
	return rng
}
