package report

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/extractbench/extractbench/eval"
)

// gib is 2^30 bytes (MEASUREMENT.md section 5): every memory figure of the
// report is in GiB and says so.
const gib = 1 << 30

// none is what a table shows for a figure that was not measured; never 0.
const none = "–"

// fmtNS prints a duration in nanoseconds as every page does
// (eval.FormatDuration: three significant digits), so that one figure reads
// the same in the report, on stdout and in compare.
func fmtNS(ns float64) string { return eval.FormatDuration(int64(math.Round(ns))) }

// fmtDist prints a distribution's value at p (0.5 or 0.95), or none.
func fmtDist(d eval.Distribution, p float64) string {
	if d.N == 0 {
		return none
	}
	if p == 0.5 {
		return fmtNS(d.P50)
	}
	return fmtNS(d.P95)
}

// fmtGiB prints bytes in GiB, or none when unavailable.
func fmtGiB(b *int64) string {
	if b == nil {
		return none
	}
	return fmt.Sprintf("%.2f GiB", float64(*b)/gib)
}

// fmtShare prints a 0–1 share as a percentage with one decimal.
func fmtShare(v float64) string { return eval.FormatShare(v) }

// fmtSharePtr prints a nullable 0–1 share, or none.
func fmtSharePtr(v *float64) string {
	if v == nil {
		return none
	}
	return fmtShare(*v)
}

// fmtCount prints a nullable count, or none.
func fmtCount(v *int64) string {
	if v == nil {
		return none
	}
	return strconv.FormatInt(*v, 10)
}

// fmtNum prints a rate as every page does (eval.FormatRate: three
// significant digits, thousands grouped), or none.
func fmtNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return none
	}
	return eval.FormatRate(v)
}

// spreadNS and spreadNum print a median over repetitions with its range
// when they differ, all at the digits the range supports (eval's printer of
// figures): "210ms (170ms–250ms)", "220,000 (200,000–230,000)".
func spreadNS(s eval.Spread) string { return withRange(s, s.Duration(), s.DurationRange()) }

func spreadNum(s eval.Spread) string { return withRange(s, s.Rate(), s.RateRange()) }

func withRange(s eval.Spread, median, rng string) string {
	switch {
	case s.N == 0:
		return none
	case rng == "":
		return median
	}
	return median + " (" + rng + ")"
}

// fmtUnixMS prints a Unix millisecond instant in UTC, or none.
func fmtUnixMS(ms int64) string {
	if ms == 0 {
		return none
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05 UTC")
}
