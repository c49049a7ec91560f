package eval

import (
	"bytes"
	"container/heap"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/shopspring/decimal"
)

// Reasons a field is not scored or not correct, for FieldScore.Reason.
const (
	ReasonNotReviewed = "not reviewed"
	reasonNoValue     = "no value"
	reasonKeyMissing  = "key missing"
	reasonUnexpected  = "a value where none is expected"
)

// ScoreField scores one field of one document by its rule (docs/fields.md):
// expected is the corpus's expectation (a decoded JSON value, numbers as
// json.Number or float64; nil for null), got the answer's value at the
// field's pointer and present whether the answer has that key at all. An
// absent key and a null both mean no value.
//
// A scalar: expected value and the same answer TP; a different one FP+FN;
// no answer FN; expected null and an answer FP; both null TN. An answer
// that breaks the rule (a number for a string, a date in no stated format)
// is not scored, and counts FN when a value was expected, as a default
// field's malformed value does. A null expectation of a field whose
// missing is "skip" is not scored ("not reviewed") and counts nothing.
// A list: its items matched as a multiset (order set) or by position
// (order sequence); TP the matched items, FP the extra, FN the missed.
func ScoreField(f extractbench.Field, expected, got any, present bool) extractbench.FieldScore {
	s := extractbench.FieldScore{Name: f.Name, Expected: compactJSON(expected)}
	if present {
		s.Got = compactJSON(got)
	}
	if expected == nil && f.Missing == extractbench.MissingSkip {
		s.Reason = ReasonNotReviewed
		return s
	}
	if f.Type == extractbench.FieldList {
		return scoreList(s, f, expected, got, present)
	}
	hasValue := present && got != nil
	var gv any
	if hasValue {
		var problem string
		if gv, problem = readValue(f, got, true); problem != "" {
			s.Reason = problem
			if expected != nil {
				s.FN = 1
			}
			return s
		}
	}
	switch {
	case expected == nil && !hasValue:
		s.Result = extractbench.TN
	case expected == nil:
		s.Result, s.FP, s.Reason = extractbench.FP, 1, reasonUnexpected
	case !hasValue:
		s.Result, s.FN, s.Reason = extractbench.FN, 1, reasonNoValue
		if !present {
			s.Reason = reasonKeyMissing
		}
	default:
		ev, problem := readValue(f, expected, false)
		switch {
		case problem != "":
			// A corpus check refuses it; here it can only be a mismatch.
			s.Result, s.FP, s.FN, s.Reason = extractbench.FPFN, 1, 1, "unreadable expectation: "+problem
		case sameValue(f, ev, gv):
			s.Result, s.TP = extractbench.TP, 1
		default:
			s.Result, s.FP, s.FN = extractbench.FPFN, 1, 1
			s.Reason = fmt.Sprintf("got %s, want %s", showValue(gv), showValue(ev))
			if f.Type == extractbench.FieldEnum {
				s.Reason = fmt.Sprintf("got %s, want %s", showEnum(f, gv.(string)), showValue(ev))
			}
		}
	}
	return s
}

// showEnum writes an enum answer, saying when it is none of the values.
func showEnum(f extractbench.Field, s string) string {
	for _, v := range f.Values {
		if v == s {
			return showValue(s)
		}
	}
	return showValue(s) + " (not one of the values)"
}

// scoreList scores a list field: its items by the item rule, matched as
// a multiset or by position.
func scoreList(s extractbench.FieldScore, f extractbench.Field, expected, got any, present bool) extractbench.FieldScore {
	want, wantOK := expected.([]any)
	if expected != nil && !wantOK {
		s.Result, s.FP, s.FN, s.Reason = extractbench.FPFN, 1, 1, "unreadable expectation: "+jsonKind(expected)+", want a list"
		return s
	}
	missed := max(1, len(want)) // an expected list that is not answered: at least one miss, also when it is empty
	if f.Items == nil {
		s.Reason, s.FN = "the list declares no items rule", missed
		return s
	}
	hasValue := present && got != nil
	have, haveOK := got.([]any)
	if hasValue && !haveOK {
		s.Reason = jsonKind(got) + ", want a list"
		if expected != nil {
			s.FN = missed
		}
		return s
	}
	switch {
	case expected == nil && !hasValue:
		s.Result = extractbench.TN
		return s
	case expected == nil:
		s.Result, s.FP, s.Reason = extractbench.FP, max(1, len(have)), reasonUnexpected
		return s
	case !hasValue:
		s.Result, s.FN, s.Reason = extractbench.FN, missed, reasonNoValue
		if !present {
			s.Reason = reasonKeyMissing
		}
		return s
	}
	item := *f.Items
	wantVals, wantProbs := readItems(item, want, false)
	haveVals, haveProbs := readItems(item, have, true)
	var tp int
	if f.Order == extractbench.OrderSequence {
		for i := range min(len(wantVals), len(haveVals)) {
			if wantVals[i] != nil && haveVals[i] != nil && sameValue(item, wantVals[i], haveVals[i]) {
				tp++
			}
		}
	} else {
		tp = matchItems(item, wantVals, haveVals)
	}
	s.TP, s.FP, s.FN = tp, len(have)-tp, len(want)-tp
	if s.FP == 0 && s.FN == 0 {
		s.Result = extractbench.TP
		return s
	}
	s.Result = extractbench.FPFN
	var parts []string
	if s.FN > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d items missed", s.FN, len(want)))
	}
	if s.FP > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d answered items wrong", s.FP, len(have)))
	}
	parts = append(parts, wantProbs...)
	parts = append(parts, haveProbs...)
	s.Reason = strings.Join(parts, "; ")
	return s
}

