package llamacpp_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench/pipeline/protocol"
)

// retrainTokenizer is the retrain's tokenizer (bpe_train.py --kind llamacpp):
// the one every engine must reproduce.
const retrainTokenizer = "../transformers/retrain/tokenizer.json"

// llamaTools finds what the live tokenizer tests need, or says why not: the
// CPU build of build.sh (LLAMACPP_BIN, or the cache's bin/), its source
// checkout's gguf-py, and a Python with numpy and regex (PYTHON, default
// /usr/bin/python3: Debian's).
func llamaTools(t *testing.T) (bin, ggufPy, python string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no llama-server runs")
	}
	cache := os.Getenv("LLAMACPP_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "extractbench", "llamacpp")
	}
	root := filepath.Join(cache, "3.22.1")
	bin = os.Getenv("LLAMACPP_BIN")
	if bin == "" {
		bin = filepath.Join(root, "bin")
	}
	if _, err := os.Stat(filepath.Join(bin, "llama-server")); err != nil {
		t.Skipf("no llama-server in %s (engines/llamacpp/build.sh builds it): %v", bin, err)
	}
	ggufPy = filepath.Join(root, "src", "gguf-py")
	if _, err := os.Stat(ggufPy); err != nil {
		t.Skipf("no gguf-py in %s (build.sh --source): %v", ggufPy, err)
	}
	python = os.Getenv("PYTHON")
	if python == "" {
		python = "/usr/bin/python3"
	}
	if out, err := exec.Command(python, "-c", "import numpy, regex").CombinedOutput(); err != nil {
		t.Skipf("%s lacks numpy or regex (apt-get install python3-numpy python3-regex): %v %s", python, err, out)
	}
	return bin, ggufPy, python
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// serveGGUF starts llama-server on a free loopback port and returns its URL;
// the server is stopped when the test ends.
func serveGGUF(t *testing.T, bin, gguf string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(filepath.Join(bin, "llama-server"), "-m", gguf, "--host", "127.0.0.1", "--port", fmt.Sprint(port),
		"-c", "8192", "--parallel", "1", "-t", "1")
	logf, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for range 600 { // 60 s at most
		if r, err := http.Get(url + "/health"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return url
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("llama-server on %s not healthy within 60 s (log %s)", gguf, logf.Name())
	return ""
}

type tokenSummary struct {
	Documents         int `json:"documents"`
	LlamaIdentical    int `json:"llama_identical"`
	TemplateIdentical int `json:"template_identical"`
}

// compareTokens converts modelDir to a bf16 GGUF, serves it and returns
// compare_tokens.py's summary over corpus/default's 300 prompts.
func compareTokens(t *testing.T, modelDir string) tokenSummary {
	t.Helper()
	bin, ggufPy, python := llamaTools(t)
	gguf := filepath.Join(t.TempDir(), "model-bf16.gguf")
	run(t, python, "convert.py", "--gguf-py", ggufPy, "--model", modelDir, "--out", gguf)
	url := serveGGUF(t, bin, gguf)
	out := filepath.Join(t.TempDir(), "tokens.json")
	cmd := exec.Command(python, "compare_tokens.py", "--url", url, "--model", modelDir,
		"--corpus", "../../corpus/default/documents.jsonl", "--out", out)
	msg, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("compare_tokens.py: %v\n%s", err, msg)
	}
	t.Logf("compare_tokens.py: %s", msg)
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("compare_tokens.py wrote nothing (%v):\n%s", err, msg)
	}
	var res struct {
		Summaries []tokenSummary `json:"summaries"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Summaries) != 1 {
		t.Fatalf("%s: %v (%d summaries)", out, err, len(res.Summaries))
	}
	return res.Summaries[0]
}

// TestRetrainTokenizer_LlamaCppIdentical is issue 24's zero-drift proof on
// the CPU: a model with the retrain's tokenizer (random weights of the
// retrain's shape: ids do not depend on them), converted to GGUF and served
// by llama.cpp, tokenises all 300 corpus/default prompts, through the GGUF's
// own chat template, exactly as the model's tokenizer.json does through its
// own (cpu_reference.py's BPE; compare_tokens.py --hf adds tokenizers
// itself, testdata/retrain/tokens.md). The committed model's tokenizer gives
// 292 of 300 here (TestOldTokenizer_LlamaCppDrifts).
func TestRetrainTokenizer_LlamaCppIdentical(t *testing.T) {
	_, _, python := llamaTools(t)
	model := filepath.Join(t.TempDir(), "extract-llama-15m")
	run(t, python, "random_model.py", "--shape", "h512", "--tokenizer", retrainTokenizer, "--out", model)
	s := compareTokens(t, model)
	if s.Documents != 300 || s.LlamaIdentical != s.Documents || s.TemplateIdentical != s.Documents {
		t.Fatalf("retrain tokenizer through llama.cpp: %d of %d prompts with identical ids, %d with identical template text; want all",
			s.LlamaIdentical, s.Documents, s.TemplateIdentical)
	}
}

// TestOldTokenizer_LlamaCppDrifts keeps the comparison honest: the first
// committed model's tokenizer (h384, engines/transformers/model-h384: a
// normalizer llama.cpp cannot apply, `\p{Nd}` where llama.cpp cuts `\p{N}`)
// must show its known drift, so a comparison that could not see a
// difference would fail here.
func TestOldTokenizer_LlamaCppDrifts(t *testing.T) {
	_, _, python := llamaTools(t)
	model := filepath.Join(t.TempDir(), "extract-llama-15m")
	run(t, python, "random_model.py", "--shape", "h384", "--tokenizer", "../transformers/model-h384/tokenizer.json", "--out", model)
	s := compareTokens(t, model)
	if s.Documents != 300 || s.LlamaIdentical >= s.Documents {
		t.Fatalf("old tokenizer through llama.cpp: %d of %d prompts identical; want the known drift (292)", s.LlamaIdentical, s.Documents)
	}
	t.Logf("old tokenizer: %d of %d prompts identical through llama.cpp", s.LlamaIdentical, s.Documents)
}

// TestCommittedModel_LlamaCppIdentical: the committed weights' own
// directory (its tokenizer.json and chat template, as train.py saved them)
// through convert.py and llama-server, all 300 prompts identical.
func TestCommittedModel_LlamaCppIdentical(t *testing.T) {
	s := compareTokens(t, "../transformers/model/extract-llama-15m")
	if s.Documents != 300 || s.LlamaIdentical != s.Documents || s.TemplateIdentical != s.Documents {
		t.Fatalf("committed model through llama.cpp: %d of %d prompts with identical ids, %d with identical template text; want all",
			s.LlamaIdentical, s.Documents, s.TemplateIdentical)
	}
}

// TestRetrainProtocol checks the retrain's H200 protocol (device-retrain.sh):
// one that extractbench accepts, each variant serve.sh on its own URL's port,
// the whole ladder of issue 24 (bf16, q8_0, q6_k, q4_k_m, q4_0) and serve.sh's
// alias. Its GGUFs are pinned only after the GPU run, so TestProtocols does
// not see it.
func TestRetrainProtocol(t *testing.T) {
	p, err := protocol.Load("retrain-protocol-h200.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, v := range p.Variants {
		args := strings.Fields(v.Engine.Start)
		if len(args) < 3 || args[0] != "engines/llamacpp/serve.sh" || args[1] != v.Name {
			t.Errorf("variant %s starts %q, want engines/llamacpp/serve.sh %s PORT", v.Name, v.Engine.Start, v.Name)
			continue
		}
		if !strings.HasSuffix(v.Engine.URL, ":"+args[2]) || v.Engine.Model != "extract-llama-15m" {
			t.Errorf("variant %s: url %s, model %q for port %s", v.Name, v.Engine.URL, v.Engine.Model, args[2])
		}
		types = append(types, v.Name)
	}
	if got := strings.Join(types, " "); got != "bf16 q8_0 q6_k q4_k_m q4_0" {
		t.Errorf("variants %s, want bf16 q8_0 q6_k q4_k_m q4_0", got)
	}
}
