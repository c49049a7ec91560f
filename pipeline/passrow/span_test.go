package passrow

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"

	"github.com/extractbench/extractbench/eval"
)

// TestResumedPassDuration: a pass cut by an interruption and resumed has
// duration_ns = the sum of its segments (first send to last done of each),
// not first send to last done: the time the tool was down is no pass time,
// and every per-pass rate divides by this figure. results/SCHEMA.md says
// the same of the column (the code and the schema agree).
func TestResumedPassDuration(t *testing.T) {
	rs := &Account{Resumes: []int64{500}} // resumed at 500 on the run clock
	tally := rs.newTally(nil)
	for _, r := range []extractbench.Record{
		{DocID: "a", Response: extractbench.Response{Timings: extractbench.Timings{SendNS: 100, DoneNS: 300}}},
		{DocID: "b", Response: extractbench.Response{Timings: extractbench.Timings{SendNS: 150, DoneNS: 320}}},
		{DocID: "c", Response: extractbench.Response{Timings: extractbench.Timings{SendNS: 600, DoneNS: 700}}},
	} {
		tally.add(&r)
	}
	first, last, dur := tally.activeSpan()
	if first != 100 || last != 700 || dur != 320 {
		t.Errorf("span %d..%d, duration %d; want 100..700 and 320 (220 before the interruption + 100 after)", first, last, dur)
	}
	if got := *eval.PerHour(2, dur); got != 2/(320e-9)*3600 {
		t.Errorf("rate over the duration: %v", got)
	}

	doc, err := os.ReadFile("../../results/SCHEMA.md")
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "| `duration_ns` |") {
			row = line
		}
	}
	if !strings.Contains(row, "of each segment") || !strings.Contains(row, "summed") {
		t.Errorf("SCHEMA.md's duration_ns does not say a resumed pass sums its segments:\n%s", row)
	}
}

// TestMergeSpans: the active time of a merged pass is the union of the
// shards' segments: overlapping shards count their common time once, a
// shard's downtime between its segments is not counted.
func TestMergeSpans(t *testing.T) {
	rec := func(id string, send, done int64) extractbench.Record {
		return extractbench.Record{DocID: id, Response: extractbench.Response{Timings: extractbench.Timings{SendNS: send, DoneNS: done}}}
	}
	var a, b string // one id of each of two shards
	for i := 0; a == "" || b == ""; i++ {
		id := fmt.Sprintf("d%d", i)
		if extractbench.ShardOf(id, 2) == 0 && a == "" {
			a = id
		} else if extractbench.ShardOf(id, 2) == 1 && b == "" {
			b = id
		}
	}
	rs := &Account{Merged: &Shards{Count: 2, Resumes: map[int][]int64{1: {500}}}}
	// shard 0: 100-300; shard 1: 200-400, then resumed at 500: 600-700.
	tally := rs.newTally(nil)
	for _, r := range []extractbench.Record{rec(a, 100, 300), rec(b, 200, 400), rec(b, 600, 700)} {
		tally.add(&r)
	}
	first, last, dur := tally.activeSpan()
	if first != 100 || last != 700 || dur != 400 {
		t.Errorf("span = %d..%d, %d ns active; want 100..700, 400 (100-400 and 600-700)", first, last, dur)
	}
}
