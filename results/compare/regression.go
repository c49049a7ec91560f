package compare

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
	"github.com/extractbench/extractbench/numfmt"
	"github.com/extractbench/extractbench/results"
)

// DefaultLatencyRatio is how much p95 E2E at the recommended level may grow
// over the baseline run before a nightly run fails: 25%.
const DefaultLatencyRatio = 1.25

// Verdict is a nightly run judged against a baseline run. Pass false makes
// the CLI exit non-zero; Reasons say why, one per failed check.
type Verdict struct {
	Pass         bool                `json:"pass"`
	Reasons      []string            `json:"reasons,omitempty"`
	Notes        []string            `json:"notes,omitempty"`
	BaselineDir  string              `json:"baseline_dir"`
	CurrentDir   string              `json:"current_dir"`
	Margin       float64             `json:"margin"`
	LatencyRatio float64             `json:"latency_ratio"`
	Variants     []VariantRegression `json:"variants"`
	// Differences are what the two runs measured differently (ManifestDiffs),
	// compared anyway because the caller accepted them; empty otherwise.
	Differences []string `json:"accepted_differences,omitempty"`
}

// VariantRegression is one variant's figures in both runs.
type VariantRegression struct {
	Variant string `json:"variant"`
	// BaselineShare and CurrentShare are the accepted shares at the
	// baseline level (level 1, mean over repetitions).
	BaselineShare float64 `json:"baseline_accepted"`
	CurrentShare  float64 `json:"current_accepted"`
	// Level is the baseline run's recommended level, where p95 E2E is
	// compared; 0 when it had none.
	Level         int     `json:"level"`
	BaselineP95NS int64   `json:"baseline_e2e_p95_ns"`
	CurrentP95NS  int64   `json:"current_e2e_p95_ns"`
	Ratio         float64 `json:"ratio"` // current / baseline p95; 0 when not compared
	// CurrentRecommended is the current run's own recommended level.
	CurrentRecommended int `json:"current_recommended"`
}

// Regression judges currentDir's latest run against baselineDir's: it fails
// when a variant's accepted share at the baseline level drops by more than
// margin, or its p95 E2E at the baseline run's recommended level grows more
// than latencyRatio times and beyond the spread both runs' repetitions
// measured (eval.Apart: one repetition gives no latency finding). Both runs must have the same corpus. margin 0
// means DefaultMargin; latencyRatio 0 means DefaultLatencyRatio.
func Regression(ctx context.Context, baselineDir, currentDir string, margin, latencyRatio float64, acceptDiffs bool) (Verdict, error) {
	if margin == 0 {
		margin = DefaultMargin
	}
	if latencyRatio == 0 {
		latencyRatio = DefaultLatencyRatio
	}
	if margin < 0 || latencyRatio < 1 {
		return Verdict{}, results.Refused("margin %g and latency ratio %g: want margin ≥ 0 and ratio ≥ 1", margin, latencyRatio)
	}
	base, err := results.LoadRun(ctx, baselineDir)
	if err != nil {
		return Verdict{}, fmt.Errorf("baseline: %w", err)
	}
	cur, err := results.LoadRun(ctx, currentDir)
	if err != nil {
		return Verdict{}, fmt.Errorf("current: %w", err)
	}
	hb, hc := base.Manifest.Corpus.SHA256, cur.Manifest.Corpus.SHA256
	if hb == "" || hb != hc {
		return Verdict{}, results.Refused("refusing: baseline %s ran corpus %q and current %s ran %q; results of different corpora are never compared",
			baselineDir, short(hb), currentDir, short(hc))
	}
	diffs := ManifestDiffs(&base.Manifest, &cur.Manifest)
	if len(diffs) > 0 && !acceptDiffs {
		return Verdict{}, results.Refused("refusing: the baseline %s measured something else:\n  %s\n(-accept-baseline-diff compares anyway and records it)",
			baselineDir, strings.Join(diffs, "\n  "))
	}
	v := Verdict{BaselineDir: baselineDir, CurrentDir: currentDir, Margin: margin, LatencyRatio: latencyRatio}
	if len(diffs) > 0 {
		v.Differences = diffs
		v.Notes = append(v.Notes, "compared although the runs differ (accepted): "+strings.Join(diffs, "; "))
	}
	curSeries := map[string]eval.Series{}
	for _, s := range cur.Series() {
		curSeries[s.Variant+"\x00"+string(s.Mode)] = s
	}
	for _, bs := range base.Series() {
		br := bs.Recommendation
		name := br.Variant
		if br.Mode != extractbench.ModeConcurrency {
			name += " (" + string(br.Mode) + ")"
		}
		cs, ok := curSeries[br.Variant+"\x00"+string(br.Mode)]
		cr := cs.Recommendation
		if !ok {
			v.Reasons = append(v.Reasons, fmt.Sprintf("%s: not measured in the current run", name))
			continue
		}
		vr := VariantRegression{Variant: name, BaselineShare: br.BaselineShare, CurrentShare: cr.BaselineShare,
			Level: br.Recommended, CurrentRecommended: cr.Recommended}
		if drop := br.BaselineShare - cr.BaselineShare; drop > margin {
			v.Reasons = append(v.Reasons, fmt.Sprintf("%s: accepted share at the baseline level fell %.1f points (%.1f%% → %.1f%%), more than the margin %.1f",
				name, drop*100, br.BaselineShare*100, cr.BaselineShare*100, margin*100))
		}
		n := func(level int) string { return eval.LevelLabel(br.Mode, level) }
		if !br.Usable() {
			v.Notes = append(v.Notes, fmt.Sprintf("%s: the baseline run recommends no level (%s): latency not compared", name, br.Why))
		} else {
			bl, cl := bs.Level(br.Recommended), cs.Level(br.Recommended)
			switch {
			case cl == nil:
				v.Reasons = append(v.Reasons, fmt.Sprintf("%s: %s, recommended by the baseline run, was not measured in the current run", name, n(br.Recommended)))
			case bl.E2EP95NS.N == 0 || cl.E2EP95NS.N == 0 || bl.E2EP95NS.Median <= 0:
				v.Notes = append(v.Notes, fmt.Sprintf("%s: p95 E2E at %s is unknown in one run: latency not compared", name, n(br.Recommended)))
			default:
				vr.BaselineP95NS, vr.CurrentP95NS = int64(bl.E2EP95NS.Median), int64(cl.E2EP95NS.Median)
				vr.Ratio = float64(vr.CurrentP95NS) / float64(vr.BaselineP95NS)
				if finding, regressed := latencyFinding(name, n(br.Recommended), vr.Ratio, latencyRatio, bl.E2EP95NS, cl.E2EP95NS); regressed {
					v.Reasons = append(v.Reasons, finding)
				} else if finding != "" {
					v.Notes = append(v.Notes, finding)
				}
			}
		}
		if cr.Recommended < br.Recommended {
			fell := "none"
			if cr.Usable() {
				fell = eval.LevelName(cr.Mode, cr.Recommended)
			}
			v.Notes = append(v.Notes, fmt.Sprintf("%s: the recommended level fell from %s to %s (%s)", name, eval.LevelName(br.Mode, br.Recommended), fell, cr.Why))
		}
		v.Variants = append(v.Variants, vr)
	}
	if len(v.Variants) == 0 && len(v.Reasons) == 0 {
		v.Reasons = append(v.Reasons, "the baseline run has no complete pass to compare against")
	}
	if cur.Simulated() {
		v.Notes = append(v.Notes, "simulated run: figures come from the built-in engine, not a GPU")
	}
	v.Pass = len(v.Reasons) == 0
	return v, nil
}

