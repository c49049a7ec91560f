package pipeline_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
	"github.com/extractbench/extractbench/results/resultstest"
)

// hostileProtocol writes a one-pass protocol over docs documents against
// the hostile engine at url.
func hostileProtocol(t *testing.T, dir string, docs int, sweep, url string) string {
	t.Helper()
	p := fmt.Sprintf(`name: hostile
corpus: %s
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: %s
telemetry_interval: 10ms
request_timeout: 5s
variants:
  - name: v
    engine: {url: %q, model: %s}
`, writeSmallCorpus(t, dir, docs), sweep, url, hostile.Model)
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRun_EngineNumbersRefused is item 10 of the hardening issue: against an
// engine that reports impossible numbers, the pass row holds NULL (or the
// client's own count) where the numbers would have gone, never the garbage
// (an overflowed total, a negative rate, −8589934592 GiB), and the pass
// records one engine_numbers_refused event.
func TestRun_EngineNumbersRefused(t *testing.T) {
	for _, tt := range []struct {
		mode  hostile.Mode
		nulls []string // pass columns that must be NULL
	}{
		{hostile.NumbersUsageNegative, nil},
		{hostile.NumbersUsageHuge, nil},
		// Issue 40 item 7: float counts made every request error/malformed_sse
		// (0% accepted); now refused like a negative count, the answer kept.
		{hostile.NumbersUsageFloat, nil},
		{hostile.NumbersMetricsHuge, []string{"observed_max_running", "observed_max_waiting", "peak_kv_usage", "preemptions", "peak_torch_allocated_bytes", "peak_torch_reserved_bytes", "engine_queue_mean_ns"}},
		{hostile.NumbersMetricsNegative, []string{"observed_max_running", "observed_max_waiting", "peak_kv_usage", "preemptions", "peak_torch_allocated_bytes", "peak_torch_reserved_bytes", "engine_queue_mean_ns"}},
		{hostile.NumbersMetricsNaN, []string{"observed_max_running", "observed_max_waiting", "peak_kv_usage", "preemptions", "peak_torch_allocated_bytes", "peak_torch_reserved_bytes", "engine_queue_mean_ns"}},
	} {
		t.Run(string(tt.mode), func(t *testing.T) { numbersRefused(t, tt.mode, tt.nulls) })
	}
}

// numbersRefusedDocs is TestRun_EngineNumbersRefused's corpus.
const numbersRefusedDocs = 4

// numbersRefused runs one pass against an engine of mode: its row holds
// sane tokens and NULL in the columns nulls, and one event and a warning
// say what was refused.
func numbersRefused(t *testing.T, mode hostile.Mode, nulls []string) {
	const docs = numbersRefusedDocs
	srv := hostile.MustNew(t, mode, hostile.Options{})
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	var log bytes.Buffer
	proto := hostileProtocol(t, dir, docs, "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0}", srv.URL)
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true, Progress: &log}); err != nil {
		t.Fatal(err)
	}
	ps := resultstest.Passes(t, out)
	if got := len(ps); got != 1 {
		t.Fatalf("%d passes, want 1", got)
	}
	p := ps[0]
	refusedTokens(t, out, p, strings.HasPrefix(string(mode), "numbers-usage"))
	for _, col := range nulls {
		if v := resultstest.Column(t, p, col); v != nil {
			t.Errorf("%s = %v, want NULL", col, v)
		}
	}
	if got := eventCount(t, out, results.EventEngineNumbersRefused, "pass at level 1, repetition 1: %"); got != 1 {
		t.Errorf("%d engine_numbers_refused events for the pass, want 1; log:\n%s", got, log.String())
	}
	if !strings.Contains(log.String(), "engine numbers refused") {
		t.Errorf("stderr does not warn of the refused numbers:\n%s", log.String())
	}
}

