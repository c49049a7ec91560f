package llamacpp_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/pipeline/protocol"
)

// TestCPUReference_Protocol runs cpu-reference.sh with DRY=1 (the protocol
// written, every command printed, nothing run) and checks the protocol it
// would run: one extractbench accepts, the whole ladder with f16 first
// (compare's reference), each variant on its own port through serve.sh
// with 4 slots, levels 1, 2 and 4, the model's own tokenizer.json (so the
// drift is counted against it), and CPU_REF_DOCS's slice of the corpus.
func TestCPUReference_Protocol(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	out := t.TempDir()
	model, err := filepath.Abs(committedModel)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "cpu-reference.sh", model, out)
	cmd.Env = append(os.Environ(), "DRY=1", "EB=/bin/true", "CPU_REF_DOCS=5")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cpu-reference.sh DRY=1: %v\n%s", err, stderr.String())
	}
	p, err := protocol.Load(filepath.Join(out, "protocol.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"f16", "q8_0", "q6_k", "q4_k_m", "q4_0"}
	if len(p.Variants) != len(want) {
		t.Fatalf("%d variants, want %v", len(p.Variants), want)
	}
	ports := map[string]bool{}
	for i, v := range p.Variants {
		env, cmdline, _ := strings.Cut(v.Engine.Start, " engines/llamacpp/serve.sh ")
		args := strings.Fields(cmdline)
		if v.Name != want[i] || len(args) < 2 || args[0] != want[i] || !strings.HasSuffix(v.Engine.URL, ":"+args[1]) || ports[args[1]] {
			t.Errorf("variant %d: %s starts %q on %s, want %s through serve.sh on a port of its own", i, v.Name, v.Engine.Start, v.Engine.URL, want[i])
			continue
		}
		ports[args[1]] = true
		// A resume must serve the same files: the start line names them.
		for _, e := range []string{"EXTRACT_MODEL=" + model, "GGUF_DIR=" + out + "/gguf", "GGUF_SUMS=" + out + "/gguf.sha256", "LLAMACPP_PARALLEL=4", "LLAMACPP_BIN="} {
			if !strings.Contains(" "+env+" ", " "+e) {
				t.Errorf("variant %s: start %q does not set %s", v.Name, v.Engine.Start, e)
			}
		}
		if v.Engine.Tokenizer != filepath.Join(model, "tokenizer.json") {
			t.Errorf("variant %s: tokenizer %q, want the model's tokenizer.json", v.Name, v.Engine.Tokenizer)
		}
	}
	if got := p.Sweep.Levels; len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 4 {
		t.Errorf("levels %v, want 1, 2, 4", got)
	}
	docs, err := os.ReadFile(filepath.Join(out, "corpus", "documents.jsonl"))
	if err != nil || bytes.Count(docs, []byte("\n")) != 5 || !strings.HasSuffix(p.Corpus, filepath.Join("corpus", "documents.jsonl")) {
		t.Errorf("corpus %s: %d documents (%v), want the first 5 of corpus/default", p.Corpus, bytes.Count(docs, []byte("\n")), err)
	}
	for _, step := range []string{"gguf.sh q4_k_m", "run -quiet -protocol", "compare -json " + out + "/run:f16 " + out + "/run:q4_0", "memory -model", "cpu_reference_table.py"} {
		if !strings.Contains(stderr.String(), step) {
			t.Errorf("DRY=1 did not print %q:\n%s", step, stderr.String())
		}
	}
}
