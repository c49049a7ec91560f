package protocol

import (
	"strings"
	"testing"
)

// TestParseProtocol_Replicas: urls is a list of http(s) replicas; url and
// urls together, neither, a replica twice, a start: or a metrics_url beside
// urls are refused with the file, line and field.
func TestParseProtocol_Replicas(t *testing.T) {
	const head = "variants:\n  - name: r\n"
	p, err := Parse([]byte(head+"    engine: {urls: [\"http://127.0.0.1:8001\", \"http://127.0.0.1:8002/\"], model: m}\n"), "p.yaml", ".")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Variants[0].Engine.Endpoints(); len(got) != 2 || got[1] != "http://127.0.0.1:8002/" {
		t.Errorf("Endpoints() = %v", got)
	}
	if !p.Variants[0].Engine.IsLocal() || p.Variants[0].Engine.IsBuiltin() {
		t.Errorf("loopback replicas: IsLocal %v IsBuiltin %v, want true, false", p.Variants[0].Engine.IsLocal(), p.Variants[0].Engine.IsBuiltin())
	}
	if strings.Contains(string(p.Canonical()), `"url"`) {
		t.Errorf("canonical protocol names url for a variant of replicas: %s", p.Canonical())
	}
	tests := []struct {
		engine string
		want   string
	}{
		{`{url: "http://127.0.0.1:8000", urls: ["http://127.0.0.1:8001"], model: m}`, "p.yaml:3: variants.0.engine.urls: url and urls are both set"},
		{`{model: m}`, "p.yaml:3: variants.0.engine: neither url nor urls is set"},
		{`{urls: ["http://a:1", builtin], model: m}`, `p.yaml:3: variants.0.engine.urls.1: "builtin" is not an http(s) URL`},
		{`{urls: ["http://a:1", "http://a:1/"], model: m}`, `p.yaml:3: variants.0.engine.urls.1: "http://a:1/" is listed twice (urls.0)`},
		{`{urls: ["http://a:1"], model: m, start: "vllm serve m"}`, "p.yaml:3: variants.0.engine.start: start: runs one engine"},
		{`{urls: ["http://a:1"], model: m, metrics_url: "http://a:1/metrics"}`, "p.yaml:3: variants.0.engine.metrics_url: metrics_url names one endpoint"},
		{`{urls: [], model: m}`, "p.yaml:3: variants.0.engine.urls"},
		{`{url: "http://a:1", replicas: 2, model: m}`, "p.yaml:3: variants.0.engine.replicas: replicas: N starts N built-in engines (url: builtin)"},
		{`{urls: ["http://a:1"], replicas: 2, model: m}`, "p.yaml:3: variants.0.engine.replicas: replicas: N starts N built-in engines (url: builtin); urls already lists"},
		{`{url: builtin, replicas: 0, model: sim-8b}`, "p.yaml:3: variants.0.engine.replicas"},
	}
	for _, tt := range tests {
		t.Run(tt.engine, func(t *testing.T) {
			_, err := Parse([]byte(head+"    engine: "+tt.engine+"\n"), "p.yaml", ".")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestParseProtocol_OneURLUnchanged: a variant of one engine keeps its
// canonical form, so the fingerprints of runs before replicas hold.
func TestParseProtocol_OneURLUnchanged(t *testing.T) {
	p, err := Parse([]byte(validProtocol), "p.yaml", ".")
	if err != nil {
		t.Fatal(err)
	}
	if c := string(p.Canonical()); !strings.Contains(c, `"engine":{"url":"builtin","model":"sim-8b"`) || strings.Contains(c, "urls") {
		t.Errorf("canonical engine changed: %s", c)
	}
}
