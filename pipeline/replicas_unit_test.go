package pipeline

import (
	"slices"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline/pipelinetest"
)

func TestPickReplica(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name     string
		inFlight []int
		usable   []bool
		start    int
		want     int
	}{
		{"fewest in flight", []int{3, 1, 2}, []bool{yes, yes, yes}, 0, 1},
		{"tie: the first from start", []int{1, 1, 1}, []bool{yes, yes, yes}, 1, 1},
		{"tie: wraps around", []int{0, 2, 0}, []bool{yes, yes, yes}, 2, 2},
		{"tie: wraps past the end", []int{0, 2, 1}, []bool{yes, yes, yes}, 1, 0},
		{"an unusable replica is never picked, however idle", []int{0, 5, 4}, []bool{no, yes, yes}, 0, 2},
		{"none usable", []int{0, 0}, []bool{no, no}, 0, -1},
		{"one replica", []int{7}, []bool{yes}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pickReplica(tt.inFlight, tt.usable, tt.start); got != tt.want {
				t.Errorf("pickReplica(%v, %v, %d) = %d, want %d", tt.inFlight, tt.usable, tt.start, got, tt.want)
			}
		})
	}
}

// TestReplicaSet_Acquire: equally loaded replicas take turns; the
// least-loaded one is picked; a dead one gets nothing; a suspect one only
// when every live one is.
func TestReplicaSet_Acquire(t *testing.T) {
	s := newReplicaSet([]*replica{{name: "a"}, {name: "b"}, {name: "c"}})
	var got []string
	for range 6 { // one at a time: every replica idle at each pick
		r := s.acquire(1)
		got = append(got, r.name)
		s.release(r, 1)
	}
	if want := []string{"a", "b", "c", "a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("one at a time: %v, want round robin %v", got, want)
	}
	a, b, c := s.acquire(1), s.acquire(1), s.acquire(1) // three in flight: one each
	if a.name != "a" || b.name != "b" || c.name != "c" {
		t.Fatalf("three requests in flight went to %s, %s, %s; want one on each replica", a.name, b.name, c.name)
	}
	s.release(b, 1)
	if r := s.acquire(2); r != b {
		t.Errorf("b finished and is the least loaded; the next went to %s", r.name)
	}
	if r := s.acquire(1); r != c { // a 1, b 2, c 1: the tie from after b
		t.Errorf("tie between a and c after b: got %s, want c", r.name)
	}

	s = newReplicaSet([]*replica{{name: "a"}, {name: "b"}})
	s.all[0].dead = true
	for range 3 {
		if r := s.acquire(1); r.name != "b" {
			t.Errorf("a dead replica got a request")
		}
	}
	s.all[1].suspect = true
	if r := s.acquire(1); r == nil || r.name != "b" {
		t.Errorf("the only live replica, under suspicion, is still used: got %v", r)
	}
	s.all[1].dead = true
	if r := s.acquire(1); r != nil {
		t.Errorf("every replica dead: got %s, want nil", r.name)
	}
	if !s.allDead() {
		t.Error("allDead() = false with every replica dead")
	}
}

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

// TestEngine_ReplicaNames: the names rows record for each kind of variant.
func TestEngine_ReplicaNames(t *testing.T) {
	tests := []struct {
		e    extractbench.Engine
		want []string
	}{
		{extractbench.Engine{URL: "builtin"}, nil},
		{extractbench.Engine{URL: "builtin", Replicas: 1}, nil},
		{extractbench.Engine{URL: "builtin", Replicas: 3}, []string{"builtin/1", "builtin/2", "builtin/3"}},
		{extractbench.Engine{URL: "http://a:1"}, nil},
		{extractbench.Engine{URLs: []string{"http://u:secret@a:1", "http://b:1"}}, []string{"http://a:1", "http://b:1"}},
	}
	for _, tt := range tests {
		if got := replicaNames(tt.e); !slices.Equal(got, tt.want) {
			t.Errorf("%+v: ReplicaNames() = %v, want %v", tt.e, got, tt.want)
		}
	}
}
