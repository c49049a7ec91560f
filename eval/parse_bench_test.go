package eval

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// noisyOutput is n bytes of what a rambling model writes: prose with
// quotes and {placeholders}, a fenced object with a trailing comma, and an
// object cut short, over and over.
func noisyOutput(n int) string {
	const chunk = "Sure! Here is the \"extraction\" you asked for {see below}.\n```json\n" +
		"{\"date\": \"2025-03-14\", \"amount\": 1234.56, \"category\": \"Software\",}\n```\n" +
		"Note: the \"amount\" is {approximate}; the vendor wrote \"EUR 1.234,56\" and {\"date\": \"2025-\n"
	s := strings.Repeat(chunk, n/len(chunk)+1)
	return s[:n]
}

// BenchmarkParseLenient parses 100 KB and 1 MB of unclosed braces and of
// noisy output. The search is linear when the 1 MB parse takes about ten
// times the 100 KB one: the ratio metric of each "scaling" benchmark.
func BenchmarkParseLenient(b *testing.B) {
	inputs := map[string]func(int) string{
		"braces": func(n int) string { return strings.Repeat("{", n) },
		"noisy":  noisyOutput,
	}
	for _, name := range []string{"braces", "noisy"} {
		small, large := inputs[name](100_000), inputs[name](1_000_000)
		for _, in := range []struct {
			size string
			text string
		}{{"100KB", small}, {"1MB", large}} {
			b.Run(fmt.Sprintf("%s/%s", name, in.size), func(b *testing.B) {
				b.SetBytes(int64(len(in.text)))
				for b.Loop() {
					ParseLenient(in.text)
				}
			})
		}
		b.Run(name+"/scaling", func(b *testing.B) {
			var ts, tl time.Duration
			for b.Loop() {
				t0 := time.Now()
				ParseLenient(small)
				t1 := time.Now()
				ParseLenient(large)
				ts, tl = ts+t1.Sub(t0), tl+time.Since(t1)
			}
			b.ReportMetric(float64(ts.Nanoseconds())/float64(b.N), "ns/100KB")
			b.ReportMetric(float64(tl.Nanoseconds())/float64(b.N), "ns/1MB")
			b.ReportMetric(float64(tl)/float64(ts), "ratio")
		})
	}
}