// latencyFinding judges p95 E2E at level: a regression (regressed) when
// the median grew more than limit times and the two runs' ranges over
// repetitions do not overlap; a note saying why not when it grew more than
// limit but within the spread (or on one repetition); "" when it did not
// grow more than limit.
func latencyFinding(name string, level string, ratio, limit float64, base, cur eval.Spread) (finding string, regressed bool) {
	if ratio <= limit {
		return "", false
	}
	what := fmt.Sprintf("%s: p95 E2E at %s grew %.2f× (%s%s → %s%s), more than %.2f×", name, level, ratio,
		base.Duration(), base.Qualifier(), cur.Duration(), cur.Qualifier(), limit)
	if apart, why := eval.Apart(base, cur); !apart {
		if base.N < 2 || cur.N < 2 {
			why = eval.OneRepetition
		}
		return what + ", not called a regression: " + why, false
	}
	return what + ", beyond the spread of both runs' repetitions", true
}

// WriteText writes the verdict for people.
func (v Verdict) WriteText(w io.Writer) error {
	var b strings.Builder
	state := "PASS"
	if !v.Pass {
		state = "FAIL"
	}
	fmt.Fprintf(&b, "Regression %s: %s against baseline %s (margin %.1f points, p95 E2E ratio %.2f×)\n",
		state, v.CurrentDir, v.BaselineDir, v.Margin*100, v.LatencyRatio)
	for _, r := range v.Variants {
		fmt.Fprintf(&b, "  %s: accepted %.1f%% → %.1f%%", r.Variant, r.BaselineShare*100, r.CurrentShare*100)
		if r.Ratio > 0 {
			fmt.Fprintf(&b, "; p95 E2E at %d %s → %s (%.2f×)", r.Level, fmtNS(&r.BaselineP95NS), fmtNS(&r.CurrentP95NS), r.Ratio)
		}
		b.WriteString("\n")
	}
	for _, r := range v.Reasons {
		fmt.Fprintf(&b, "FAIL: %s\n", r)
	}
	for _, n := range v.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write regression verdict: %w", err)
	}
	return nil
}

// WriteJSON writes the verdict as indented JSON.
func (v Verdict) WriteJSON(w io.Writer) error { return numfmt.WriteJSON(w, v) }
