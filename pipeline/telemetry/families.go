package telemetry

import (
	"strings"

	"github.com/extractbench/extractbench/pipeline/family"
	dto "github.com/prometheus/client_model/go"
)

// The engine families' names for the canonical metrics are theirs
// (pipeline/family: each family's Telemetry); telemetry stores every figure
// under the canonical names (extractbench.MetricRunning, ...), so one column
// means one thing whatever the engine.

// detectDialect returns the first of the registry's Prometheus dialects
// (those of known, the engine's family, first) that fams carries a mapped
// name of, with its label ("vllm-v0" for an old vLLM); nil when none.
func detectDialect(fams map[string]*dto.MetricFamily, known *family.Family) (*family.Prometheus, string) {
	for _, p := range family.Dialects(known) {
		for _, names := range p.Names {
			for _, name := range names {
				if !present(fams[name]) {
					continue
				}
				if p.Generation != nil {
					return p, p.Generation(series(fams))
				}
				return p, p.Dialect
			}
		}
	}
	return nil, ""
}

// series is a parsed scrape as a dialect's Generation asks of it.
type series map[string]*dto.MetricFamily

func (s series) Has(name string) bool { return present(s[name]) }

func (s series) Labelled(prefix, label string) bool {
	for name, mf := range s {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		for _, m := range mf.GetMetric() {
			if _, ok := labelValue(m, label); ok {
				return true
			}
		}
	}
	return false
}

func present(mf *dto.MetricFamily) bool { return mf != nil && len(mf.GetMetric()) > 0 }

// firstPresent returns the first of names that fams carries.
func firstPresent(fams map[string]*dto.MetricFamily, names []string) (string, *dto.MetricFamily) {
	for _, name := range names {
		if mf := fams[name]; present(mf) {
			return name, mf
		}
	}
	return "", nil
}
