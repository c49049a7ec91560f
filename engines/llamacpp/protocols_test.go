package llamacpp_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/pipeline/protocol"
	"github.com/extractbench/extractbench/pipeline/tokenizer"
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

// The committed model and the tokenizer the retrain trains with
// (device-retrain.sh's tokenizer=).
const (
	committedModel = "../transformers/model/extract-llama-15m"
	retrainDir     = "../transformers/retrain"
)

// TestProtocols_Tokenizers: every protocol of engines/ whose variants serve
// extract-llama-15m names, as engine.tokenizer, the tokenizer.json of the
// model it serves, so that the drift figure (README, "Tokenizer drift")
// is counted against that model's own tokenizer and template: the
// committed model's for the protocols that serve its directory (server.py
// --model's default, serve.sh's gguf.sh default), the retrain's for the
// retrain's protocols (device-retrain.sh sets EXTRACT_MODEL to the model
// it trained with that tokenizer). Each must load as a prompt counter (a
// run refuses one that does not), and the retrain's template must be the
// one the retrained model carries (extraction.CHAT_TEMPLATE_COLLAPSE).
// The random-weight shapes (protocol-1b, protocol-8b) have no tokenizer
// file and are left to the approximation.
func TestProtocols_Tokenizers(t *testing.T) {
	job, err := os.ReadFile("device-retrain.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(job), `tokenizer="$tf/retrain/tokenizer.json"`) {
		t.Fatalf("device-retrain.sh no longer trains with $tf/retrain/tokenizer.json: update this test's retrainDir")
	}
	checked := 0
	for _, sv := range modelVariants(t) {
		file, p, i, v := sv.file, sv.p, sv.i, sv.p.Variants[sv.i]
		at := fmt.Sprintf("%s: variants.%d (%s)", file, i, v.Name)
		want := filepath.Join(committedModel, "tokenizer.json")
		if strings.Contains(filepath.Base(file), "retrain") {
			want = filepath.Join(retrainDir, "tokenizer.json")
		} else if servedDir(v.Engine.Start) != "engines/transformers/model/extract-llama-15m" {
			t.Errorf("%s: starts %q: which model directory does it serve?", at, v.Engine.Start)
		}
		if !protocol.IsTokenizerFile(v.Engine.Tokenizer) {
			t.Errorf("%s: tokenizer %q names no tokenizer.json: the drift would be counted against another variant, not the model", at, v.Engine.Tokenizer)
			continue
		}
		got := p.ResolvePath(v.Engine.Tokenizer)
		gi, err1 := os.Stat(got)
		wi, err2 := os.Stat(want)
		if err1 != nil || err2 != nil || !os.SameFile(gi, wi) {
			t.Errorf("%s: tokenizer %s (%v), want the served model's %s (%v)", at, got, err1, want, err2)
			continue
		}
		tmpl := "" // as the run loads it (pipeline/promptdrift.go): a .jinja file, else the one beside the tokenizer
		if strings.HasSuffix(v.Engine.ChatTemplate, ".jinja") {
			tmpl = p.ResolvePath(v.Engine.ChatTemplate)
		}
		if _, err := tokenizer.LoadPrompt(got, tmpl); err != nil {
			t.Errorf("%s: %v", at, err)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no variant serves extract-llama-15m")
	}
	// The committed model's tokenizer is the one its SHA256SUMS pins.
	sums, err := os.ReadFile(filepath.Join(committedModel, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(committedModel, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	if sum := fmt.Sprintf("%x  tokenizer.json", sha256.Sum256(raw)); !strings.Contains(string(sums), sum) {
		t.Errorf("%s/tokenizer.json is not the one its SHA256SUMS lists", committedModel)
	}
	// The retrain's template is the one train.py gives the retrained model.
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Logf("no python3: the retrain's chat_template.jinja is not compared with extraction.CHAT_TEMPLATE_COLLAPSE")
		return
	}
	cmd := exec.Command(py, "-c", "import sys, extraction; sys.stdout.write(extraction.CHAT_TEMPLATE_COLLAPSE)")
	cmd.Dir = "../transformers"
	want, err := cmd.Output()
	if err != nil {
		t.Fatalf("extraction.CHAT_TEMPLATE_COLLAPSE: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(retrainDir, "chat_template.jinja"))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s/chat_template.jinja (%v) is not extraction.CHAT_TEMPLATE_COLLAPSE", retrainDir, err)
	}
}

// servedDir is the model directory a start command serves: server.py's
// --model (its ${EXTRACT_MODEL:-…} default), serve.sh's gguf.sh default.
func servedDir(start string) string {
	args := strings.Fields(start)
	if len(args) > 0 && args[0] == "engines/llamacpp/serve.sh" {
		return "engines/transformers/model/extract-llama-15m"
	}
	for i, a := range args {
		if a == "--model" && i+1 < len(args) {
			m := args[i+1]
			if d, ok := strings.CutPrefix(m, "${EXTRACT_MODEL:-"); ok {
				return strings.TrimSuffix(d, "}")
			}
			return m
		}
	}
	return ""
}

// TestProtocols_Params checks that every protocol serving the committed model
// declares its parameter count (report's MFU and the calculator read it): the
// sum of the committed safetensors' tensor shapes. A retrain changes it (the
// 6-layer model had 14,711,040; the committed 8-layer one 17,517,568).
func TestProtocols_Params(t *testing.T) {
	want := safetensorsParams(t, committedModel)
	checked := 0
	for _, sv := range modelVariants(t) {
		file, i, v := sv.file, sv.i, sv.p.Variants[sv.i]
		checked++
		if v.Engine.Params != want {
			t.Errorf("%s: variants.%d (%s): params %d, want the committed model's %d", file, i, v.Name, v.Engine.Params, want)
		}
	}
	if checked == 0 {
		t.Fatal("no variant serves extract-llama-15m")
	}
}

// servedVariant is variant i of the protocol in file.
type servedVariant struct {
	file string
	p    *protocol.Protocol
	i    int
}

// modelVariants is every variant serving extract-llama-15m in the protocol
// files of the engines/ folders (protocol-*.yaml and the retrain's
// *-protocol-*.yaml); a file that does not load is an error of the test.
func modelVariants(t *testing.T) []servedVariant {
	t.Helper()
	var out []servedVariant
	for _, g := range []string{"../*/protocol-*.yaml", "../*/*-protocol-*.yaml"} {
		files, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			p, err := protocol.Load(file)
			if err != nil {
				t.Errorf("%s: %v", file, err)
				continue
			}
			for i, v := range p.Variants {
				if v.Engine.Model == "extract-llama-15m" {
					out = append(out, servedVariant{file, p, i})
				}
			}
		}
	}
	return out
}

// safetensorsParams sums the element counts of every tensor in dir's
// *.safetensors files (an 8-byte little-endian header length, then a JSON
// header of name -> {dtype, shape, data_offsets}).
func safetensorsParams(t *testing.T, dir string) int64 {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.safetensors"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no safetensors in %s (%v)", dir, err)
	}
	var n int64
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) < 8 {
			t.Fatalf("%s: shorter than a safetensors header", f)
		}
		size := binary.LittleEndian.Uint64(raw[:8])
		if size > uint64(len(raw)-8) {
			t.Fatalf("%s: header of %d bytes in a file of %d", f, size, len(raw))
		}
		var header map[string]json.RawMessage
		if err := json.Unmarshal(raw[8:8+size], &header); err != nil {
			t.Fatalf("%s: header: %v", f, err)
		}
		for name, m := range header {
			if name == "__metadata__" {
				continue
			}
			var tensor struct{ Shape []int64 }
			if err := json.Unmarshal(m, &tensor); err != nil {
				t.Fatalf("%s: tensor %s: %v", f, name, err)
			}
			e := int64(1)
			for _, d := range tensor.Shape {
				e *= d
			}
			n += e
		}
	}
	return n
}
