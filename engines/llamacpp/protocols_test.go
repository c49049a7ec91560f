package llamacpp_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/pipeline/protocol"
)

// TestProtocols checks that every protocol in this directory is one
// extractbench accepts, that each variant starts serve.sh (the cached
// binary, never a build inside ready_timeout) on a port of its own URL, and
// that the GGUF it names is one gguf.sha256 pins, so every run serves bytes
// anyone can reproduce.
func TestProtocols(t *testing.T) {
	pinned := map[string]bool{}
	f, err := os.Open("gguf.sha256")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 || len(fields[0]) != 64 {
			t.Fatalf("gguf.sha256: line %q is not sha256sum's", sc.Text())
		}
		pinned[fields[1]] = true
	}

	files, err := filepath.Glob("protocol-*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no protocol files (%v)", err)
	}
	for _, file := range files {
		p, err := protocol.Load(file)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		for _, v := range p.Variants {
			args := strings.Fields(v.Engine.Start)
			if len(args) < 3 || args[0] != "engines/llamacpp/serve.sh" {
				t.Errorf("%s: variant %s starts %q, want engines/llamacpp/serve.sh TYPE PORT", file, v.Name, v.Engine.Start)
				continue
			}
			if gguf := "extract-llama-15m-" + args[1] + ".gguf"; !pinned[gguf] {
				t.Errorf("%s: variant %s serves %s, which gguf.sha256 does not pin", file, v.Name, gguf)
			}
			if !strings.HasSuffix(v.Engine.URL, ":"+args[2]) {
				t.Errorf("%s: variant %s listens on %s but its url is %s", file, v.Name, args[2], v.Engine.URL)
			}
			if v.Engine.Model != "extract-llama-15m" {
				t.Errorf("%s: variant %s asks for model %q; serve.sh's --alias is extract-llama-15m", file, v.Name, v.Engine.Model)
			}
		}
	}
}
