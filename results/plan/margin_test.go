package plan_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results/plan"
	"github.com/extractbench/extractbench/results/plan/plantest"
	"github.com/extractbench/extractbench/sizing"
)

// The synthetic card's engine: Llama-3.1-8B on an emulated 48 GB card whose
// KV pool holds exactly boundary sequences of the long documents.
const (
	marginBlock    = 256
	marginPrompt   = 6544 // prompt tokens a document
	marginOutput   = 256  // output tokens a document
	marginBoundary = 27
)

func marginTokens() int { return marginPrompt + marginOutput }

// marginCard is what engines/transformers/cardcap.py reports of a capped
// engine (its memory_cap), for a pool of seqs sequences of marginTokens.
func marginCard(gb float64, card string, seqs int) map[string]any {
	perSeq := (marginTokens() + marginBlock - 1) / marginBlock
	blocks := seqs*perSeq + perSeq - 1 // one sequence short of seqs + 1
	return map[string]any{
		"card": card, "label": "emulated " + card + " on NVIDIA H200: memory only; bandwidth and compute are the NVIDIA H200's",
		"cap_bytes": int64(gb * 1e9), "device_total_bytes": int64(150e9), "outside_torch_bytes": 600 << 20,
		"weights_bytes": int64(16_060_522_496), "activation_bytes": 1200 << 20, "utilisation": 0.9, "block_size": marginBlock,
		"kv_bytes_per_token": 131072, "num_blocks": blocks, "kv_capacity_tokens": blocks * marginBlock,
		"calculator_model": "Llama-3.1-8B",
	}
}

// marginRun writes one context-mode run: docs long documents at level
// requests in flight, on an engine that reported capInfo (nil: uncapped).
func marginRun(t *testing.T, capInfo map[string]any, level int, class int, tokens int, running, waiting, preempt int64, kv float64, memFail int64) string {
	t.Helper()
	return marginRunAs(t, "", capInfo, level, class, tokens, running, waiting, preempt, kv, memFail)
}

// marginRunAs is marginRun on an engine that names itself (about.engine;
// "" names none).
func marginRunAs(t *testing.T, engineName string, capInfo map[string]any, level int, class int, tokens int, running, waiting, preempt int64, kv float64, memFail int64) string {
	t.Helper()
	dir := t.TempDir()
	m := plantest.Manifest(plantest.DefaultCorpusSHA, "random-llama-3.1-8b", "emulated on NVIDIA H200", 150_000_000_000, 0, 600000)
	m["sweep"] = map[string]any{"mode": "context", "levels": "classes", "concurrency": level, "repetitions": 1}
	engine := map[string]any{"url": "http://127.0.0.1:8000", "kind": "transformers", "model": "random-llama-3.1-8b"}
	if capInfo != nil {
		about := map[string]any{"version": "transformers-5.17+torch-2.11", "memory_cap": capInfo}
		if engineName != "" {
			about["engine"] = engineName
		}
		engine["about"] = about
	}
	m["variants"] = []any{map[string]any{"name": "card", "engine": engine}}
	docs := level
	p := plantest.Pass("card", class, 1, docs, 0, 60, 5000)
	p.Mode, p.Phase = extractbench.ModeContext, extractbench.PhaseBaseline
	p.PromptTokens, p.OutputTokens = int64(docs*(tokens-marginOutput)), int64(docs*marginOutput)
	p.ObservedMaxRunning, p.ObservedMaxWaiting, p.Preemptions, p.PeakKVUsage = &running, &waiting, &preempt, &kv
	var f extractbench.FailureCounts
	f.Add(extractbench.Memory, memFail)
	f.Add(extractbench.Quality, int64(docs)-memFail)
	p.Failures = f
	plantest.Write(t, dir, plantest.Run{RunID: "r", Manifest: m, Passes: []extractbench.Pass{p}})
	return dir
}

