package report

import (
	"context"
	"strings"
	"testing"
)

func vals(fs ...float64) []*float64 {
	out := make([]*float64, len(fs))
	for i := range fs {
		if fs[i] >= 0 {
			out[i] = &fs[i]
		}
	}
	return out
}

// TestChart_Separate: a line identical to one drawn after it is drawn wider
// by widthStep for each such line, so that it shows as a rim; lines that
// differ anywhere, or sit on the other axis, keep the plain width; the note
// names the lines that coincide. The old page drew category exactly over
// date at the same width, and date could not be seen.
func TestChart_Separate(t *testing.T) {
	tests := []struct {
		name   string
		series []line
		widths []float64
		note   string
	}{
		{"field F1: date, amount and category all 100%",
			[]line{{Label: "date", Values: vals(100, 100)}, {Label: "amount", Values: vals(100, 100)}, {Label: "category", Values: vals(100, 100)}},
			[]float64{7, 4.5, 2}, "one line, the wider under the narrower: date, amount and category."},
		{"date under category, amount apart",
			[]line{{Label: "date", Values: vals(98, 100)}, {Label: "amount", Values: vals(90, 95)}, {Label: "category", Values: vals(98, 100)}},
			[]float64{4.5, 2, 2}, "one line, the wider under the narrower: date and category."},
		{"equal where both have a value, but one has a gap",
			[]line{{Label: "a", Values: vals(1, 2, 3)}, {Label: "b", Values: vals(1, -1, 3)}},
			[]float64{2, 2}, ""},
		{"same values on two axes",
			[]line{{Label: "a", Values: vals(1, 2)}, {Label: "b", Axis: 1, Values: vals(1, 2)}},
			[]float64{2, 2}, ""},
		{"no values at all",
			[]line{{Label: "a", Values: vals(-1)}, {Label: "b", Values: vals(-1)}},
			[]float64{2, 2}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := chart{Series: tt.series, Note: "The F1 axis runs from 90% to 100%, not from 0."}
			c.separate()
			for i, l := range c.Series {
				if l.Width != tt.widths[i] {
					t.Errorf("%s drawn %v px wide, want %v", l.Label, l.Width, tt.widths[i])
				}
			}
			if !strings.HasPrefix(c.Note, "The F1 axis") {
				t.Errorf("note lost what it said: %q", c.Note)
			}
			if got := strings.Contains(c.Note, "Same values"); got != (tt.note != "") || !strings.Contains(c.Note, tt.note) {
				t.Errorf("note %q, want it to say %q", c.Note, tt.note)
			}
		})
	}
}

func TestAndList(t *testing.T) {
	for _, tt := range []struct {
		in   []string
		want string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a and b"}, {[]string{"a", "b", "c"}, "a, b and c"}} {
		if got := andList(tt.in); got != tt.want {
			t.Errorf("andList(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestCharts_CountsAndCoincidingLines: on the report's own charts, the
// failures chart draws only the classes that failed (five lines at 0 lay
// on one another) and names the others; its axis and the timeline's
// requests axis are counts (whole ticks); and no two identical lines of
// any chart are drawn at one width.
func TestCharts_CountsAndCoincidingLines(t *testing.T) {
	dir := mustWriteFixture(t, defaultFixture)
	p, err := build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fail := chartByID(t, p, "s0-failures")
	if !fail.YCount[0] {
		t.Error("the failures chart's axis is not marked as counts")
	}
	for _, l := range fail.Series {
		total := 0.0
		for _, v := range l.Values {
			if v != nil {
				total += *v
			}
		}
		if total == 0 {
			t.Errorf("failures chart draws %s, which failed no document", l.Label)
		}
	}
	if len(fail.Series) == 0 || !strings.Contains(fail.Note, "No failure at any") {
		t.Errorf("failures chart: %d lines, note %q: want the classes that failed drawn and the others named", len(fail.Series), fail.Note)
	}
	if tl := chartByID(t, p, "s0-timeline"); !tl.YCount[1] || tl.YCount[0] {
		t.Errorf("timeline: counts %v, want the requests axis (right) alone", tl.YCount)
	}
	for _, c := range p.Data.Charts {
		for i, a := range c.Series {
			for _, b := range c.Series[i+1:] {
				if a.Axis == b.Axis && identical(a.Values, b.Values) && a.Width < b.Width+widthStep {
					t.Errorf("chart %s: %s (%v px) lies under the identical %s (%v px)", c.ID, a.Label, a.Width, b.Label, b.Width)
				}
			}
		}
	}
}
