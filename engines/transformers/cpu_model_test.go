package transformers_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/engines/process"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results/resultstest"
)

// TestCPUModel_EndToEnd measures the committed trained model with
// extractbench itself: server.py --cpu (cpu_reference.py) started by the
// runner, the five shortest corpus/default documents at level 1. Every
// answer and verdict must be the one the committed offline CPU run recorded
// for the document (reference/cpu/extract-llama-15m/cpu-default.json,
// whose model_sha256 must be the committed model's): the Go client, SSE, parsing and scoring against the
// Python path, on real answers. It needs a python3 with torch, aiohttp and
// regex ($PYTHON, or Debian's /usr/bin/python3 with python3-torch,
// python3-aiohttp and python3-regex) and skips without one.
func TestCPUModel_EndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the model runs on the CPU")
	}
	py := pythonWith(t, "torch", "aiohttp", "regex")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()

	// The five shortest documents, as the corpus file holds them.
	lines := readLines(t, filepath.Join(root, "corpus", "default", "documents.jsonl"))
	sort.SliceStable(lines, func(i, j int) bool { return len(lines[i]) < len(lines[j]) })
	corpus := filepath.Join(dir, "documents.jsonl")
	if err := os.WriteFile(corpus, []byte(strings.Join(lines[:5], "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// protocol-cpu.yaml on that corpus, a free port, absolute paths.
	raw, err := os.ReadFile("protocol-cpu.yaml")
	if err != nil {
		t.Fatal(err)
	}
	proto := strings.NewReplacer(
		"corpus: corpus/default", "corpus: "+corpus,
		"8011", strconv.Itoa(freePort(t)),
		"engines/transformers/", filepath.Join(root, "engines", "transformers")+"/",
		"tokenizer: model/", "tokenizer: "+filepath.Join(root, "engines", "transformers", "model")+"/",
	).Replace(string(raw))
	protoPath := filepath.Join(dir, "protocol.yaml")
	if err := os.WriteFile(protoPath, []byte(proto), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PYTHON", py)
	t.Setenv("EXTRACT_MODEL", "") // the committed model

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := filepath.Join(dir, "run")
	sum, err := pipeline.Run(ctx, pipeline.Options{ProtocolPath: protoPath, OutDir: out, Quiet: true, Process: process.Starter{}})
	if sum == nil || len(sum.Passes) == 0 {
		t.Fatalf("run measured nothing: %v", err)
	}

	var ref struct {
		ModelSHA256 string `json:"model_sha256"`
		Records     []struct {
			ID     string `json:"id"`
			Output string `json:"output"`
			Score  struct {
				Accepted bool `json:"accepted"`
			} `json:"score"`
		} `json:"records"`
	}
	// The committed CPU reference must answer for these weights.
	sums, err := os.ReadFile(filepath.Join("model", "extract-llama-15m", "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	modelSHA := fmt.Sprintf("%x", sha256.Sum256(sums))
	refPath := filepath.Join(root, "reference", "cpu", "extract-llama-15m", "cpu-default.json")
	data, err := os.ReadFile(refPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatalf("%s: %v", refPath, err)
	}
	if ref.ModelSHA256 != modelSHA {
		t.Fatalf("%s answers for model_sha256 %.12s, the committed model is %.12s: run cpu_reference.py --out on it", refPath, ref.ModelSHA256, modelSHA)
	}
	type answer struct {
		output   string
		accepted bool
	}
	want := map[string]answer{}
	for _, r := range ref.Records {
		want[r.ID] = answer{r.Output, r.Score.Accepted}
	}

	rows := resultstest.Where(resultstest.Requests(t, out), func(r *extractbench.Record) bool { return r.Level == 1 })
	slices.SortFunc(rows, func(a, b extractbench.Record) int { return strings.Compare(a.DocID, b.DocID) })
	n := 0
	for _, r := range rows {
		id, output, accepted := r.DocID, r.Output, r.Accepted
		n++
		w, ok := want[id]
		switch {
		case !ok:
			t.Errorf("%s: not in the CPU reference", id)
		case strings.TrimSpace(output) != strings.TrimSpace(w.output):
			t.Errorf("%s: extractbench stored %q, the CPU reference answered %q", id, output, w.output)
		case accepted != w.accepted:
			t.Errorf("%s: extractbench says accepted=%v, the Python scorer %v, for %q", id, accepted, w.accepted, output)
		}
	}
	if n != 5 {
		t.Errorf("%d requests stored at level 1, want 5", n)
	}
}

// pythonWith returns a python3 that imports every module, or skips.
func pythonWith(t *testing.T, modules ...string) string {
	t.Helper()
	check := "import " + strings.Join(modules, ", ")
	for _, py := range []string{os.Getenv("PYTHON"), "/usr/bin/python3", "python3"} {
		if py == "" {
			continue
		}
		if exec.Command(py, "-c", check).Run() == nil {
			return py
		}
	}
	t.Skipf("no python3 with %s (set PYTHON)", strings.Join(modules, ", "))
	return ""
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			out = append(out, sc.Text())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
