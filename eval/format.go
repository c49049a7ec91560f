package eval

import (
	"fmt"
	"math"
	"time"
)

// FormatDuration prints nanoseconds with three significant digits ("178ms",
// "17.3ms", "1.23s", "41.2s"): every table, report and verdict prints a
// duration through it, so one figure reads the same everywhere, and no more
// digits are quoted than repeated passes support.
func FormatDuration(ns int64) string {
	d := time.Duration(ns)
	if d <= 0 {
		return d.String()
	}
	digits := int(math.Floor(math.Log10(float64(d)))) + 1 // digits of the nanosecond count
	if digits <= 3 {
		return d.String()
	}
	unit := time.Duration(math.Pow10(digits - 3))
	return d.Round(unit).String()
}

// FormatShare prints a share as a percentage with one decimal ("98.0%").
func FormatShare(share float64) string { return fmt.Sprintf("%.1f%%", share*100) }
