package ci

import (
	"fmt"
	"io"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/compare"
)

// mdDocs is how many failed documents a level lists in the Markdown
// summary: a glance, not the record (the JUnit file and results.db have
// them all).
const mdDocs = 10

// WriteMarkdown writes the run as GitHub-flavoured Markdown for a CI step
// summary ($GITHUB_STEP_SUMMARY): a heading with the run's verdict, one
// table row per variant (verdict, baseline accepted, recommended level,
// paired verdict against the first variant, why), then per variant its
// levels and failed documents, folded.
func (r *Run) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	// FAIL when a variant failed its verdict; else the first other state
	// that is not PASS (ERROR, INCONCLUSIVE: the infrastructure's, exit 3).
	word := results.OutcomePass
	for _, v := range r.Variants {
		switch {
		case v.Failed():
			word = results.OutcomeFail
		case !v.Passed() && word == results.OutcomePass:
			word = v.State
		}
	}
	if len(r.Variants) == 0 {
		word = "NO VERDICT"
	}
	p("### extractbench %s: protocol `%s`, run `%s`\n\n", mark(word), r.Protocol, r.RunID)
	if r.Simulated {
		p("> SIMULATED: the built-in engine models a GPU; its times and memory are not measurements of hardware.\n\n")
	}
	if r.Status != results.RunComplete {
		p("> The run is **%s**: resume it with `extractbench run -resume %s`.\n\n", r.Status, r.Dir)
	}
	base := r.BaselineVariant()
	p("| variant | verdict | baseline accepted | recommended | paired vs %s | why |\n|---|---|---:|---|---|---|\n", cell(base))
	for _, v := range r.Variants {
		share := "–"
		if v.BaselineShare != nil {
			share = eval.FormatShare(*v.BaselineShare)
		}
		pair := "(the reference)"
		if v.Paired != nil {
			pair = v.Paired.Verdict()
			if v.Paired.Result != nil {
				eq := v.Paired.Result.Equivalence
				pair += fmt.Sprintf(" (Δ %+.1f pts, [%+.1f, %+.1f], ±%.1f)", 100*eq.Delta, 100*eq.Lo, 100*eq.Hi, 100*v.Paired.Result.Margin)
			}
		}
		p("| %s | %s | %s | %s | %s | %s |\n", cell(v.Variant), mark(v.State), share, cell(recommended(v)), cell(pair), cell(v.Reason))
	}
	for _, v := range r.Variants {
		p("\n<details><summary>%s: %d level(s), %d of %d planned passes</summary>\n\n", htmlText(v.Variant), len(v.Levels), v.PassesDone, v.PassesPlanned)
		p("| level | verdict | accepted | failures | E2E p95 | accepted/h |\n|---|---|---:|---|---:|---:|\n")
		for _, l := range v.Levels {
			p("| %s | %s | %s | %s | %s | %s |\n", cell(l.Name), l.Verdict.Word(), eval.FormatShare(l.Share()), failureCounts(l.Level),
				spreadDuration(l.E2EP95NS), spreadCount(l.DocsPerHour))
		}
		if r.Fields != nil {
			writeFieldTable(&b, r.Fields, v)
		}
		for _, l := range v.Levels {
			if l.NFailed == 0 {
				continue
			}
			p("\nFailed at %s (%d):\n\n", l.Name, l.NFailed)
			for i, d := range l.Failed {
				if i == mdDocs {
					break
				}
				p("- `%s` repetition %d, %s: %s\n", d.ID, d.Repetition, d.Failure, mdText(d.Detail))
			}
			if more := l.NFailed - min(len(l.Failed), mdDocs); more > 0 {
				p("- … and %d more\n", more)
			}
		}
		if v.Paired != nil {
			p("\n%s: %s\n", mdText(v.Paired.Name()), mdText(v.Paired.Sentence()))
			if v.Paired.Result != nil && len(v.Paired.Result.FlipFields) > 0 {
				writeFlipFields(&b, v.Paired)
			}
		}
		p("\n</details>\n")
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write Markdown summary: %w", err)
	}
	return nil
}

