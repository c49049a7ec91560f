// Package compare sets two variants side by side on the same documents
// (MEASUREMENT.md section 8): the paired acceptance difference with its 90%
// interval and TOST verdict for a margin, every flipped document, per-field
// F1 deltas, the A-vs-A noise floor, and latency, throughput and memory at
// each common level. It also judges a nightly run against a baseline run
// (Regression). It reads results directories and never writes them.
package compare

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/results"
)

// Named defaults of a comparison.
const (
	// DefaultMargin is δ, the largest acceptance difference still called
	// equivalent: two percentage points.
	DefaultMargin = 0.02
	// DefaultAlpha is each one-sided test's level: the TOST interval is
	// 1 − 2α = 90%.
	DefaultAlpha = 0.05
	// DefaultResamples is the bootstrap resamples of each F1 delta.
	DefaultResamples = 2000
	// DefaultSeed fixes the bootstrap so that a comparison prints the same
	// interval every time it runs.
	DefaultSeed = 1
)

// Options say what to compare and how.
type Options struct {
	A, B Side
	Mode extractbench.Mode // "" = the mode A's variant ran Level in, concurrency first
	// Level is the level whose documents are paired, as the pages name it
	// (eval.ParseLevel: "sync", "10/s", "8", "long"); "" is the baseline
	// level of Mode (1, or a rate sweep's sync). A level that both sides
	// did not measure is refused with the levels they did.
	Level      string
	Repetition int     // 0 = 1
	Margin     float64 // 0 = DefaultMargin
	Alpha      float64 // 0 = DefaultAlpha
	Resamples  int     // 0 = DefaultResamples
	Seed       int64   // 0 = DefaultSeed
}

// SideInfo describes one side as its run pinned it.
type SideInfo struct {
	Side           Side                     `json:"side"`
	RunID          string                   `json:"run_id"`
	Variant        string                   `json:"variant"`
	Model          string                   `json:"model"`
	Engine         extractbench.EngineInfo  `json:"engine"`
	GPU            extractbench.GPUInfoJSON `json:"gpu"`
	CorpusSHA256   string                   `json:"corpus_sha256"`
	Simulated      bool                     `json:"simulated"`
	Recommendation eval.Recommendation      `json:"recommendation"`
}

