package passrow

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
)

// liveHeap is the Go heap still referenced, after a full collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// tallyGrowth stores a pass of n records and returns how far the live heap
// rose above its level before TallyPass, at its highest while the rows
// streamed through (sampled every 500 rows) and with the tally returned.
func tallyGrowth(t *testing.T, n int) (int64, *Tally) {
	t.Helper()
	ctx := context.Background()
	s, err := results.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key := extractbench.PassKey{RunID: "run-heap", Variant: "v", Mode: extractbench.ModeConcurrency, Level: 4, Repetition: 1}
	for i := range n {
		at := int64(1_000_000 * (i + 1))
		s.Add(extractbench.Record{RunID: key.RunID, Variant: key.Variant, Mode: key.Mode, Level: key.Level, Repetition: key.Repetition,
			DocID: fmt.Sprintf("doc-%07d", i), LengthClass: "usual",
			Response: extractbench.Response{Timings: extractbench.Timings{SchedNS: at, SendNS: at + 10, FirstTokenNS: at + 900 + int64(i%97), LastTokenNS: at + 5000, DoneNS: at + 5100 + int64(i%89)},
				CompletionTokens: 40, ClientChunks: 40, UsageReported: true,
				Output: fmt.Sprintf(`{"date": "2025-01-%02d", "amount": "%d.50", "category": "rent", "note": "an answer of a usual length"}`, i%28+1, i)},
			Score: extractbench.Score{Accepted: i%5 != 0, StrictParseOK: true, LenientParseOK: true, SchemaOK: true, Date: extractbench.TP, Amount: extractbench.TP, Category: extractbench.TP}})
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	rs := &Account{Store: s}
	before, peak := liveHeap(), int64(0)
	tallyRowHook = func(rows int64) {
		if rows%500 == 0 {
			peak = max(peak, liveHeap()-before)
		}
	}
	defer func() { tallyRowHook = nil }()
	tally, err := rs.TallyPass(ctx, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tally.docs != int64(n) || tally.order.E2E.N != n {
		t.Fatalf("tally of %d records counted %d, %d E2E", n, tally.docs, tally.order.E2E.N)
	}
	peak = max(peak, liveHeap()-before)
	runtime.KeepAlive(tally)
	return peak, tally
}

// TestTallyPass_HeapFlat checks that a pass's row is computed without
// holding its records: the live heap while 20,000 rows stream through (and
// with the tally made of them) rises no more than with 2,000. Holding the
// records, as the passes row did before, costs ~1 KB a row here: 18 MB more.
// Sizes, not times, so a busy machine does not change the verdict.
func TestTallyPass_HeapFlat(t *testing.T) {
	small, _ := tallyGrowth(t, 2_000)
	large, _ := tallyGrowth(t, 20_000)
	const slack = 1 << 20
	t.Logf("live heap growth while tallying: %d KB at 2,000 rows, %d KB at 20,000", small>>10, large>>10)
	if large-small > slack {
		t.Errorf("tallying 20,000 rows holds %d KB more than 2,000 (%d KB against %d KB): a pass's records are held", (large-small)>>10, large>>10, small>>10)
	}
}

// A prompt the engine refused keeps its n_prompt_tokens on the record
// (usage_reported 0) but was never prefilled: the pass's prompt tokens, and
// so its prompt tokens/s, leave it out.
func TestPassTally_RefusedPromptNotPrefilled(t *testing.T) {
	rs := &Account{}
	tally := rs.newTally(nil)
	tally.add(&extractbench.Record{DocID: "a", Response: extractbench.Response{PromptTokens: 100, CompletionTokens: 10, UsageReported: true}})
	tally.add(&extractbench.Record{DocID: "b", Response: extractbench.Response{PromptTokens: 9000}}) // a context-exceeded 400's n_prompt_tokens
	if got, want := tally.promptTokens, int64(100); got != want {
		t.Fatalf("prompt tokens = %d, want %d", got, want)
	}
}
