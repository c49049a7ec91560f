package telemetry

import (
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

// TestSampler_Replicas: two replicas scraped at each tick: samples carry
// their endpoint, running and waiting add up per scrape (the peak of the
// sum, not the sum of the peaks), the KV fraction takes the fullest,
// counters and histograms add each replica's growth.
func TestSampler_Replicas(t *testing.T) {
	a, _ := sequenceServer(t,
		vllmMetrics(0, 0, 0.10, 1, 1, 10),
		vllmMetrics(6, 2, 0.50, 2, 2, 15), // a's peak ...
		vllmMetrics(1, 0, 0.20, 3, 3, 20),
	)
	b, _ := sequenceServer(t,
		vllmMetrics(0, 0, 0.05, 0, 0, 0),
		vllmMetrics(1, 0, 0.30, 0, 1, 2),
		vllmMetrics(5, 4, 0.90, 1, 4, 8), // ... and b's come at different scrapes
	)
	eps := []MetricsEndpoint{{Name: "http://a", URL: a.URL}, {Name: "http://b", URL: b.URL}}
	s := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{Endpoints: eps, Interval: time.Hour}, nil)
	s.scrapeOnce(pipelinetest.Context(t))
	tel := s.Stop()
	checks := []struct {
		name string
		got  *float64
		want float64
	}{
		{"MaxRunning", tel.MaxRunning, 7},                    // scrape 2: 6 + 1 (scrape 3: 1 + 5 = 6); the sum of peaks would be 11
		{"MaxWaiting", tel.MaxWaiting, 4},                    // scrape 3: 0 + 4 (scrape 2: 2 + 0)
		{"PeakKVUsage", tel.PeakKVUsage, 0.9},                // the fullest replica
		{"PreemptionsDelta", tel.PreemptionsDelta, 3},        // 2 + 1
		{"QueueTimeCountDelta", tel.QueueTimeCountDelta, 18}, // 10 + 8
		{"QueueTimeSumDelta", tel.QueueTimeSumDelta, 6},      // 2 + 4
	}
	for _, c := range checks {
		if !eqPtr(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, deref(c.got), c.want)
		}
	}
	if tel.Scrapes != 6 {
		t.Errorf("Scrapes = %d, want 6 (3 ticks × 2 endpoints)", tel.Scrapes)
	}
	per := map[string]int{}
	instants := map[int64]map[string]bool{}
	for _, smp := range tel.Samples {
		if smp.Metric != extractbench.MetricRunning {
			continue
		}
		per[smp.Endpoint]++
		if instants[smp.TNS] == nil {
			instants[smp.TNS] = map[string]bool{}
		}
		instants[smp.TNS][smp.Endpoint] = true
	}
	if per["http://a"] != 3 || per["http://b"] != 3 || len(per) != 2 {
		t.Errorf("running samples per endpoint = %v, want 3 for each of http://a and http://b", per)
	}
	for at, eps := range instants {
		if len(eps) != 2 {
			t.Errorf("scrape at %d has samples of %d endpoints, want both at one instant", at, len(eps))
		}
	}
}

// TestSampler_ReplicaDown: a replica whose /metrics fails is counted as a
// scrape error; the other's figures still come.
func TestSampler_ReplicaDown(t *testing.T) {
	a, _ := sequenceServer(t, vllmMetrics(3, 1, 0.4, 0, 0, 0))
	eps := []MetricsEndpoint{{Name: "a", URL: a.URL}, {Name: "gone", URL: "http://127.0.0.1:1/metrics"}}
	tel := StartSampler(pipelinetest.Context(t), extractbench.NewClock(), SamplerConfig{Endpoints: eps, Interval: time.Hour}, nil).Stop()
	if !eqPtr(tel.MaxRunning, 3) || tel.ScrapeErrors != 2 || tel.Scrapes != 2 {
		t.Errorf("MaxRunning %v, Scrapes %d, ScrapeErrors %d; want 3, 2, 2", deref(tel.MaxRunning), tel.Scrapes, tel.ScrapeErrors)
	}
}
