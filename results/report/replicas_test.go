package report

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuild_Replicas: a variant of two replicas shows them on its sheet
// (each endpoint and its share) and in a table of requests per endpoint with
// the per-level spread; the telemetry the charts draw is one figure per
// scrape, summed over the replicas (the fullest KV usage).
func TestBuild_Replicas(t *testing.T) {
	f := defaultFixture
	f.Levels, f.Reps = []int{1, 2, 4}, 1
	f.Replicas = []string{"http://10.0.0.1:8000", "http://10.0.0.2:8000"}
	dir := mustWriteFixture(t, f)
	p, err := build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sp := p.Series[0]
	var line string
	for _, kv := range sp.Sheet {
		if kv.K == "Replicas" {
			line = kv.V
		}
	}
	// Each pass: 40 documents on the first replica, 20 on the second.
	for _, want := range []string{"2 endpoints", "http://10.0.0.1:8000 120 requests (66.7%)", "http://10.0.0.2:8000 60 requests (33.3%)"} {
		if !strings.Contains(line, want) {
			t.Errorf("sheet line Replicas = %q, want it to contain %q", line, want)
		}
	}
	var tb *table
	for i := range sp.Tables {
		if strings.HasSuffix(sp.Tables[i].ID, "replicas") {
			tb = &sp.Tables[i]
		}
	}
	if tb == nil {
		t.Fatal("no replicas table")
	}
	if len(tb.Rows) != 2 || tb.Rows[0][0] != f.Replicas[0] || tb.Rows[0][1] != "120" || tb.Rows[1][1] != "60" {
		t.Errorf("replicas table rows = %q", tb.Rows)
	}
	if !strings.Contains(tb.Note, "concurrency 1: 20–40") || !strings.Contains(tb.Note, "concurrency 4: 20–40") {
		t.Errorf("replicas table note = %q, want the per-level spread", tb.Note)
	}
	md := readFile(t, filepath.Join(dir, MarkdownFile))
	if !strings.Contains(md, "Replicas: requests per endpoint") || !strings.Contains(md, "http://10.0.0.2:8000") {
		t.Error("report.md does not show the replicas")
	}

	d, err := load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	perInstant := map[int64]int{}
	for _, s := range d.Telemetry {
		if s.Metric == "vllm:num_requests_running" {
			perInstant[s.TNS]++
			if s.Endpoint != "" {
				t.Errorf("a folded sample keeps endpoint %q", s.Endpoint)
			}
		}
	}
	for at, n := range perInstant {
		if n != 1 {
			t.Fatalf("%d running samples at %d, want one, folded over the replicas", n, at)
		}
	}
	var most float64
	for _, s := range d.Telemetry {
		if s.Metric == "vllm:num_requests_running" && s.Level == 4 {
			most = max(most, s.Value)
		}
	}
	if most != 4 {
		t.Errorf("running at level 4 peaks at %v in the folded timeline, want 4 (2 + 2 over the replicas)", most)
	}
}

// TestBuild_OneEngineNoReplicas: a variant of one engine shows no replica
// line or table.
func TestBuild_OneEngineNoReplicas(t *testing.T) {
	dir := t.TempDir()
	defaultFixture.write(t, dir)
	p, err := build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range p.Series[0].Sheet {
		if kv.K == "Replicas" {
			t.Errorf("one engine has a Replicas line: %q", kv.V)
		}
	}
	for _, tb := range p.Series[0].Tables {
		if strings.HasSuffix(tb.ID, "replicas") {
			t.Error("one engine has a replicas table")
		}
	}
}
