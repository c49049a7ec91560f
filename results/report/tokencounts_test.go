package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/plan/plantest"
)

// TestReport_TokenCountMismatches is issue 40 item 11's second half: the
// passes' token_count_mismatches were counted and shown nowhere. A
// variant's outcome sums them over its complete passes, and the report
// says so beside its token figures; a variant without any says nothing.
func TestReport_TokenCountMismatches(t *testing.T) {
	ctx := context.Background()
	three, none := int64(3), int64(0)
	a1 := plantest.Pass("bf16", 1, 1, 10, 10, 5, 100)
	a2 := plantest.Pass("bf16", 1, 2, 10, 10, 5, 100)
	b := plantest.Pass("int4", 1, 1, 10, 10, 5, 100)
	a1.TokenCountMismatches, a2.TokenCountMismatches, b.TokenCountMismatches = &three, &three, &none
	all := func(int) bool { return true }
	var recs []extractbench.Record
	for _, p := range []extractbench.Pass{a1, a2, b} {
		recs = append(recs, plantest.Records(p.Variant, p.Level, p.Repetition, 10, all)...)
	}
	dir := t.TempDir()
	plantest.Write(t, dir, plantest.Run{RunID: "r", Passes: []extractbench.Pass{a1, a2, b}, Records: recs})
	data, err := results.LoadRun(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"bf16": "6 requests whose engine-reported completion tokens disagree", "int4": ""}
	for _, o := range data.Outcomes() {
		got := o.TokenCountSentence()
		if (want[o.Variant] == "") != (got == "") || !strings.Contains(got, want[o.Variant]) {
			t.Errorf("%s: %q, want %q", o.Variant, got, want[o.Variant])
		}
	}
	if err := Write(ctx, dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "**Token counts.** bf16: 6 requests whose") || strings.Contains(string(md), "int4: 0") {
		t.Errorf("report.md does not say bf16's token count mismatches (only):\n%.1500s", md)
	}
}