// writeFieldTable is the variant's declared fields' F1 at each level,
// one row per field in the protocol's order, and the paired verdict's F1
// delta against the first variant when there is one.
func writeFieldTable(b *strings.Builder, fields []string, v Variant) {
	if len(v.Levels) == 0 {
		return
	}
	var deltas []compare.FieldDelta
	if v.Paired != nil && v.Paired.Result != nil {
		deltas = v.Paired.Result.Fields
	}
	b.WriteString("\nPer-field F1 (summed over complete repetitions):\n\n| field |")
	for _, l := range v.Levels {
		fmt.Fprintf(b, " %s |", cell(l.Name))
	}
	if deltas != nil {
		fmt.Fprintf(b, " Δ vs %s (95%% interval) |", cell(v.Paired.Against))
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(v.Levels)))
	if deltas != nil {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, name := range fields {
		fmt.Fprintf(b, "| %s |", cell(name))
		for _, l := range v.Levels {
			f1 := "–"
			for _, f := range l.Fields {
				if f.Name == name {
					f1 = fmt.Sprintf("%.3f", f.F1)
				}
			}
			fmt.Fprintf(b, " %s |", f1)
		}
		if deltas != nil {
			d := "–"
			for _, f := range deltas {
				if f.Field == name {
					d = fmt.Sprintf("%+.3f [%+.3f, %+.3f]", f.Delta, f.Lo, f.Hi)
				}
			}
			fmt.Fprintf(b, " %s |", d)
		}
		b.WriteString("\n")
	}
}

// writeFlipFields lists the fields behind the paired verdict's flips.
func writeFlipFields(b *strings.Builder, p *Paired) {
	ffs := p.Result.FlipFields
	fmt.Fprintf(b, "\nFields behind the flips (%d):\n\n", len(ffs))
	for i, f := range ffs {
		if i == mdDocs {
			fmt.Fprintf(b, "- … and %d more\n", len(ffs)-mdDocs)
			break
		}
		who := "this variant failed"
		if f.Failed == "A" {
			who = p.Against + " failed"
		}
		fmt.Fprintf(b, "- %s %s: %s\n", mdCode(f.DocID), mdText(who), mdText(flipCause(f)))
	}
}

// mdCode is s as a code span: backticks, which would end it, become '.
func mdCode(s string) string { return "`" + strings.ReplaceAll(s, "`", "'") + "`" }

// mark is a state with the sign a reader's eye finds first.
func mark(state string) string {
	switch state {
	case results.OutcomePass, "EQUIVALENT":
		return "✅ " + state
	case results.OutcomeFail, "NOT EQUIVALENT":
		return "❌ " + state
	}
	return "⚠️ " + state
}

// recommended is the variant's recommended level in its first mode.
func recommended(v Variant) string {
	if len(v.Series) == 0 {
		return "–"
	}
	rec := v.Series[0].Recommendation
	if !rec.Usable() {
		return "none usable"
	}
	return eval.LevelLabel(rec.Mode, rec.Recommended)
}

func failureCounts(l eval.Level) string {
	var parts []string
	for _, f := range extractbench.Failures {
		if n := l.Failures.Of(f); n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", f, n))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}

func spreadDuration(s eval.Spread) string {
	if s.N == 0 {
		return "–"
	}
	return s.Duration()
}

func spreadCount(s eval.Spread) string {
	if s.N == 0 {
		return "–"
	}
	return s.Rate()
}

// cell is text safe inside a Markdown table cell: one line, pipes escaped.
func cell(s string) string { return strings.ReplaceAll(mdText(s), "|", `\|`) }

// mdText is text on one line with the characters Markdown or HTML would
// read as markup escaped.
func mdText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "`", "'", "*", `\*`, "_", `\_`).Replace(s)
}

func htmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
