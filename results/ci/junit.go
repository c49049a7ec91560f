package ci

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/compare"
)

// The JUnit XML the common reporters read (Jenkins' junit-10.xsd, which
// GitLab's and GitHub's JUnit reporters accept as well): testsuites, one
// testsuite per variant, a testcase per verdict.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr"`
		Timestamp  string          `xml:"timestamp,attr"`
		Package    string          `xml:"package,attr"`
		Properties junitProperties `xml:"properties"`
		Cases      []junitCase     `xml:"testcase"`
	}
	junitProperties struct {
		Property []junitProperty `xml:"property"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Name      string       `xml:"name,attr"`
		Classname string       `xml:"classname,attr"`
		Time      string       `xml:"time,attr"`
		Failure   *junitResult `xml:"failure"`
		Error     *junitResult `xml:"error"`
		Skipped   *junitResult `xml:"skipped"`
		SystemOut *junitText   `xml:"system-out"`
	}
	junitResult struct {
		Type    string `xml:"type,attr,omitempty"`
		Message string `xml:"message,attr"`
		Text    string `xml:",cdata"`
	}
	junitText struct {
		Text string `xml:",cdata"`
	}
)

// out is a system-out element holding text.
func out(text string) *junitText { return &junitText{Text: xmlSafe(text)} }

// result is a failure, error or skipped element; its text is kept
// readable (CDATA) and made valid XML whatever the engine answered.
func result(typ, message, text string) *junitResult {
	return &junitResult{Type: typ, Message: message, Text: xmlSafe(text)}
}

// xmlSafe replaces what XML 1.0 cannot carry (control characters other
// than tab and newlines, invalid UTF-8, U+FFFE and U+FFFF) with U+FFFD:
// CDATA is written as it is, unlike attributes, which encoding/xml cleans.
func xmlSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r == utf8.RuneError, r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
			return utf8.RuneError
		}
		return r
	}, s)
}

// WriteJUnit writes the run as JUnit XML: per variant a testsuite whose
// cases are its verdict (failed when the variant is FAIL, an error when
// ERROR or INTERRUPTED, skipped when NOT RUN: the cases that match the run's
// exit code), every level judged (the baseline level fails with the
// verdict; a sweep level that is not usable is the sweep's ceiling, which
// fails no run, and passes with its verdict in system-out), and, for every
// variant after the first, its paired verdict against the first (failed
// when not equivalent). A case's failed documents are its failure's text,
// or its system-out when it passed. A protocol of declared fields adds a
// passing case per field ("field NAME"): its F1 at each level, and the
// documents and flips it was wrong in; no field has a criterion of its own
// to fail.
func (r *Run) WriteJUnit(w io.Writer) error {
	top := junitSuites{Name: "extractbench " + r.Protocol}
	var total float64
	for _, v := range r.Variants {
		s := junitSuite{Name: v.Variant, Timestamp: r.Started.Format("2006-01-02T15:04:05"), Package: "extractbench." + r.Protocol,
			Properties: junitProperties{Property: []junitProperty{
				{"run_id", r.RunID}, {"protocol", r.Protocol}, {"fingerprint", r.Fingerprint}, {"results", r.Dir},
				{"model", v.Model}, {"state", v.State}, {"simulated", fmt.Sprint(r.Simulated)}, {"run_status", r.Status}}}}
		class := "extractbench." + r.Protocol + "." + v.Variant
		var secs float64
		s.Cases = append(s.Cases, verdictCase(v, class))
		for _, l := range v.Levels {
			s.Cases = append(s.Cases, levelCase(l, class))
			secs += l.Seconds
		}
		if v.Paired != nil {
			s.Cases = append(s.Cases, pairedCase(v.Paired, class, r.Fields != nil))
		}
		for _, f := range r.Fields {
			s.Cases = append(s.Cases, fieldCase(v, f, class))
		}
		for _, c := range s.Cases {
			s.Tests++
			switch {
			case c.Failure != nil:
				s.Failures++
			case c.Error != nil:
				s.Errors++
			case c.Skipped != nil:
				s.Skipped++
			}
		}
		s.Time = seconds(secs)
		total += secs
		top.Tests, top.Failures, top.Errors = top.Tests+s.Tests, top.Failures+s.Failures, top.Errors+s.Errors
		top.Suites = append(top.Suites, s)
	}
	top.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write JUnit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(top); err != nil {
		return fmt.Errorf("write JUnit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write JUnit: %w", err)
	}
	return nil
}

func verdictCase(v Variant, class string) junitCase {
	c := junitCase{Name: "verdict", Classname: class, Time: seconds(0)}
	why := fmt.Sprintf("%s %s (%s)", v.State, v.Variant, v.Model)
	if v.BaselineShare != nil {
		why += ": baseline accepted " + eval.FormatShare(*v.BaselineShare)
	}
	if v.Reason != "" {
		why += "\n" + v.Reason
	}
	switch v.State {
	case results.OutcomePass:
		c.SystemOut = out(why)
	case results.OutcomeFail:
		c.Failure = result(v.State, v.Reason, why)
	case results.OutcomeNotRun:
		c.Skipped = result(v.State, v.Reason, "")
	default: // ERROR, INCONCLUSIVE, INTERRUPTED: the run could not give a verdict
		c.Error = result(v.State, v.Reason, why)
	}
	return c
}

func levelCase(l Level, class string) junitCase {
	c := junitCase{Name: l.Name, Classname: class, Time: seconds(l.Seconds)}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: accepted %s of %d documents over %d repetition(s)", l.Verdict.Word(), eval.FormatShare(l.Share()), l.Docs, l.Repetitions)
	for _, f := range extractbench.Failures {
		if n := l.Failures.Of(f); n > 0 {
			fmt.Fprintf(&b, ", %s %d", f, n)
		}
	}
	if l.Verdict.Reason != "" {
		fmt.Fprintf(&b, "\n%s", l.Verdict.Reason)
	}
	if l.NFailed > 0 {
		fmt.Fprintf(&b, "\n\nfailed documents (%d):\n%s", l.NFailed, docList(l))
	}
	switch {
	case !l.Verdict.Usable && l.Baseline:
		c.Failure = result(strings.Join(causes(l.Verdict), ","), l.Verdict.Reason, b.String())
	case !l.Verdict.Usable:
		c.SystemOut = out("the sweep's ceiling (a level that breaks fails no run): " + b.String())
	default:
		c.SystemOut = out(b.String())
	}
	return c
}

func causes(v eval.Verdict) []string {
	out := make([]string, 0, len(v.Causes))
	for _, c := range v.Causes {
		out = append(out, string(c))
	}
	if len(out) == 0 {
		out = append(out, eval.VerdictNotUsable)
	}
	return out
}

// docList is one line per failed document: id, repetition, class, detail.
func docList(l Level) string {
	var b strings.Builder
	for _, d := range l.Failed {
		fmt.Fprintf(&b, "%s  repetition %d  %s  %s\n", d.ID, d.Repetition, d.Failure, d.Detail)
	}
	if more := l.NFailed - len(l.Failed); more > 0 {
		fmt.Fprintf(&b, "… and %d more (results.db, table requests)\n", more)
	}
	return b.String()
}

// pairedCase is the paired verdict against the first variant; declared:
// with each declared field's F1 delta.
func pairedCase(p *Paired, class string, declared bool) junitCase {
	c := junitCase{Name: p.Name(), Classname: class, Time: seconds(0)}
	var text string
	if p.Result != nil {
		text = p.Sentence() + flips(p)
		if declared {
			text += fieldDeltas(p)
		}
	}
	switch {
	case p.Result == nil:
		c.Skipped = result("", p.Sentence(), "")
	case p.Result.Equivalent:
		c.SystemOut = out(text)
	default:
		c.Failure = result("not_equivalent", p.Sentence(), text)
	}
	return c
}

// fieldDeltas is each field's F1 under the first variant and this one,
// and the difference with its bootstrap interval, as compare prints them.
func fieldDeltas(p *Paired) string {
	if len(p.Result.Fields) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nper-field F1, this variant − %s, with its 95%% bootstrap interval:\n", p.Against)
	for _, f := range p.Result.Fields {
		fmt.Fprintf(&b, "%s  %.3f → %.3f  %+.3f [%+.3f, %+.3f]\n", f.Field, f.AF1, f.BF1, f.Delta, f.Lo, f.Hi)
	}
	return b.String()
}

// flips lists the documents the two variants disagree on, each with the
// fields behind it for a protocol of declared fields.
func flips(p *Paired) string {
	eq := p.Result.Equivalence
	if len(eq.Flips) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n\nflipped documents (%d):\n", len(eq.Flips))
	for i, f := range eq.Flips {
		who := p.Against + " accepted, this variant failed"
		if f.BOK {
			who = "this variant accepted, " + p.Against + " failed"
		}
		fmt.Fprintf(&b, "%s  %s", f.DocID, who)
		if i < len(p.Result.FlipFields) {
			fmt.Fprintf(&b, ": %s", flipCause(p.Result.FlipFields[i]))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// flipCause is the fields behind a flip, for the failing side.
func flipCause(f compare.FlipFields) string {
	if f.Unparsed {
		return "no field scored (" + f.Reason + ")"
	}
	if len(f.Fields) == 0 {
		return string(f.Failure) + " with every field right"
	}
	parts := make([]string, len(f.Fields))
	for i, m := range f.Fields {
		parts[i] = m.Field + " (" + m.Reason + ")"
	}
	return strings.Join(parts, "; ")
}

// fieldCase is one declared field of a variant: its figures at each level,
// where it was wrong in the failed documents of the verdict's level, and
// the flips against the first variant it is behind.
func fieldCase(v Variant, name, class string) junitCase {
	c := junitCase{Name: "field " + name, Classname: class, Time: seconds(0)}
	var b strings.Builder
	b.WriteString("F1 per level (TP, FP and FN summed over complete repetitions; a list counts its items):\n")
	for _, l := range v.Levels {
		for _, f := range l.Fields {
			if f.Name == name {
				fmt.Fprintf(&b, "%s: F1 %.3f, precision %.3f, recall %.3f (TP %d, FP %d, FN %d)\n", l.Name, f.F1, f.Precision, f.Recall, f.TP, f.FP, f.FN)
			}
		}
	}
	if l := verdictLevel(v); l != nil {
		var lines []string
		for _, d := range l.Failed {
			for _, m := range d.Fields {
				if m.Field == name {
					lines = append(lines, fmt.Sprintf("%s  repetition %d  %s  %s", d.ID, d.Repetition, d.Failure, m.Reason))
				}
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(&b, "\nwrong in failed documents at %s (%d):\n%s\n", l.Name, len(lines), strings.Join(lines, "\n"))
		}
	}
	if p := v.Paired; p != nil && p.Result != nil {
		var lines []string
		for _, f := range p.Result.FlipFields {
			who := "this variant failed"
			if f.Failed == "A" {
				who = p.Against + " failed"
			}
			for _, m := range f.Fields {
				if m.Field == name {
					lines = append(lines, fmt.Sprintf("%s  %s  %s", f.DocID, who, m.Reason))
				}
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(&b, "\nbehind flips against %s (%d):\n%s\n", p.Against, len(lines), strings.Join(lines, "\n"))
		}
	}
	c.SystemOut = out(b.String())
	return c
}

// verdictLevel is the level the variant's verdict judges, else its first.
func verdictLevel(v Variant) *Level {
	for i := range v.Levels {
		if v.Levels[i].Baseline {
			return &v.Levels[i]
		}
	}
	if len(v.Levels) > 0 {
		return &v.Levels[0]
	}
	return nil
}

// seconds is a JUnit time attribute: seconds with three decimals, as
// Surefire writes it (junit-10.xsd's SUREFIRE_TIME).
func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }
