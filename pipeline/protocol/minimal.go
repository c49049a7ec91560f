package protocol

import (
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// A minimal protocol names only its variants; every top-level key it
// leaves out is taken from the embedded default protocol (MinimalDefaults),
// so that
//
//	variants:
//	  - {name: mine, engine: {url: "http://127.0.0.1:8000", model: my-model}}
//
// measures the default corpus with the default prompt, generation and
// sweep. A key that is written is kept whole: a protocol that gives
// generation: {max_tokens: 256} gets no temperature from the default.
// `extractbench print-protocol FILE` shows the protocol with every default
// filled in.

// DefaultMinAccepted is the acceptance threshold of a protocol that writes
// no acceptance: the default protocol's, without its latency objective,
// which is in the built-in engine's simulated time.
const DefaultMinAccepted = 0.95

// MinimalDefaults are the top-level keys a protocol may leave out, with the
// values it then gets (name aside: the file's base name). Each call returns
// a fresh copy.
func MinimalDefaults() map[string]any {
	var m map[string]any
	if err := yaml.Unmarshal(DefaultYAML, &m); err != nil {
		panic("embedded default protocol: " + err.Error()) // TestDefaultProtocol parses it
	}
	m = normaliseYAML(m).(map[string]any)
	delete(m, "name")
	delete(m, "description")
	delete(m, "variants")
	m["acceptance"] = map[string]any{"min_accepted": DefaultMinAccepted}
	return m
}

var nameUnsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// fillMinimal adds to a decoded protocol the top-level keys it leaves out.
func fillMinimal(generic any, source string) {
	m, ok := generic.(map[string]any)
	if !ok {
		return // the schema reports it
	}
	for k, v := range MinimalDefaults() {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	if _, ok := m["name"]; !ok {
		name := strings.TrimSuffix(filepath.Base(source), filepath.Ext(source))
		name = strings.Trim(nameUnsafe.ReplaceAllString(name, "-"), "-")
		if name == "" || strings.HasPrefix(source, "(") {
			name = "protocol"
		}
		m["name"] = name
	}
}
