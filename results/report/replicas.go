package report

import (
	"fmt"
	"strings"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/eval"
)

// endpointCount is one replica's share of a series' measured requests
// (endpointsOf), with their E2E.
type endpointCount struct {
	Endpoint           string
	Requests, Accepted int
	E2E                eval.Distribution
}

// replicasLine is the selection sheet's line for a variant of several
// replicas (engine.urls): each endpoint and its share of the requests;
// "" for a variant of one engine.
func replicasLine(m *extractbench.Manifest, s *series) string {
	eps := m.Variant(s.Variant).Engine.Endpoints
	if len(eps) < 2 {
		return ""
	}
	counts := s.Endpoints
	total := 0
	for _, c := range counts {
		total += c.Requests
	}
	parts := make([]string, len(counts))
	for i, c := range counts {
		parts[i] = fmt.Sprintf("%s %d requests (%s)", c.Endpoint, c.Requests, fmtShare(float64(c.Requests)/float64(max(total, 1))))
	}
	return fmt.Sprintf("%d endpoints, each request to the least loaded (fewest in flight); the level is the total in flight: %s",
		len(eps), strings.Join(parts, "; "))
}

// replicasTable shows, for a variant of several replicas, each endpoint's
// requests over the series (every level and repetition), its share, its
// accepted share and its E2E, so that a slow or dead replica shows; and
// per level the fewest and most requests an endpoint got in a pass.
func replicasTable(prefix, unit string, m *extractbench.Manifest, s *series) (table, bool) {
	eps := m.Variant(s.Variant).Engine.Endpoints
	if len(eps) < 2 {
		return table{}, false
	}
	t := table{ID: prefix + "replicas", Title: "Replicas: requests per endpoint",
		Note: "Every measured request of the series (all levels and repetitions), by the endpoint the least-loaded dispatch sent it to. " +
			"A replica that stopped answering gets no request after it (events: replica_dead). Per " + unit + ": the fewest and most requests one endpoint got in a pass (passes.endpoint_requests_min/max).",
		Head: []string{"endpoint", "requests", "share", "accepted", "E2E p50", "E2E p95"},
		Code: []bool{true}}
	counts := s.Endpoints
	total := 0
	for _, c := range counts {
		total += c.Requests
	}
	for _, c := range counts {
		d := c.E2E
		p50, p95 := "–", "–"
		if d.N > 0 {
			p50, p95 = fmtNS(d.P50), fmtNS(d.P95)
		}
		t.Rows = append(t.Rows, []string{c.Endpoint, fmt.Sprint(c.Requests), fmtShare(float64(c.Requests) / float64(max(total, 1))),
			fmtShare(float64(c.Accepted) / float64(max(c.Requests, 1))), p50, p95})
	}
	var spread []string
	seen := map[int]bool{}
	for _, p := range s.Passes {
		if seen[p.Level] || p.EndpointRequestsMin == nil || p.EndpointRequestsMax == nil {
			continue
		}
		seen[p.Level] = true
		lo, hi := *p.EndpointRequestsMin, *p.EndpointRequestsMax
		for _, q := range s.Passes {
			if q.Level == p.Level && q.EndpointRequestsMin != nil && q.EndpointRequestsMax != nil {
				lo, hi = min(lo, *q.EndpointRequestsMin), max(hi, *q.EndpointRequestsMax)
			}
		}
		spread = append(spread, fmt.Sprintf("%s %s: %d–%d", unit, eval.LevelName(s.Mode, p.Level), lo, hi))
	}
	if len(spread) > 0 {
		t.Note += " " + strings.Join(spread, "; ") + "."
	}
	return t, true
}
