// Package numfmt writes numbers the way every page of extractbench shows
// them (bytes in GiB, thousands grouped) and answers as indented JSON, so
// that the sizing answers, the report and compare agree to the digit
// without importing one another.
package numfmt

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Binary byte units.
const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
)

// GiBString formats bytes as GiB with two decimals, MiB or KiB below one GiB.
func GiBString(b int64) string {
	switch a := math.Abs(float64(b)); {
	case a >= gib:
		return fmt.Sprintf("%.2f GiB", float64(b)/gib)
	case a >= mib:
		return fmt.Sprintf("%.1f MiB", float64(b)/mib)
	case a >= kib:
		return fmt.Sprintf("%.1f KiB", float64(b)/kib)
	}
	return fmt.Sprintf("%d B", b)
}

// GroupDigits writes an integer with thousands separators (16,060,522,496).
func GroupDigits(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// WriteJSON writes v as indented JSON: the machine-readable form of every
// answer of sizing, plan, select and compare.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// Money prints an amount: from 1 on with two decimals and thousands
// separators ("1,440.00"), below 1 with two significant digits ("0.42",
// "0.0041"), so that a small cost never reads 0.00.
func Money(v float64) string {
	if v != 0 && math.Abs(v) < 1 && !math.IsNaN(v) {
		decimals := min(1-int(math.Floor(math.Log10(math.Abs(v)))), 12)
		return strconv.FormatFloat(v, 'f', decimals, 64)
	}
	cents := int64(math.Round(v * 100))
	return fmt.Sprintf("%s.%02d", GroupDigits(cents/100), cents%100)
}
