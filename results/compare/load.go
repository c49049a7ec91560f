package compare

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
)

// Side names what one side of a comparison is: a results directory and a
// variant in its latest run ("" = the run's only variant).
type Side struct {
	Dir     string `json:"dir"`
	Variant string `json:"variant"`
}

// String writes the side as ParseSide reads it.
func (s Side) String() string {
	if s.Variant == "" {
		return s.Dir
	}
	return s.Dir + ":" + s.Variant
}

// ParseSide reads DIR or DIR:variant. The variant is what follows the last
// colon, unless the whole argument is an existing directory (a path may
// contain a colon).
func ParseSide(arg string) (Side, error) {
	if arg == "" {
		return Side{}, fmt.Errorf("empty side: want DIR or DIR:variant")
	}
	if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
		return Side{Dir: arg}, nil
	}
	i := strings.LastIndex(arg, ":")
	if i <= 0 || i == len(arg)-1 {
		return Side{Dir: arg}, nil
	}
	return Side{Dir: arg[:i], Variant: arg[i+1:]}, nil
}

// loaded is one side read from its directory.
type loaded struct {
	side    Side
	rd      *results.Reader
	run     *results.RunData
	series  []eval.Series // run.Series(), made once: every variant's
	variant string
	// expected[docID][field] says whether a field is expected non-null,
	// inferred from every scored row of the run (see inferExpected).
	expected map[string]map[string]bool
	// passes holds the variant's passes read so far (records), by mode,
	// level and repetition: a side paired with many others reads its own
	// rows once.
	passes map[passAt][]extractbench.Record
	shared bool // rd, run and expected are another loaded's (as): close leaves them
}

// passAt names one pass of a side's variant.
type passAt struct {
	mode       extractbench.Mode
	level, rep int
}

func (l *loaded) close() {
	if l.rd != nil && !l.shared {
		l.rd.Close()
	}
}

// load opens a side's directory read-only, reads its run once (every row,
// for the expectations) and resolves its variant.
func load(ctx context.Context, s Side) (*loaded, error) {
	rd, err := results.OpenReadOnly(ctx, s.Dir)
	if err != nil {
		return nil, err
	}
	l := &loaded{side: s, rd: rd, variant: s.Variant, passes: map[passAt][]extractbench.Record{}}
	if err := l.resolve(ctx); err != nil {
		rd.Close()
		return nil, err
	}
	return l, nil
}

// as is the side of the same run's variant, sharing what l read: pairing
// every variant of a run with one reads the run once, not once per pair.
// Close it before l.
func (l *loaded) as(variant string) (*loaded, error) {
	o := &loaded{side: Side{Dir: l.side.Dir, Variant: variant}, rd: l.rd, run: l.run, series: l.series, variant: variant,
		expected: l.expected, passes: map[passAt][]extractbench.Record{}, shared: true}
	return o, o.pick()
}

// runReads counts the runs resolve has read in full, for the test that
// pairing reads a run once.
var runReads atomic.Int64

func (l *loaded) resolve(ctx context.Context) error {
	runReads.Add(1)
	run, err := l.rd.Load(ctx)
	if err != nil {
		return err
	}
	l.run, l.series = run, run.Series()
	if err := l.pick(); err != nil {
		return err
	}
	l.expected = map[string]map[string]bool{}
	return l.rd.EachRequest(ctx, run.Run.RunID, results.RequestFilter{}, func(r *extractbench.Record) { inferExpected(l.expected, r) })
}

// pick checks the side's variant, or picks the run's only one.
func (l *loaded) pick() error {
	var variants []string
	for _, s := range l.series {
		if !slices.Contains(variants, s.Variant) {
			variants = append(variants, s.Variant)
		}
	}
	switch {
	case len(variants) == 0:
		return results.Refused("run %s in %s has no complete pass yet", l.run.Run.RunID, l.side.Dir)
	case l.variant == "" && len(variants) == 1:
		l.variant = variants[0]
	case l.variant == "":
		return results.Refused("%s holds variants %s: name one as %s:VARIANT", l.side.Dir, strings.Join(variants, ", "), l.side.Dir)
	case !slices.Contains(variants, l.variant):
		return results.Refused("%s has no complete pass of variant %q (it has %s)", l.side.Dir, l.variant, strings.Join(variants, ", "))
	}
	return nil
}

// seriesOf is the side's variant's series in mode, nil when it has no
// complete pass.
func (l *loaded) seriesOf(mode extractbench.Mode) *eval.Series {
	for i := range l.series {
		if s := &l.series[i]; s.Variant == l.variant && s.Mode == mode {
			return s
		}
	}
	return nil
}

// inferExpected records in out, per document and field, whether the
// reviewed expectation is a value (true) or null, from one record at a time
// (the run's rows are streamed, never held). Rows of schema version 2 and
// later store the expectations (requests.expected_*); for rows written
// before, a field scored tp, fn or fp_fn anywhere in the run had a value, tn
// or fp had null. A field never scored (every answer failed format) is taken
// as null, which leaves it out of F1 on both sides alike. Declared fields
// need none of this: each record's FieldScore counts carry their
// expectation (eval.F1Delta).
func inferExpected(out map[string]map[string]bool, r *extractbench.Record) {
	exp := [3]*string{r.Expected.Date, r.Expected.Amount, r.Expected.Category}
	res := [3]extractbench.FieldResult{r.Date, r.Amount, r.Category}
	for i, f := range eval.Fields {
		if exp[i] != nil || res[i] == extractbench.TP || res[i] == extractbench.FN || res[i] == extractbench.FPFN {
			if out[r.DocID] == nil {
				out[r.DocID] = map[string]bool{}
			}
			out[r.DocID][f] = true
		}
	}
}

// placeholder stands for an expected value whose text is unknown: F1
// counting only asks whether one exists.
var placeholder = "?"

// records reads one pass of the side's variant as []extractbench.Record sorted by
// document id, with the inferred expectations.
func (l *loaded) records(ctx context.Context, mode extractbench.Mode, level, rep int) ([]extractbench.Record, error) {
	at := passAt{mode, level, rep}
	if recs, ok := l.passes[at]; ok {
		return recs, nil
	}
	recs, err := l.rd.Requests(ctx, l.run.Run.RunID, results.RequestFilter{Variant: l.variant, Mode: mode, Level: level, Repetition: rep})
	if err != nil {
		return nil, fmt.Errorf("read requests of %s at %s %d repetition %d: %w", l.side, mode, level, rep, err)
	}
	slices.SortStableFunc(recs, func(a, b extractbench.Record) int { return strings.Compare(a.DocID, b.DocID) })
	for i := range recs {
		r := &recs[i]
		exp := l.expected[r.DocID]
		r.Expected = corpus.Expected{}
		if exp["date"] {
			r.Expected.Date = &placeholder
		}
		if exp["amount"] {
			r.Expected.Amount = &placeholder
		}
		if exp["category"] {
			r.Expected.Category = &placeholder
		}
	}
	l.passes[at] = recs
	return recs, nil
}
