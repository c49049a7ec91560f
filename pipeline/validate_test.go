package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/pipeline"
)

// TestRun_ValidatesEverythingFirst: every problem a run can know before its
// first request is reported at once, as one ValidationError (exit 2), and
// nothing is started, sent or written.
func TestRun_ValidatesEverythingFirst(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("EXTRACTBENCH_TEST_UNSET_KEY", "")
	p := fmt.Sprintf(`name: many
corpus: %s
output_schema: %s
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
variants:
  - name: good
    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0}}
  - name: nomodel
    engine: {url: builtin, model: sim-nope}
  - name: nokey
    engine: {url: "http://127.0.0.1:1", model: m, api_key_env: EXTRACTBENCH_TEST_UNSET_KEY}
  - name: noprog
    engine: {url: "http://127.0.0.1:1", model: m, start: "CUDA_VISIBLE_DEVICES=0 extractbench-no-such-engine --port 1"}
`, filepath.Join(dir, "nowhere"), filepath.Join(dir, "no-schema.json"))
	proto := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	_, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true})
	var ve *pipeline.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v (%T), want a ValidationError", err, err)
	}
	for _, want := range []string{"p.yaml:2: corpus: " + filepath.Join(dir, "nowhere"), "p.yaml:3: output_schema: ",
		"p.yaml:12: variants.1.engine.model: variant nomodel: ", "sim-nope",
		"p.yaml:14: variants.2.engine.api_key_env: variant nokey: EXTRACTBENCH_TEST_UNSET_KEY is not set",
		"p.yaml:14: variants.2.engine.url: variant nokey: http://127.0.0.1:1 does not answer",
		"p.yaml:16: variants.3.engine.start: variant noprog: runs extractbench-no-such-engine"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if got, want := len(ve.Problems), 6; got != want {
		t.Errorf("%d problems, want %d:\n%v", got, want, err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("results directory %s exists after a refused run (%v)", out, err)
	}
}

// TestRun_OutDirIsAFile: a -out naming a file is a validation problem.
func TestRun_OutDirIsAFile(t *testing.T) {
	dir := t.TempDir()
	p := fmt.Sprintf(`name: f
corpus: %s
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64}
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
variants:
  - name: good
    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0}}
`, writeSmallCorpus(t, dir, 2))
	proto := filepath.Join(dir, "p.yaml")
	out := filepath.Join(dir, "file")
	for _, f := range []string{proto, out} {
		if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: out, Quiet: true})
	var ve *pipeline.ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "a file of that name exists") {
		t.Fatalf("err = %v, want a ValidationError about -out", err)
	}
}

func TestCommandProgram(t *testing.T) {
	for _, tt := range []struct{ line, want string }{
		{"vllm serve m --port 8000", "vllm"},
		{"CUDA_VISIBLE_DEVICES=0,1 HF_HOME=/x python3 -m sglang.launch_server", "python3"},
		{"/opt/bin/llama-server -m x.gguf", "/opt/bin/llama-server"},
		{"cd /srv && ./serve.sh", ""},
		{"docker run -d --name x \"$IMAGE\"", "docker"},
		{"$HOME/bin/engine", ""},
		{"", ""},
	} {
		if got := pipeline.CommandProgram(tt.line); got != tt.want {
			t.Errorf("CommandProgram(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestRun_CorpusDirWithoutDocuments: a corpus directory without
// documents.jsonl is reported at the protocol's corpus line, saying what a
// corpus directory holds.
func TestRun_CorpusDirWithoutDocuments(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "corpus")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	p := `name: nodocs
corpus: corpus
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64}
acceptance: {min_accepted: 0.5}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
variants:
  - name: good
    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0}}
`
	proto := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(proto, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: proto, OutDir: filepath.Join(dir, "out"), Quiet: true})
	var ve *pipeline.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v (%T), want a ValidationError", err, err)
	}
	if want := proto + ":2: corpus: corpus directory " + empty + " has no documents.jsonl"; !strings.Contains(err.Error(), want) {
		t.Errorf("error does not say %q:\n%v", want, err)
	}
}
