package plan

import (
	"fmt"
	"io"
	"strings"

	"github.com/extractbench/extractbench/numfmt"
	"github.com/extractbench/extractbench/sizing"
)

// MarginSheet is the selection sheet's section for emulated cards, one row
// per card: fits / concurrency limit with margin / measured or predicted.
func MarginSheet(rows []MarginRow) (header []string, cells [][]string) {
	header = []string{"emulated card", "model, context", "fits", "engine's KV pool", "measured boundary", "calculator",
		"difference", "concurrency limit with margin", "evidence"}
	for _, r := range rows {
		fits := "no"
		if r.Fits {
			fits = "yes"
		}
		measured := fmt.Sprintf("≥ %d (not reached)", r.Measured)
		if r.Reached {
			measured = fmt.Sprint(r.Measured)
		}
		diff := "n/a"
		if r.DiffPct != nil {
			diff = fmt.Sprintf("%+.1f%%", *r.DiffPct)
		}
		var ev []string
		for _, p := range r.Passes {
			e := fmt.Sprintf("%d in flight", p.Requested)
			if p.Class != "" {
				e += " (" + p.Class + ")"
			}
			e += ": " + p.Evidence
			if p.OutputsChanged != nil {
				e += fmt.Sprintf(", answers changed from level 1: %d (verdicts %s)", *p.OutputsChanged, optInt(p.VerdictsChanged))
			}
			ev = append(ev, e)
		}
		cells = append(cells, []string{
			fmt.Sprintf("%s [%s]", r.Card.Label, numfmt.GiBString(r.Card.CapBytes)),
			fmt.Sprintf("%s, %s tokens a sequence", r.Model, numfmt.GroupDigits(int64(r.ContextTokens))),
			fits,
			fmt.Sprintf("%s blocks of %d = %s tokens: %d sequences", numfmt.GroupDigits(int64(r.Card.NumBlocks)), r.Card.BlockSize,
				numfmt.GroupDigits(r.Card.KVCapacityTokens), r.EnginePool),
			measured,
			fmt.Sprintf("%d (%d with its margin): `%s`", r.Predicted, r.PredictedWithMargin, r.Command),
			diff + "; " + r.Verdict(),
			fmt.Sprintf("%d (%s)", r.Recommended, r.Source),
			strings.Join(ev, "; "),
		})
	}
	return header, cells
}

// WriteMarginMarkdown writes the emulated cards' section; nothing without rows.
func WriteMarginMarkdown(w io.Writer, rows []MarginRow) error {
	if len(rows) == 0 {
		return nil
	}
	ew := &numfmt.Writer{W: w}
	header, cells := MarginSheet(rows)
	ew.Printf("\n## Emulated cards: the calculator against the measured memory boundary\n\n")
	ew.Printf("Each card is emulated on a larger one: the engine's allocator capped to the card's size and its KV pool sized from what the card leaves (memory only; bandwidth and compute are the real device's). The boundary is the most sequences the engine ran at once in a pass that met memory (memory failures, preemptions, or fewer running than in flight with the KV cache at %.0f%% or more, or too full for one more sequence), over the passes of the longest documents; the limit with margin is that less %.0f%%, or the calculator's own with its margin where no pass met the boundary. The difference is (calculator − measured) / measured; within %.0f%% they agree.\n\n",
		MarginKVFull*100, marginShare()*100, MarginWithin*100)
	ew.Printf("| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat("---|", len(header)))
	for _, row := range cells {
		for i := range row {
			row[i] = strings.ReplaceAll(row[i], "|", "\\|")
		}
		ew.Printf("| %s |\n", strings.Join(row, " | "))
	}
	ew.Printf("\nTerms, the engine's measured beside the calculator's:\n")
	for _, r := range rows {
		ew.Printf("- %s: %s\n", r.Card.Card, r.Terms)
	}
	if ew.Err != nil {
		return fmt.Errorf("write emulated cards: %w", ew.Err)
	}
	return nil
}

func marginShare() float64 { return sizing.DefaultMargin }

func optInt(v *int64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprint(*v)
}

func joinSemi(s []string) string { return strings.Join(s, "; ") }

func gib(b int64) string { return numfmt.GiBString(b) }
