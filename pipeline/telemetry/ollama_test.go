package telemetry

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/family"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

// TestSampler_OllamaJSON: an Ollama's telemetry is its /api/ps JSON, read
// by its family (not as Prometheus text): what its models hold on the
// device and in all, sampled once a scrape; an impossible size is refused
// as a Prometheus value is; the figures it does not report stay nil.
func TestSampler_OllamaJSON(t *testing.T) {
	ps, err := os.ReadFile(filepath.Join("..", "client", "testdata", "engines", "ollama-api-ps.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := sequenceServer(t, string(ps), `{"models":[{"name":"m","size":-1,"size_vram":0}]}`, string(ps))
	s := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{Family: family.Ollama, MetricsURL: srv.URL, Interval: time.Hour}, srv.Client())
	s.scrapeOnce(pipelinetest.Context(t))
	tel := s.Stop()
	if tel.Scrapes != 3 || tel.ScrapeErrors != 0 || tel.Family != "ollama" {
		t.Fatalf("Scrapes, errors, Family = %d, %d (%s), %q; want 3, 0, ollama", tel.Scrapes, tel.ScrapeErrors, tel.LastScrapeError, tel.Family)
	}
	if got := countSamples(tel, extractbench.MetricEngineVRAM); got != 3 {
		t.Errorf("%d samples of %s, want one a scrape", got, extractbench.MetricEngineVRAM)
	}
	if got := countSamples(tel, extractbench.MetricEngineMemory); got != 2 {
		t.Errorf("%d samples of %s, want the two possible ones", got, extractbench.MetricEngineMemory)
	}
	if r := tel.Refused[extractbench.MetricEngineMemory]; r.Scrapes != 1 || r.First != -1 {
		t.Errorf("refused %+v, want the negative size once", tel.Refused)
	}
	if tel.Sources[extractbench.MetricEngineVRAM] != "/api/ps models[].size_vram" {
		t.Errorf("sources %v", tel.Sources)
	}
	if tel.MaxRunning != nil || tel.PeakKVUsage != nil || tel.QueueTimeCountDelta != nil {
		t.Errorf("figures Ollama does not report: running %v, KV %v, queue %v; want nil", deref(tel.MaxRunning), deref(tel.PeakKVUsage), deref(tel.QueueTimeCountDelta))
	}
	// The same answer read as Prometheus text (the family unknown) is an
	// error, not figures.
	srv2, _ := sequenceServer(t, string(ps))
	if tel := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{MetricsURL: srv2.URL, Interval: time.Hour}, srv2.Client()).Stop(); tel.ScrapeErrors == 0 {
		t.Errorf("/api/ps read as Prometheus text: %d errors, want every scrape to fail", tel.ScrapeErrors)
	}
}