// readItems reads a list's items by the item rule; an unreadable item is
// nil (it matches nothing) and named in problems.
func readItems(item extractbench.Field, xs []any, answer bool) (vals []any, problems []string) {
	vals = make([]any, len(xs))
	what := "expected item"
	if answer {
		what = "item"
	}
	for i, x := range xs {
		if x == nil {
			problems = append(problems, fmt.Sprintf("%s %d: null", what, i))
			continue
		}
		v, p := readValue(item, x, answer)
		if p != "" {
			problems = append(problems, fmt.Sprintf("%s %d: %s", what, i, p))
			continue
		}
		vals[i] = v
	}
	return vals, problems
}

// matchItems is the size of the largest matching of want's items to
// have's, each used once: by counting keys when the rule is an
// equivalence, else (a decimal with a tolerance, where closeness is not
// transitive and a greedy match in list order can miss) by matchNear.
func matchItems(item extractbench.Field, want, have []any) int {
	if keyed, ok := matchByKey(item, want, have); ok {
		return keyed
	}
	return matchNear(item, want, have)
}

// matchNear matches decimals within tolerance. Each expected value w
// accepts the answers in the interval [w-t, w+t] (t its tolerance), so
// this is matching points to intervals, which one sweep solves exactly:
// take the answers in ascending order and give each the open interval
// that ends first (Glover's rule), in O(n log n) where augmenting paths
// took O(n^3) on a long list.
func matchNear(item extractbench.Field, want, have []any) int {
	type interval struct{ lo, hi decimal.Decimal }
	var ivs []interval
	for _, w := range want {
		a, ok := w.(Amount)
		if !ok || a.Huge {
			continue // unreadable or beyond 10^40: matches nothing
		}
		t := tolerance(item, a.Value)
		ivs = append(ivs, interval{a.Value.Sub(t), a.Value.Add(t)})
	}
	var points []decimal.Decimal
	for _, h := range have {
		if a, ok := h.(Amount); ok && !a.Huge {
			points = append(points, a.Value)
		}
	}
	slices.SortFunc(ivs, func(a, b interval) int { return a.lo.Cmp(b.lo) })
	slices.SortFunc(points, func(a, b decimal.Decimal) int { return a.Cmp(b) })
	open := &decimalHeap{}
	n, next := 0, 0
	for _, p := range points {
		for next < len(ivs) && ivs[next].lo.Cmp(p) <= 0 {
			heap.Push(open, ivs[next].hi)
			next++
		}
		for open.Len() > 0 && (*open)[0].Cmp(p) < 0 {
			heap.Pop(open) // ended before this answer: it can take no later one either
		}
		if open.Len() > 0 {
			heap.Pop(open)
			n++
		}
	}
	return n
}

// decimalHeap is a min-heap of interval ends.
type decimalHeap []decimal.Decimal

func (h decimalHeap) Len() int           { return len(h) }
func (h decimalHeap) Less(i, j int) bool { return h[i].Cmp(h[j]) < 0 }
func (h decimalHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *decimalHeap) Push(x any)        { *h = append(*h, x.(decimal.Decimal)) }
func (h *decimalHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// matchByKey matches items as multisets of their keys; false when a value
// has no key (valueKey).
func matchByKey(item extractbench.Field, want, have []any) (int, bool) {
	count := map[string]int{}
	for _, w := range want {
		if w == nil {
			continue
		}
		k, ok := valueKey(item, w)
		if !ok {
			return 0, false
		}
		count[k]++
	}
	n := 0
	for _, h := range have {
		if h == nil {
			continue
		}
		k, ok := valueKey(item, h)
		if !ok {
			return 0, false
		}
		if count[k] > 0 {
			count[k]--
			n++
		}
	}
	return n, true
}

// compactJSON writes a decoded JSON value as compact JSON, "<" and "&"
// as they are (a FieldScore is read by people and by DuckDB, not put in
// HTML unescaped).
func compactJSON(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case json.Number:
		return string(x)
	case bool:
		return strconv.FormatBool(x)
	case string:
		if plainASCII(x) {
			return `"` + x + `"` // the usual case, without an encoder: scoring is on every request's path
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%q", fmt.Sprint(v)) // only decoded JSON comes here: cannot fail
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// plainASCII reports whether s is printable ASCII that JSON writes as it
// is: no quote, no backslash.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
