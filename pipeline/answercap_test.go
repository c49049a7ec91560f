package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/pipeline/client"
	"github.com/extractbench/extractbench/results"
)

// TestRun_EndlessEngineIsCutAtTheAnswerCap is item 5's reproduction: an
// engine streaming valid 64 KiB chunks without end (bounded here at 4 MiB
// a request so that the old client, which stored all of it, fails instead
// of filling the disk) gets each request cut at the answer cap, recorded as
// too_large and classed truncation with its evidence, and results.db holds
// no more than the caps. The protocol's max_answer_bytes replaces the cap
// derived from max_tokens.
func TestRun_EndlessEngineIsCutAtTheAnswerCap(t *testing.T) {
	const docs = 3
	for _, tt := range []struct {
		name   string
		key    string // the protocol's max_answer_bytes line
		answer int    // the cap it gives
	}{
		{"derived from max_tokens", "", client.MaxAnswerBytes(64)},
		{"max_answer_bytes", "max_answer_bytes: 4096\n", 4096},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := hostile.MustNew(t, hostile.SSEEndlessChunks, hostile.Options{N: 64})
			dir := t.TempDir()
			p := fmt.Sprintf(`name: endless
corpus: %s
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
request_timeout: 8s
%svariants:
  - name: v
    engine: {url: %q, model: %s}
`, writeSmallCorpus(t, dir, docs), tt.key, s.URL, hostile.Model)
			proto := filepath.Join(dir, "p.yaml")
			if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			sum, err := run(t, pipeline.Options{ProtocolPath: proto, OutDir: out})
			if err != nil {
				t.Fatal(err)
			}
			rd, err := results.OpenReadOnly(context.Background(), out)
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			recs, err := rd.Requests(context.Background(), sum.RunID, results.RequestFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != docs {
				t.Fatalf("%d requests rows, want %d", len(recs), docs)
			}
			want := fmt.Sprintf("its %d-byte cap", tt.answer)
			for _, r := range recs {
				if r.Kind != extractbench.TransportTooLarge || r.Failure != extractbench.Truncation || len(r.Output) != tt.answer ||
					!strings.Contains(r.FailureDetail, want) {
					t.Errorf("%s: kind %q, failure %q (%s), len(output) %d; want too_large, truncation at %s, %d bytes kept",
						r.DocID, r.Kind, r.Failure, r.FailureDetail, len(r.Output), want, tt.answer)
				}
			}
			fi, err := os.Stat(filepath.Join(out, "results.db"))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() > 4<<20 {
				t.Errorf("results.db holds %d bytes, want under 4 MiB for %d capped answers", fi.Size(), docs)
			}
		})
	}
}