// FieldDelta is one field's F1 under each side and B − A with its bootstrap
// interval (eval.DefaultCILevel).
type FieldDelta struct {
	Field string  `json:"field"`
	AF1   float64 `json:"a_f1"`
	BF1   float64 `json:"b_f1"`
	Delta float64 `json:"delta"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// NoiseFloor is the A-vs-A comparison: two repetitions of one variant at
// one level, paired like A and B. Floor is the larger bound of its interval
// in absolute value: a difference the tool cannot tell from nothing.
type NoiseFloor struct {
	Variant    string   `json:"variant"`
	Level      int      `json:"level"`
	Reps       [2]int   `json:"repetitions"`
	N          int      `json:"n"`
	Flips      int      `json:"flips"`
	Delta      float64  `json:"delta"`
	Lo         float64  `json:"lo"`
	Hi         float64  `json:"hi"`
	Floor      float64  `json:"floor"`
	FlippedIDs []string `json:"flipped_ids,omitempty"`
}

// Result is a comparison. Equivalent false makes the CLI exit 1, or 4 when
// Inconclusive.
type Result struct {
	A, B        SideInfo               `json:"-"`
	Sides       [2]SideInfo            `json:"sides"`
	Mode        extractbench.Mode      `json:"mode"`
	Level       int                    `json:"level"`
	LevelName   string                 `json:"level_name"` // eval.LevelName: "sync", "10/s", "8"
	Repetition  int                    `json:"repetition"`
	Margin      float64                `json:"margin"`
	Equivalence eval.EquivalenceResult `json:"equivalence"`
	Equivalent  bool                   `json:"equivalent"`
	OnlyInA     []string               `json:"only_in_a,omitempty"` // documents left out of the pairing
	OnlyInB     []string               `json:"only_in_b,omitempty"`
	Fields      []FieldDelta           `json:"fields"`
	// FlipFields names, for a protocol of declared fields, the fields
	// behind each flip (Equivalence.Flips, in its order): the ones the
	// failing side got wrong.
	FlipFields  []FlipFields `json:"flip_fields,omitempty"`
	NoiseFloors []NoiseFloor `json:"noise_floors,omitempty"`
	Levels      []LevelRow   `json:"levels"`
	// Tokenization is the paired passes' tokenizer drift, printed before
	// the verdict.
	Tokenization Tokenization `json:"tokenization"`
	Warnings     []string     `json:"warnings,omitempty"`

	// Inconclusive: not equivalent on too few documents to have shown it
	// (Equivalence.TooFew); the CLI exits 4 rather than 1.
	Inconclusive bool `json:"inconclusive,omitempty"`
}

// Run compares B against A (A is the reference). It refuses sides whose
// corpus hashes differ: their documents are not the same documents.
func Run(ctx context.Context, opt Options) (Result, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Result{}, err
	}
	a, err := load(ctx, opt.A)
	if err != nil {
		return Result{}, fmt.Errorf("side A: %w", err)
	}
	defer a.close()
	b, err := load(ctx, opt.B)
	if err != nil {
		return Result{}, fmt.Errorf("side B: %w", err)
	}
	defer b.close()
	return compareSides(ctx, opt, a, b)
}

// compareSides is Run on sides already read, opt's defaults set.
func compareSides(ctx context.Context, opt Options, a, b *loaded) (Result, error) {
	if err := sameCorpus(a, b); err != nil {
		return Result{}, err
	}
	if a.run.Run.RunID == b.run.Run.RunID && a.side.Dir == b.side.Dir && a.variant == b.variant {
		return Result{}, results.Refused("A and B are both variant %s of run %s: name two variants, or two directories", a.variant, a.run.Run.RunID)
	}
	if a.run != b.run { // two variants of one run read share its expectations
		mergeExpected(a, b)
	}

	r := Result{Repetition: opt.Repetition, Margin: opt.Margin}
	var err error
	if r.Mode, r.Level, err = pairedLevel(a, b, opt.Mode, opt.Level, opt.Repetition); err != nil {
		return Result{}, err
	}
	r.LevelName = eval.LevelName(r.Mode, r.Level)
	r.A, r.B = info(a, r.Mode), info(b, r.Mode)
	r.Sides = [2]SideInfo{r.A, r.B}
	ra, err := a.records(ctx, r.Mode, r.Level, opt.Repetition)
	if err != nil {
		return Result{}, err
	}
	rb, err := b.records(ctx, r.Mode, r.Level, opt.Repetition)
	if err != nil {
		return Result{}, err
	}
	if len(ra) == 0 || len(rb) == 0 {
		return Result{}, results.Refused("no documents at %s repetition %d (A has %d, B has %d): choose a level both sides measured",
			eval.LevelLabel(r.Mode, r.Level), opt.Repetition, len(ra), len(rb))
	}
	r.Tokenization = tokenization(a, b, ra, rb, r.Mode, r.Level, opt.Repetition)
	var pairs []eval.Pair
	pairs, r.OnlyInA, r.OnlyInB = pair(ra, rb)
	r.Equivalence = eval.Equivalence(pairs, opt.Margin, opt.Alpha)
	r.Equivalent = r.Equivalence.Equivalent
	r.Inconclusive = r.Equivalence.TooFew
	if len(r.OnlyInA)+len(r.OnlyInB) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d document(s) only in A and %d only in B were left out of the pairing",
			len(r.OnlyInA), len(r.OnlyInB)))
	}
	r.Fields = fieldDeltas(ra, rb, opt.Resamples, opt.Seed)
	if eval.DeclaredRecords(ra) || eval.DeclaredRecords(rb) {
		r.FlipFields = flipFields(r.Equivalence.Flips, ra, rb)
	}
	for _, l := range []*loaded{a, b} {
		nf, ok, err := noiseFloor(ctx, l, r.Mode, r.Level, opt.Alpha)
		if err != nil {
			return Result{}, fmt.Errorf("noise floor of %s: %w", l.side, err)
		}
		if ok {
			r.NoiseFloors = append(r.NoiseFloors, nf)
		}
	}
	switch floor := r.Floor(); {
	case len(r.NoiseFloors) == 0:
		r.Warnings = append(r.Warnings, "no A-vs-A noise floor: neither variant has two repetitions at one level; the margin is not checked against the run's own noise")
	case opt.Margin <= floor:
		r.Warnings = append(r.Warnings, fmt.Sprintf("the margin %.3f is not above the A-vs-A noise floor %.3f: equivalence at this margin cannot be told from repetition noise; widen the margin or measure more documents",
			opt.Margin, floor))
	}
	if r.A.Simulated || r.B.Simulated {
		r.Warnings = append(r.Warnings, "simulated run: figures come from the built-in engine, not a GPU")
	}
	r.Levels = levelRows(a, b, r.Mode)
	return r, nil
}

// withDefaults is opt with each zero field's default, or the refusal of a
// margin or level out of range.
func (opt Options) withDefaults() (Options, error) {
	if opt.Repetition == 0 {
		opt.Repetition = 1
	}
	if opt.Margin == 0 {
		opt.Margin = DefaultMargin
	}
	if opt.Alpha == 0 {
		opt.Alpha = DefaultAlpha
	}
	if opt.Resamples == 0 {
		opt.Resamples = DefaultResamples
	}
	if opt.Seed == 0 {
		opt.Seed = DefaultSeed
	}
	if opt.Margin < 0 || opt.Margin >= 1 {
		return opt, results.Refused("margin %g: want a share between 0 and 1 (0.02 = two points)", opt.Margin)
	}
	if opt.Alpha <= 0 || opt.Alpha >= 0.5 {
		return opt, results.Refused("alpha %g: want a level between 0 and 0.5", opt.Alpha)
	}
	return opt, nil
}

// Floor is the largest noise floor measured, 0 when none was.
func (r Result) Floor() float64 {
	var f float64
	for _, n := range r.NoiseFloors {
		f = max(f, n.Floor)
	}
	return f
}

func sameCorpus(a, b *loaded) error {
	ha, hb := a.run.Manifest.Corpus.SHA256, b.run.Manifest.Corpus.SHA256
	if ha == "" || hb == "" {
		return results.Refused("cannot check the corpus: %s has corpus hash %q and %s %q", a.side, ha, b.side, hb)
	}
	if ha != hb {
		return results.Refused("refusing: %s ran corpus %s and %s ran corpus %s; a paired comparison needs the same documents",
			a.side, short(ha), b.side, short(hb))
	}
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// mergeExpected gives both sides the union of what each run tells about
// the expectations, so that both count F1 alike.
func mergeExpected(a, b *loaded) {
	m := map[string]map[string]bool{}
	for _, src := range []map[string]map[string]bool{a.expected, b.expected} {
		for id, fs := range src {
			if m[id] == nil {
				m[id] = map[string]bool{}
			}
			for f, v := range fs {
				m[id][f] = m[id][f] || v
			}
		}
	}
	a.expected, b.expected = m, m
}

func info(l *loaded, mode extractbench.Mode) SideInfo {
	vm := l.run.Manifest.Variant(l.variant)
	si := SideInfo{Side: l.side, RunID: l.run.Run.RunID, Variant: l.variant, Model: vm.Engine.Model, Engine: vm.Engine,
		GPU: vm.GPU, CorpusSHA256: l.run.Manifest.Corpus.SHA256, Simulated: l.run.Simulated()}
	if s := l.seriesOf(mode); s != nil {
		si.Recommendation = s.Recommendation
	}
	return si
}

// pair matches records by document id; both slices are sorted by id.
func pair(a, b []extractbench.Record) (pairs []eval.Pair, onlyA, onlyB []string) {
	bi := make(map[string]*extractbench.Record, len(b))
	for i := range b {
		if _, dup := bi[b[i].DocID]; !dup {
			bi[b[i].DocID] = &b[i]
		}
	}
	seen := map[string]bool{}
	for i := range a {
		id := a[i].DocID
		if seen[id] {
			continue
		}
		seen[id] = true
		rb, ok := bi[id]
		if !ok {
			onlyA = append(onlyA, id)
			continue
		}
		pairs = append(pairs, eval.Pair{DocID: id, AOK: a[i].Accepted, BOK: rb.Accepted, AOutput: a[i].Output, BOutput: rb.Output})
	}
	for id := range bi {
		if !seen[id] {
			onlyB = append(onlyB, id)
		}
	}
	sort.Strings(onlyB)
	return pairs, onlyA, onlyB
}

// noiseFloor pairs repetitions 1 and 2 of a side's variant at the compared
// level, else at the lowest level with two complete repetitions.
func noiseFloor(ctx context.Context, l *loaded, mode extractbench.Mode, level int, alpha float64) (NoiseFloor, bool, error) {
	reps := map[int][]int{}
	for _, p := range l.run.Passes {
		if p.Variant == l.variant && p.Mode == mode && p.Complete() {
			reps[p.Level] = append(reps[p.Level], p.Repetition)
		}
	}
	at := -1
	if len(reps[level]) >= 2 {
		at = level
	} else {
		for lv, rs := range reps {
			if len(rs) >= 2 && (at < 0 || lv < at) {
				at = lv
			}
		}
	}
	if at < 0 {
		return NoiseFloor{}, false, nil
	}
	rs := reps[at]
	sort.Ints(rs)
	r1, err := l.records(ctx, mode, at, rs[0])
	if err != nil {
		return NoiseFloor{}, false, err
	}
	r2, err := l.records(ctx, mode, at, rs[1])
	if err != nil {
		return NoiseFloor{}, false, err
	}
	pairs, _, _ := pair(r1, r2)
	if len(pairs) == 0 {
		return NoiseFloor{}, false, nil
	}
	// The margin does not matter here: only the interval is read.
	eq := eval.Equivalence(pairs, 1, alpha)
	nf := NoiseFloor{Variant: l.variant, Level: at, Reps: [2]int{rs[0], rs[1]}, N: eq.N, Flips: eq.B + eq.C,
		Delta: eq.Delta, Lo: eq.Lo, Hi: eq.Hi, Floor: max(math.Abs(eq.Lo), math.Abs(eq.Hi))}
	for _, f := range eq.Flips {
		nf.FlippedIDs = append(nf.FlippedIDs, f.DocID)
	}
	return nf, true, nil
}