func TestMargins_KnownBoundary(t *testing.T) {
	ctx := context.Background()
	l40s := marginCard(48, "L40S", marginBoundary)
	h100 := marginCard(80, "H100 SXM", 60)
	var dirs []string
	// 48 GB: every level up to the boundary runs whole; past it the engine runs the boundary,
	// the rest wait with the KV cache full, then preempts, then fails with out-of-memory.
	for _, l := range []int{14, 20, marginBoundary} {
		dirs = append(dirs, marginRun(t, l40s, l, 3, marginTokens(), int64(l), 0, 0, float64(l)/float64(marginBoundary+1), 0))
	}
	dirs = append(dirs,
		marginRun(t, l40s, 34, 3, marginTokens(), marginBoundary, 7, 0, 0.99, 0),
		// Admitted on their prompts' blocks, more ran for a while, then were preempted as they grew:
		// an overshoot, not the boundary, while a pass held back by the full pool says it.
		marginRun(t, l40s, 41, 3, marginTokens(), marginBoundary+3, 14, 3, 1, 0),
		marginRun(t, l40s, 54, 3, marginTokens(), marginBoundary-2, 30, 0, 1, 4),
		// Short documents meet another boundary: more sequences, never this card's long one.
		marginRun(t, l40s, 60, 1, 300, 58, 2, 5, 1, 0),
		// Scheduling, not memory: fewer running than in flight with the KV cache half empty.
		marginRun(t, l40s, 30, 3, marginTokens(), 26, 4, 0, 0.5, 0),
	)
	// 80 GB: never pushed past what it holds.
	for _, l := range []int{20, 40} {
		dirs = append(dirs, marginRun(t, h100, l, 3, marginTokens(), int64(l), 0, 0, 0.5, 0))
	}
	dirs = append(dirs, marginRun(t, nil, 16, 3, marginTokens(), 16, 0, 0, 0.5, 0)) // not emulated: no row
	// 24 GB: only a pass that preempted met the boundary: its most running is the boundary.
	l4 := marginCard(24, "L4", 4)
	dirs = append(dirs, marginRun(t, l4, 3, 3, marginTokens(), 3, 0, 0, 0.7, 0), marginRun(t, l4, 6, 3, marginTokens(), 5, 1, 2, 1, 0))

	rows, err := plan.Margins(ctx, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Card.Card != "L4" || rows[2].Card.Card != "H100 SXM" {
		t.Fatalf("got %d rows, want 3 in the cards' order (L4, L40S, H100 SXM): %+v", len(rows), rows)
	}
	for _, r := range rows {
		gpu := sizing.GPU{Name: r.Card.Card, MemoryBytes: r.Card.CapBytes}
		model, _ := sizing.Preset("Llama-3.1-8B")
		e, err := sizing.Calculate(sizing.Inputs{Model: model, ContextTokens: marginTokens(), Concurrency: 1, GPUs: []sizing.GPU{gpu}})
		if err != nil {
			t.Fatal(err)
		}
		f := e.Fits[0]
		if r.ContextTokens != marginTokens() || r.Predicted != f.MaxConcurrencyNoMargin || r.PredictedWithMargin != f.MaxConcurrency || r.Fits != f.Fits {
			t.Errorf("%s: context %d, predicted %d/%d fits %v; want %d, %d/%d %v", r.Card.Card, r.ContextTokens, r.Predicted,
				r.PredictedWithMargin, r.Fits, marginTokens(), f.MaxConcurrencyNoMargin, f.MaxConcurrency, f.Fits)
		}
		if !strings.Contains(r.Command, "-model Llama-3.1-8B -context 6800") {
			t.Errorf("%s: command %q", r.Card.Card, r.Command)
		}
		switch r.Card.Card {
		case "L4":
			if !r.Reached || r.Measured != 5 || r.Source != "measured" || r.Recommended != 4 {
				t.Errorf("L4: measured %d (reached %v), recommended %d (%s); want 5 from the preempting pass, 4 measured", r.Measured, r.Reached, r.Recommended, r.Source)
			}
		case "L40S":
			if !r.Reached || r.Measured != marginBoundary {
				t.Fatalf("L40S: measured %d (reached %v), want the known boundary %d", r.Measured, r.Reached, marginBoundary)
			}
			want := float64(f.MaxConcurrencyNoMargin-marginBoundary) / marginBoundary * 100
			if r.DiffPct == nil || math.Abs(*r.DiffPct-want) > 1e-9 {
				t.Errorf("L40S: difference %v, want %.3f%%", r.DiffPct, want)
			}
			if r.Source != "measured" || r.Recommended != int(math.Floor(marginBoundary*(1-sizing.DefaultMargin))) {
				t.Errorf("L40S: recommended %d (%s), want the boundary less the margin, measured", r.Recommended, r.Source)
			}
			if r.EnginePool != marginBoundary {
				t.Errorf("L40S: the engine's pool holds %d sequences, want %d", r.EnginePool, marginBoundary)
			}
			var saturated, schedule int
			for _, p := range r.Passes {
				if p.Saturated {
					saturated++
				}
				if strings.Contains(p.Evidence, "not by memory") {
					schedule++
				}
			}
			if saturated != 4 || schedule != 1 { // 34, 41, 54 and the short documents; 30 held back by scheduling
				t.Errorf("L40S: %d saturated passes, %d held back by scheduling; want 4 and 1: %+v", saturated, schedule, r.Passes)
			}
		case "H100 SXM":
			if r.Reached || r.DiffPct != nil || r.Measured != 40 {
				t.Errorf("H100: reached %v, diff %v, measured %d; want not reached, ran 40 at most", r.Reached, r.DiffPct, r.Measured)
			}
			if r.Source != "predicted" || r.Recommended != f.MaxConcurrency {
				t.Errorf("H100: recommended %d (%s), want the calculator's with margin %d", r.Recommended, r.Source, f.MaxConcurrency)
			}
		}
	}
	var b strings.Builder
	if err := plan.WriteMarginMarkdown(&b, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Emulated cards", "memory only; bandwidth and compute are the NVIDIA H200's", "| 27 |", "(measured)", "(predicted)",
		"≥ 40 (not reached)", "3 preemptions", "4 memory failures", "60 in flight (short)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("section lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := plan.WriteMarginMarkdown(&b, nil); err != nil || b.Len() != 0 {
		t.Errorf("no emulated card: wrote %q (%v), want nothing", b.String(), err)
	}
}

// TestMargins_AdmissionReserve is reference/h200/margin's L40S, measured: the
// transformers engine's KV pool held 28 long sequences, yet at 28, 35 and 42 in
// flight it ran 25 with the rest waiting and the KV cache at 87-88%: its FIFO
// scheduler admits no new prefill while fewer than 15% of the blocks are free.
// That is the card's boundary (held back by memory, through the scheduler),
// and the calculator with the same admission reserve is within 10% of it;
// the same passes from an engine with no known reserve stay "not by memory".
func TestMargins_AdmissionReserve(t *testing.T) {
	ctx := context.Background()
	card := map[string]any{
		"card": "L40S", "label": "emulated L40S (48 GB) on NVIDIA H200: memory only; bandwidth and compute are the NVIDIA H200's",
		"cap_bytes": int64(48e9), "device_total_bytes": int64(150109880320), "outside_torch_bytes": 728563712,
		"weights_bytes": int64(16060523520), "activation_bytes": 1010958336, "utilisation": 0.9, "block_size": marginBlock,
		"kv_bytes_per_token": 131072, "num_blocks": 756, "kv_capacity_tokens": 756 * marginBlock, "calculator_model": "Llama-3.1-8B",
	}
	const tokens = 6838 // the long documents' prompt + 256 output tokens, as measured
	passes := []struct {
		level            int
		running, waiting int64
		kv               float64
	}{{14, 14, 0, 0.49}, {21, 21, 0, 0.74}, {28, 25, 3, 0.88}, {35, 25, 10, 0.87}, {42, 25, 17, 0.88}}
	for _, tc := range []struct {
		engine  string
		reached bool
	}{{plan.TransformersEngine, true}, {"", false}} {
		var dirs []string
		for _, p := range passes {
			dirs = append(dirs, marginRunAs(t, tc.engine, card, p.level, 3, tokens, p.running, p.waiting, 0, p.kv, 0))
		}
		rows, err := plan.Margins(ctx, dirs)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Fatalf("engine %q: %d rows, want 1", tc.engine, len(rows))
		}
		r := rows[0]
		if r.Reached != tc.reached || r.Measured != 25 {
			t.Errorf("engine %q: measured %d (reached %v), want 25 (reached %v)", tc.engine, r.Measured, r.Reached, tc.reached)
		}
		if !tc.reached {
			if r.DiffPct != nil || !strings.Contains(r.Passes[2].Evidence, "not by memory") {
				t.Errorf("no reserve known: diff %v, evidence %q; want none and held back, not by memory", r.DiffPct, r.Passes[2].Evidence)
			}
			continue
		}
		if r.Predicted != 25 || r.DiffPct == nil || math.Abs(*r.DiffPct) > plan.MarginWithin*100 {
			t.Errorf("calculator %d, difference %v; want 25, within %.0f%% of the measured 25", r.Predicted, r.DiffPct, plan.MarginWithin*100)
		}
		if !strings.Contains(r.Passes[2].Evidence, "the scheduler admits no more") || !strings.Contains(r.Command, "-admission-reserve 0.15") ||
			!strings.Contains(r.Terms, "admission reserve 15%") {
			t.Errorf("evidence %q, command %q, terms %q: the reserve is not named", r.Passes[2].Evidence, r.Command, r.Terms)
		}
		if r.Recommended != 22 || r.Source != "measured" {
			t.Errorf("recommended %d (%s), want 22 measured (25 less 10%%)", r.Recommended, r.Source)
		}
	}
}

// An engine that sized its pool to less of the card than the default (its
// --utilisation) is held against the calculator at that same share: the
// prediction and the command follow the engine's utilisation, so that a pool
// deliberately made small is not compared with the default's larger one.
func TestMargins_EngineUtilisation(t *testing.T) {
	ctx := context.Background()
	card := marginCard(48, "L40S", 12)
	card["utilisation"] = 0.6
	dir := marginRun(t, card, 20, 3, marginTokens(), 12, 8, 0, 0.99, 0)
	rows, err := plan.Margins(ctx, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	r := rows[0]
	model, _ := sizing.Preset("Llama-3.1-8B")
	want := func(util float64) int {
		e, err := sizing.Calculate(sizing.Inputs{Model: model, ContextTokens: r.ContextTokens, Concurrency: 1,
			GPUs: []sizing.GPU{{Name: "L40S", MemoryBytes: int64(48e9)}}, Utilisation: util})
		if err != nil {
			t.Fatal(err)
		}
		return e.Fits[0].MaxConcurrencyNoMargin
	}
	if at06, at09 := want(0.6), want(0.9); r.Predicted != at06 || at06 >= at09 {
		t.Errorf("calculator %d; want %d (utilisation 0.6), below the default's %d", r.Predicted, at06, at09)
	}
	if !strings.Contains(r.Command, "-utilisation 0.6") {
		t.Errorf("command %q does not size the card at the engine's utilisation", r.Command)
	}
}
