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

	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results"
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
	const docs = 4
	for _, tt := range []struct {
		mode  hostile.Mode
		nulls []string // pass columns that must be NULL
	}{
		{hostile.NumbersUsageNegative, nil},
		{hostile.NumbersUsageHuge, nil},
		{hostile.NumbersMetricsHuge, []string{"observed_max_running", "observed_max_waiting", "peak_kv_usage", "preemptions", "peak_torch_allocated_bytes", "peak_torch_reserved_bytes", "engine_queue_mean_ns"}},
		{hostile.NumbersMetricsNegative, []string{"observed_max_running", "observed_max_waiting", "peak_kv_usage", "preemptions", "peak_torch_allocated_bytes", "peak_torch_reserved_bytes", "engine_queue_mean_ns"}},
		{hostile.NumbersMetricsNaN, []string{"observed_max_running", "observed_max_waiting", "peak_kv_usage", "preemptions", "peak_torch_allocated_bytes", "peak_torch_reserved_bytes", "engine_queue_mean_ns"}},
	} {
		t.Run(string(tt.mode), func(t *testing.T) {
			srv := hostile.MustNew(t, tt.mode, hostile.Options{})
			dir := t.TempDir()
			out := filepath.Join(dir, "out")
			var log bytes.Buffer
			proto := hostileProtocol(t, dir, docs, "{mode: concurrency, levels: [1], repetitions: 1, warmup: 0}", srv.URL)
			if _, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true, Progress: &log}); err != nil {
				t.Fatal(err)
			}
			db := openDB(t, out)
			if got := queryInt(t, db, "SELECT count(*) FROM passes"); got != 1 {
				t.Fatalf("%d passes, want 1", got)
			}
			// Tokens: the engine's usage refused, each request counts as
			// without one: the client's count, prompt tokens unknown.
			usage := strings.HasPrefix(string(tt.mode), "numbers-usage")
			wantShare := 1
			if usage {
				wantShare = 0
			}
			if got := queryInt(t, db, "SELECT count(*) FROM passes WHERE output_tokens BETWEEN 0 AND ? AND prompt_tokens BETWEEN 0 AND ? AND total_tokens_per_s >= 0 AND usage_reported_share = ?", docs*100, docs*100, wantShare); got != 1 {
				var row string
				_ = db.QueryRow("SELECT output_tokens || ' ' || prompt_tokens || ' ' || ifnull(total_tokens_per_s, 'NULL') || ' ' || usage_reported_share FROM passes").Scan(&row)
				t.Errorf("pass tokens (output, prompt, total/s, usage share) = %s, want sane counts and usage share %d", row, wantShare)
			}
			if usage {
				if got := queryInt(t, db, "SELECT count(*) FROM requests WHERE prompt_tokens IS NULL AND usage_reported = 0 AND completion_tokens = client_completion_chunks"); got != docs {
					t.Errorf("%d of %d requests have their usage refused (prompt NULL, the client's count)", got, docs)
				}
			}
			for _, col := range tt.nulls {
				if got := queryInt(t, db, "SELECT count(*) FROM passes WHERE "+col+" IS NULL"); got != 1 {
					var v string
					_ = db.QueryRow("SELECT " + col + " FROM passes").Scan(&v)
					t.Errorf("%s = %s, want NULL", col, v)
				}
			}
			if got := queryInt(t, db, "SELECT count(*) FROM events WHERE kind = 'engine_numbers_refused' AND detail LIKE 'pass at level 1, repetition 1: %'"); got != 1 {
				t.Errorf("%d engine_numbers_refused events for the pass, want 1; log:\n%s", got, log.String())
			}
			if !strings.Contains(log.String(), "engine numbers refused") {
				t.Errorf("stderr does not warn of the refused numbers:\n%s", log.String())
			}
		})
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
	db := openDB(t, out)
	var served, sent, durNS int
	if err := db.QueryRow(`SELECT
		(SELECT count(*) FROM requests WHERE level = ? AND http_status BETWEEN 200 AND 299 AND transport_kind IS NULL),
		(SELECT count(*) FROM requests WHERE level = ?),
		(SELECT duration_ns FROM passes WHERE level = ? AND phase = 'probe')`, auto.ProbeLevel, auto.ProbeLevel, auto.ProbeLevel).Scan(&served, &sent, &durNS); err != nil {
		t.Fatal(err)
	}
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
	if got := queryInt(t, db, "SELECT count(*) FROM decisions WHERE kind = 'auto_levels' AND reason LIKE ?", fmt.Sprintf("%%%d of %d requests served%%", served, docs)); got != 1 {
		t.Errorf("the auto_levels decision does not say how many of the probe's requests were served")
	}
	if got := queryInt(t, db, "SELECT count(*) FROM passes WHERE phase = 'probe' AND verdict = 'not_usable' AND verdict_reason LIKE '%requests failed (error)%'"); got != 1 {
		var reason string
		_ = db.QueryRow("SELECT verdict || ': ' || verdict_reason FROM passes WHERE phase = 'probe'").Scan(&reason)
		t.Errorf("the probe, %d of %d requests refused, is not flagged as failure-dominated: %s", docs-served, docs, reason)
	}
}
