package family

import (
	"slices"

	"github.com/extractbench/extractbench"
)

// Telemetry is where a family's engine figures are sampled during a pass,
// and how they are read onto the canonical names (the root's Metric*).
// Exactly one of Prometheus and JSON is set when Path is.
type Telemetry struct {
	// Path is the endpoint sampled, from the engine's URL ("/metrics");
	// "" when the family has none.
	Path string
	// Prometheus reads Path as Prometheus text exposition.
	Prometheus *Prometheus
	// JSON reads Path's JSON answer into canonical figures.
	JSON func(body []byte) ([]Reading, error)
	// Missing says which pass figures the family never reports (NULL in
	// its passes, never 0), for the docs and the tests that read them.
	Missing string
}

// Prometheus is one dialect of Prometheus names for the canonical metrics.
type Prometheus struct {
	// Dialect labels the names read ("vllm-v1", "sglang"), as a pass's
	// telemetry says which it read.
	Dialect string
	// Names maps a canonical metric to the dialect's names for it,
	// preferred first: the first one a scrape carries is read, the others
	// ignored, so that a figure is sampled once per scrape whatever aliases
	// the engine prints.
	Names map[string][]string
	// Generation, when set, refines Dialect from what a scrape carries
	// (vLLM's V0 engine against V1).
	Generation func(s Series) string
}

// Series is what a Generation may ask of a scrape.
type Series interface {
	// Has reports whether the scrape carries a series of the name.
	Has(name string) bool
	// Labelled reports whether a series whose name starts with prefix
	// carries the label.
	Labelled(prefix, label string) bool
}

// Reading is one canonical figure read from a JSON telemetry answer.
type Reading struct {
	Metric string  // the canonical name
	Source string  // where in the answer it was read ("/api/ps models[].size_vram")
	Value  float64 // in the canonical unit
}

// AnyDialect are the names read whatever the dialect: the PyTorch peaks
// and graph captures our transformers engine prints next to vLLM's names
// (and the built-in engine simulates).
var AnyDialect = map[string][]string{
	extractbench.MetricTorchAlloc:   {"torch_cuda_max_memory_allocated_bytes"},
	extractbench.MetricTorchReserve: {"torch_cuda_max_memory_reserved_bytes"},
	extractbench.MetricCaptures:     {extractbench.MetricCaptures},
}

// prometheusAt is a family's telemetry at /metrics in dialect p.
func prometheusAt(p *Prometheus, missing string) Telemetry {
	return Telemetry{Path: "/metrics", Prometheus: p, Missing: missing}
}

// Dialects returns the registry's Prometheus dialects, each once, those of
// first (the family the engine is known to be, nil when unknown) first and
// then in All's order: a scrape is read in the first dialect it carries a
// name of.
func Dialects(first *Family) []*Prometheus {
	var out []*Prometheus
	add := func(f *Family) {
		if p := f.Telemetry.Prometheus; p != nil && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if first != nil {
		add(first)
	}
	for _, f := range All() {
		add(f)
	}
	return out
}