// refusedTokens: the engine's usage refused (usage), each request counts
// as without one: the client's count, prompt tokens unknown.
func refusedTokens(t *testing.T, out string, p extractbench.Pass, usage bool) {
	const docs = numbersRefusedDocs
	wantShare := 1
	if usage {
		wantShare = 0
	}
	if !(p.OutputTokens >= 0 && p.OutputTokens <= docs*100 && p.PromptTokens >= 0 && p.PromptTokens <= docs*100 &&
		p.TotalTokensPerS != nil && *p.TotalTokensPerS >= 0 && p.UsageReportedShare != nil && *p.UsageReportedShare == float64(wantShare)) {
		t.Errorf("pass tokens (output, prompt, total/s, usage share) = %d %d %v %v, want sane counts and usage share %d",
			p.OutputTokens, p.PromptTokens, resultstest.Column(t, p, "total_tokens_per_s"), resultstest.Column(t, p, "usage_reported_share"), wantShare)
	}
	if usage {
		if got := resultstest.Count(resultstest.Requests(t, out), func(r *extractbench.Record) bool {
			return r.PromptTokens == 0 && !r.UsageReported && r.CompletionTokens == r.ClientChunks
		}); got != docs {
			t.Errorf("%d of %d requests have their usage refused (prompt NULL, the client's count)", got, docs)
		}
	}
}

// TestRun_AutoLevelsCountsServedRequests is item 4 of the hardening issue:
// against an engine that answers 429 at once above 2 requests in flight,
// the saturation probe's throughput counts the requests the engine served,
// not the refusals (which made it "saturated 850/s" against a real ~90/s,
// and every chosen rate above capacity), and the probe, where refusals
// dominate, is flagged: its 1 ms latencies are the 429s'.
func TestRun_AutoLevelsCountsServedRequests(t *testing.T) {
	const docs = 30
	srv := hostile.MustNew(t, hostile.Numbers429AboveN, hostile.Options{N: 2})
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	proto := hostileProtocol(t, dir, docs, "{mode: rate, arrival: constant, levels: auto, auto_levels: 3, repetitions: 1, warmup: 0}", srv.URL)
	if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	data, err := results.LoadRun(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	auto := data.Manifest.Variant("v").AutoLevels
	if auto == nil {
		t.Fatal("no auto_levels in the variant's manifest")
	}
	probe := resultstest.Where(resultstest.Requests(t, out), func(r *extractbench.Record) bool { return r.Level == auto.ProbeLevel })
	served := resultstest.Count(probe, func(r *extractbench.Record) bool {
		return r.HTTPStatus >= 200 && r.HTTPStatus <= 299 && r.Kind == extractbench.TransportOK
	})
	sent := len(probe)
	ps := resultstest.Where(resultstest.Passes(t, out), func(p *extractbench.Pass) bool {
		return p.Level == auto.ProbeLevel && p.Phase == extractbench.PhaseProbe
	})
	if len(ps) == 0 {
		t.Fatalf("no probe pass at %d/s", auto.ProbeLevel)
	}
	durNS := ps[0].DurationNS
	if sent != docs || served == 0 || served >= docs {
		t.Fatalf("probe at %d/s: %d of %d requests served: the engine did not refuse any (or served none), nothing to test", auto.ProbeLevel, served, sent)
	}
	secs := float64(durNS) / 1e9
	if limit := float64(served) / secs; auto.SaturatedRate > limit*(1+1e-9) {
		t.Errorf("saturated throughput %.1f/s > the %d requests served over the probe's %.3fs (%.1f/s): refusals counted as capacity (%d sent: %.1f/s)",
			auto.SaturatedRate, served, secs, limit, sent, float64(sent)/secs)
	}
	// The rates lie between the synchronous rate and what was served.
	if top, bound := slices.Max(auto.Levels), max(auto.SyncRate, float64(served)/secs); float64(top) > bound+0.5 {
		t.Errorf("highest chosen rate %d/s above both the synchronous rate %.1f/s and what the engine served in the probe (%.1f/s)", top, auto.SyncRate, float64(served)/secs)
	}
	if got := resultstest.Count(resultstest.Decisions(t, out), func(d *results.Decision) bool {
		return d.Kind == results.DecisionAutoLevels && resultstest.Like(d.Reason, fmt.Sprintf("%%%d of %d requests served%%", served, docs))
	}); got != 1 {
		t.Errorf("the auto_levels decision does not say how many of the probe's requests were served")
	}
	if got := resultstest.Count(ps, func(p *extractbench.Pass) bool {
		return p.Verdict == "not_usable" && resultstest.Like(p.VerdictReason, "%requests failed (error)%")
	}); got != 1 {
		reason := ps[0].Verdict + ": " + ps[0].VerdictReason
		t.Errorf("the probe, %d of %d requests refused, is not flagged as failure-dominated: %s", docs-served, docs, reason)
	}
}
