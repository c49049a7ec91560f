package report

import (
	"slices"
	"strconv"

	"github.com/extractbench/extractbench/eval"
)

// fieldNote says how the field tables count, for both of them.
const fieldNote = "Precision, recall and F1 per field (MEASUREMENT.md section 7), from eval's per-pass field counts summed over complete repetitions: " +
	"TP same value; FP a value where the expectation differs or is null; FN a wrong or null answer where a value was expected; " +
	"missed: a value was expected and the field was never scored (no parse, a transport failure, a value breaking its rule), counted against recall. " +
	"Failed documents stay in the denominator."

func fieldCells(f eval.FieldStats) []string {
	return []string{fmtShare(f.Precision), fmtShare(f.Recall), fmtShare(f.F1),
		strconv.Itoa(f.TP), strconv.Itoa(f.FP), strconv.Itoa(f.FN), strconv.Itoa(f.Missed)}
}

var fieldHead = []string{"precision", "recall", "F1", "TP", "FP", "FN", "missed"}

// fieldTable is precision, recall and F1 of each field at each level.
func fieldTable(prefix, unit string, s *series) table {
	t := table{ID: prefix + "fields", Title: "Field quality per " + unit, Note: fieldNote,
		Head: append([]string{unit, "field", "documents"}, fieldHead...)}
	for _, l := range s.Levels {
		sum, ok := s.Fields[l.Level]
		if !ok {
			continue
		}
		for _, name := range sum.FieldNames() {
			f, _ := sum.Field(name)
			t.Rows = append(t.Rows, append([]string{eval.LevelName(s.Mode, l.Level), name, strconv.Itoa(sum.Docs)}, fieldCells(f)...))
		}
	}
	return t
}

// fieldClassTable is the same per length class at the level the sheet
// reads (the recommended one, else the lowest): long documents are where
// a model or a truncation limit gives way first.
func fieldClassTable(prefix, unit string, s *series) table {
	lv := s.readLevel()
	t := table{ID: prefix + "fields-by-length", Title: "Field quality per length class at " + eval.LevelLabel(s.Mode, lv), Note: fieldNote,
		Head: append([]string{"length class", "field", "documents", "accepted"}, fieldHead...)}
	var classes []string
	for c := range s.FieldsByClass {
		classes = append(classes, c)
	}
	slices.SortFunc(classes, func(a, b string) int {
		if d := classRank(a) - classRank(b); d != 0 {
			return d
		}
		if a < b {
			return -1
		}
		return 1
	})
	for _, c := range classes {
		sum := s.FieldsByClass[c]
		for _, name := range sum.FieldNames() {
			f, _ := sum.Field(name)
			t.Rows = append(t.Rows, append([]string{c, name, strconv.Itoa(sum.Docs), fmtShare(sum.AcceptedRate)}, fieldCells(f)...))
		}
	}
	return t
}

// fieldChart draws each field's F1 against the level (the field table's
// figures): a field that degrades under load shows apart from the others.
func fieldChart(prefix, unit string, x []float64, xLog bool, s *series) chart {
	c := chart{ID: prefix + "fields", Title: "Field F1 vs " + unit + " (summed over complete repetitions; the field quality table has precision and recall)",
		XLabel: unit, XLog: xLog, YLabel: [2]string{"F1 (%)", ""}, X: x}
	colors := []string{blue, orange, purple}
	var names []string // the fields of the series' first tallied level: every level has the same
	for _, l := range s.Levels {
		if sum, ok := s.Fields[l.Level]; ok {
			names = sum.FieldNames()
			break
		}
	}
	values := make([][]*float64, len(names))
	for i := range values {
		values[i] = make([]*float64, len(s.Levels))
	}
	for j, l := range s.Levels {
		sum, ok := s.Fields[l.Level]
		if !ok {
			continue
		}
		for i, name := range names {
			f, _ := sum.Field(name)
			values[i][j] = num(f.F1 * 100)
		}
	}
	var all []*float64
	for i, name := range names {
		c.Series = append(c.Series, line{Label: name, Unit: "%", Color: colors[i%len(colors)], Dash: i%2 == 1, Values: values[i]})
		all = append(all, values[i]...)
	}
	// Zoomed as the accepted share: on 0–100, 97.9% and 100% look the same.
	c.YRange = zoomShare(all, 0)
	c.YLabel[0] = "F1 (%, " + axisRange(c.YRange) + ")"
	c.Note = "The F1 axis runs from " + strconv.FormatFloat(c.YRange[0], 'f', -1, 64) + "% to 100%, not from 0."
	return c
}
