package telemetry

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
)

// panicTransport panics on every request, as a bug in a scrape would.
type panicTransport struct{}

func (panicTransport) RoundTrip(*http.Request) (*http.Response, error) { panic("scraper bug") }

// TestSampler_PanickingScrapeIsAnError: a panic in a replica's scrape
// goroutine (owned by a conc.WaitGroup, caught per scrape) is counted as a
// scrape error that names it, instead of killing the process: with a bare
// sync.WaitGroup this test binary died.
func TestSampler_PanickingScrapeIsAnError(t *testing.T) {
	for _, n := range []int{1, 2} { // one endpoint is scraped inline, several in goroutines
		eps := make([]MetricsEndpoint, n)
		for i := range eps {
			eps[i] = MetricsEndpoint{Name: "r", URL: "http://127.0.0.1:1/metrics"}
		}
		s := StartSampler(context.Background(), extractbench.NewClock(), SamplerConfig{Endpoints: eps, Interval: time.Hour},
			&http.Client{Transport: panicTransport{}})
		tel := s.Stop()
		if tel.ScrapeErrors < n || !strings.Contains(tel.LastScrapeError, "panic: scraper bug") {
			t.Errorf("%d endpoints: scrape errors %d, last %q; want the panic counted as a scrape error", n, tel.ScrapeErrors, tel.LastScrapeError)
		}
	}
}
