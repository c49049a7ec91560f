package transformers_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/pipeline/protocol"
)

// TestProtocols checks that every protocol in this directory is one
// extractbench accepts, and that those serving the trained model start
// server.py on the model directory the repository holds.
func TestProtocols(t *testing.T) {
	files, err := filepath.Glob("protocol-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no protocol files (%v)", err)
	}
	for _, f := range files {
		p, err := protocol.Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, v := range p.Variants {
			if v.Engine.Model == "extract-llama-15m" && !strings.Contains(v.Engine.Start, "engines/transformers/model/extract-llama-15m") {
				t.Errorf("%s: variant %s serves extract-llama-15m but starts %q", f, v.Name, v.Engine.Start)
			}
		}
	}
}
