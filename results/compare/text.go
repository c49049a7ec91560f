package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/numfmt"
)

// outputExcerpt bounds each output the text form prints for a flip; the
// JSON form keeps them whole.
const outputExcerpt = 240

// WriteJSON writes the result as indented JSON.
func (r Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write comparison json: %w", err)
	}
	return nil
}

// WriteText writes the result for people: verdict first, then the figures
// it rests on, the flips, F1 deltas and the side-by-side levels.
func (r Result) WriteText(w io.Writer) error { return r.WriteTextFit(w, 0) }

// WriteTextFit is WriteText for a terminal of width columns: the
// side-by-side table leaves out the columns that do not fit
// (sideColumnsDropped) and each output excerpt of a flip is cut to one
// line. Sentences stay whole: the caller wraps them at spaces, which a
// table row or an excerpt would not survive. width 0 is WriteText.
func (r Result) WriteTextFit(w io.Writer, width int) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	eq := r.Equivalence
	if r.A.Simulated || r.B.Simulated {
		p("SIMULATED RUN: figures come from the built-in engine, not a GPU.\n")
	}
	p("B = %s against A = %s (the reference), %s repetition %d, corpus %s\n",
		describe(r.B), describe(r.A), eval.LevelLabel(r.Mode, r.Level), r.Repetition, short(r.A.CorpusSHA256))
	for _, line := range r.Tokenization.lines(r.A, r.B) {
		p("TOKENIZER DRIFT: %s\n", line)
	}
	p("Verdict: %s at margin δ = %.3f (±%s points): the %.0f%% interval of Δ is [%s, %s] points\n",
		eq.Verdict(), r.Margin, pts(r.Margin), eq.Level*100, signedPts(eq.Lo), signedPts(eq.Hi))
	if eq.TooFew {
		p("Too few documents for δ = %.3f: %d cannot exclude ±%s points even with no discordant pair; %s would do\n",
			r.Margin, eq.N, pts(r.Margin), eq.Needed())
	}
	p("Accepted: A %d/%d (%s), B %d/%d (%s)\n", eq.BothOK+eq.B, eq.N, pctOf(eq.BothOK+eq.B, eq.N),
		eq.BothOK+eq.C, eq.N, pctOf(eq.BothOK+eq.C, eq.N))
	p("Paired: both right %d, b (A right, B wrong) %d, c (B right, A wrong) %d, both wrong %d; n = %d\n",
		eq.BothOK, eq.B, eq.C, eq.BothWrong, eq.N)
	p("Δ = (c − b)/n = %s points; interval: %s\n", signedPts(eq.Delta), eq.Method)
	p("McNemar exact p = %.3g (information only: it never shows equivalence)\n", eq.McNemarP)
	if len(r.NoiseFloors) == 0 {
		p("A-vs-A noise floor: not measured (no variant has two repetitions at one level)\n")
	}
	for _, nf := range r.NoiseFloors {
		p("A-vs-A noise floor: %s at %s, repetition %d vs %d: %d flip(s) of %d, Δ %s, interval [%s, %s] → floor %s points\n",
			nf.Variant, eval.LevelLabel(r.Mode, nf.Level), nf.Reps[0], nf.Reps[1], nf.Flips, nf.N, signedPts(nf.Delta), signedPts(nf.Lo),
			signedPts(nf.Hi), pts(nf.Floor))
	}
	p("\nPer-field F1, B − A with its 95%% bootstrap interval:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "field\tA\tB\tΔ\tinterval\n")
	for _, f := range r.Fields {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%+.3f\t[%+.3f, %+.3f]\n", f.Field, f.AF1, f.BF1, f.Delta, f.Lo, f.Hi)
	}
	tw.Flush()

	p("\nFlipped documents (%d):\n", len(eq.Flips))
	cut := outputExcerpt
	if width > 0 {
		cut = max(width-len("    A: ")-1, 20) // the excerpt and its …
	}
	for i, f := range eq.Flips {
		who := "A accepted, B failed"
		if f.BOK {
			who = "B accepted, A failed"
		}
		p("  %s  %s\n    A: %s\n    B: %s\n", f.DocID, who, excerptOf(f.AOutput, cut), excerptOf(f.BOutput, cut))
		if i < len(r.FlipFields) {
			p("    %s\n", r.FlipFields[i].sentence())
		}
	}

	p("\nSide by side at the levels both measured (accepted pooled over repetitions; latency and throughput medians over repetitions; peaks the highest; GiB = 2^30 B):\n")
	head, rows := r.sideTable()
	head, rows, compact := fitColumns(head, rows, width, sideColumnsDropped)
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range append([][]string{head}, rows...) {
		fmt.Fprintf(tw, "%s\t\n", strings.Join(row, "\t"))
	}
	tw.Flush()
	if compact {
		p("(compact: a wider terminal or compare -wide shows every column; -json every figure)\n")
	}
	p("(a level marked * is not usable; † a latency apart from A's beyond both sides' spread over repetitions; unmarked: within it, or one repetition)\n")
	p("Recommended for A: %s\nRecommended for B: %s\n", r.A.Recommendation.Why, r.B.Recommendation.Why)
	for _, warn := range r.Warnings {
		p("WARNING: %s\n", warn)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	return nil
}

// sideTable is the side-by-side table's head and rows, every column.
func (r Result) sideTable() (head []string, rows [][]string) {
	head = []string{"level", "accepted A / B", "TTFT p50", "TTFT p95", "E2E p50", "E2E p95", "accepted docs/h", "tokens/s", "device peak", "KV peak"}
	for _, l := range r.Levels {
		rows = append(rows, []string{eval.LevelName(r.Mode, l.Level),
			pctShare(l.A.Share(), l.A.Verdict.Usable) + " / " + pctShare(l.B.Share(), l.B.Verdict.Usable),
			pairNS(l.A.TTFTP50NS, l.B.TTFTP50NS), pairNS(l.A.TTFTP95NS, l.B.TTFTP95NS),
			pairNS(l.A.E2EP50NS, l.B.E2EP50NS), pairNS(l.A.E2EP95NS, l.B.E2EP95NS),
			pairF(l.A.DocsPerHour, l.B.DocsPerHour), pairF(l.A.OutputTokensPerS, l.B.OutputTokensPerS),
			pairBytes(l.A.PeakGPUMemBytes, l.B.PeakGPUMemBytes), pairPct(l.A.PeakKVUsage, l.B.PeakKVUsage)})
	}
	return head, rows
}

// sideColumnsDropped are the side-by-side table's columns a narrow
// terminal leaves out, first dropped first: the level, the accepted
// shares, E2E p95 and accepted docs/h (what a verdict and the
// recommendation rest on) stay.
var sideColumnsDropped = []int{9, 8, 7, 2, 3, 4}

// fitColumns leaves out the columns named by drop, in order, while the
// table (tabwriter's: each column its widest cell plus 2) is wider than
// width; compact says whether any was. width 0 keeps every column.
func fitColumns(head []string, rows [][]string, width int, drop []int) ([]string, [][]string, bool) {
	keep := make([]bool, len(head))
	for j := range keep {
		keep[j] = true
	}
	tableWidth := func() int {
		n := 0
		for j, k := range keep {
			if !k {
				continue
			}
			cw := utf8.RuneCountInString(head[j])
			for _, row := range rows {
				cw = max(cw, utf8.RuneCountInString(row[j]))
			}
			n += cw + 2
		}
		return n
	}
	compact := false
	for _, j := range drop {
		if width <= 0 || tableWidth() <= width {
			break
		}
		keep[j], compact = false, true
	}
	if !compact {
		return head, rows, false
	}
	pick := func(row []string) []string {
		var out []string
		for j, k := range keep {
			if k {
				out = append(out, row[j])
			}
		}
		return out
	}
	out := make([][]string, len(rows))
	for i, row := range rows {
		out[i] = pick(row)
	}
	return pick(head), out, true
}

// sentence says which fields of the failing side were wrong, and why.
func (f FlipFields) sentence() string {
	if f.Unparsed {
		return fmt.Sprintf("no field of %s scored: %s", f.Failed, f.Reason)
	}
	if len(f.Fields) == 0 {
		return fmt.Sprintf("%s failed %s with every field right", f.Failed, f.Failure)
	}
	parts := make([]string, len(f.Fields))
	for i, m := range f.Fields {
		parts[i] = m.Field + " (" + m.Reason + ")"
	}
	return fmt.Sprintf("fields %s got wrong: %s", f.Failed, strings.Join(parts, "; "))
}

func describe(s SideInfo) string {
	d := fmt.Sprintf("%s (%s", s.Variant, s.Side)
	if s.Model != "" {
		d += ", model " + s.Model
	}
	if s.GPU.Name != "" {
		d += ", " + s.GPU.Name
	}
	return d + ")"
}

// pts writes a share as percentage points.
func pts(v float64) string { return strconv.FormatFloat(v*100, 'f', 1, 64) }

func signedPts(v float64) string {
	if v >= 0 {
		return "+" + pts(v)
	}
	return pts(v)
}

func pctOf(n, d int) string {
	if d == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}

func pctShare(s float64, usable bool) string {
	mark := ""
	if !usable {
		mark = "*"
	}
	return eval.FormatShare(s) + mark
}

// excerptOf is an output on one line, cut to n runes and a "…".
func excerptOf(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	if s == "" {
		return "(empty)"
	}
	return s
}

func fmtNS(v *int64) string {
	if v == nil {
		return "n/a"
	}
	return eval.FormatDuration(*v)
}

func fmtSpreadNS(s eval.Spread) string {
	if s.N == 0 {
		return "n/a"
	}
	return s.Duration()
}

// pairNS writes A's and B's latency, B's marked † when the two differ
// beyond the spread their repetitions measured (eval.Apart): compare's
// only latency finding, so that a difference within noise is not read as
// one.
func pairNS(a, b eval.Spread) string {
	mark := ""
	if apart, _ := eval.Apart(a, b); apart {
		mark = "†"
	}
	return fmtSpreadNS(a) + " / " + fmtSpreadNS(b) + mark
}

func pairF(a, b eval.Spread) string {
	f := func(v eval.Spread) string {
		if v.N == 0 {
			return "n/a"
		}
		return v.Rate()
	}
	return f(a) + " / " + f(b)
}

func pairBytes(a, b *int64) string {
	f := func(v *int64) string {
		if v == nil {
			return "n/a"
		}
		return numfmt.GiBString(*v)
	}
	return f(a) + " / " + f(b)
}

func pairPct(a, b *float64) string {
	f := func(v *float64) string {
		if v == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.0f%%", *v*100)
	}
	return f(a) + " / " + f(b)
}
