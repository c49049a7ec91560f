package pipeline_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/results/resultstest"
)

// writeJSONL writes one documents.jsonl line per text (expected fields
// null) under dir/name and returns its directory.
func writeJSONL(t *testing.T, dir, name string, prefix []byte, texts ...string) string {
	t.Helper()
	c := filepath.Join(dir, name)
	if err := os.MkdirAll(c, 0o755); err != nil {
		t.Fatal(err)
	}
	b := append([]byte(nil), prefix...)
	for i, text := range texts {
		b = fmt.Appendf(b, `{"id":"d%d","text":%q,"length_class":"short","expected":{"date":null,"amount":null,"category":null}}`+"\n", i, text)
	}
	if err := os.WriteFile(filepath.Join(c, "documents.jsonl"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return c
}

func protocolOn(t *testing.T, dir, corpusPath string) string {
	t.Helper()
	p := fmt.Sprintf(`name: c
corpus: %s
prompt: {user: "Extract.\n\n{{document}}"}
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 0}
variants:
  - name: v
    engine: {url: builtin, model: sim-8b, builtin: {time_scale: 0}}
`, corpusPath)
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRun_HugeDocumentIsTruncation is issue 17's item 9: a 20 MB document
// is a prompt no context window holds, recorded as truncation
// (MEASUREMENT.md section 6), not as an error.
func TestRun_HugeDocumentIsTruncation(t *testing.T) {
	dir := t.TempDir()
	huge := strings.Repeat("Invoice line: 1 x widget at 10.00 EUR. ", 20<<20/40)
	c := writeJSONL(t, dir, "huge", nil, "Invoice 12, total 10.00 EUR, software.", huge)
	out := filepath.Join(dir, "out")
	if _, err := run(t, pipeline.Options{ProtocolPath: protocolOn(t, dir, c), OutDir: out}); err != nil && !strings.Contains(err.Error(), "verdict") {
		t.Fatal(err)
	}
	d1 := resultstest.Where(resultstest.Requests(t, out), func(r *extractbench.Record) bool { return r.DocID == "d1" })
	if got := resultstest.Count(d1, func(r *extractbench.Record) bool { return r.Failure == extractbench.Truncation }); got != 1 {
		var class, detail string
		if len(d1) > 0 {
			class, detail = string(d1[0].Failure), d1[0].FailureDetail
		}
		t.Errorf("the 20 MB document is %q (%s), want truncation", class, detail)
	}
}

// TestRun_PrintsCorpusWarnings is issue 17's item 9: the corpus loader's
// warnings (here: a directory without manifest.json) are printed by run.
func TestRun_PrintsCorpusWarnings(t *testing.T) {
	dir := t.TempDir()
	c := writeJSONL(t, dir, "bare", nil, "Invoice 12, total 10.00 EUR, software.")
	progress := &syncBuffer{}
	opts := pipeline.Options{ProtocolPath: protocolOn(t, dir, c), OutDir: filepath.Join(dir, "out"), Progress: progress}
	if _, err := run(t, opts); err != nil && !strings.Contains(err.Error(), "verdict") {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "no manifest.json") {
		t.Errorf("run did not print the corpus warning:\n%s", progress)
	}
}
