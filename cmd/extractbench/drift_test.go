package main

import (
	"fmt"
	stdhtml "html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/engines/hostile"
)

// TestRun_TokenizerDriftBeforeAccuracy is issue 24 item 5 where people
// read it: against a llama.cpp that tokenises prompts without the model's
// normalizer (old) and one that tokenises as the model does (exact), the
// run's stdout, report.md, report.html and compare say "this engine
// tokenises N documents differently (+x% tokens)" of old, before any
// accuracy figure, and nothing of exact.
func TestRun_TokenizerDriftBeforeAccuracy(t *testing.T) {
	const docs = 3
	exact := hostile.MustNew(t, hostile.LlamaCppTokensExact, hostile.Options{})
	old := hostile.MustNew(t, hostile.LlamaCppTokensOld, hostile.Options{})
	dir := t.TempDir()
	c, err := corpus.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	b, err := corpus.EncodeDocuments(c.Documents[:docs]) // each has runs of spaces (aligned tables)
	if err != nil {
		t.Fatal(err)
	}
	corpusPath := writeFile(t, dir, "docs.jsonl", string(b))
	tok := hostile.ModelTokenizer()
	proto := writeFile(t, dir, "p.yaml", fmt.Sprintf(`name: drift
corpus: %s
prompt: {user: "Extract date, amount and category.\n\n{{document}}"}
generation: {max_tokens: 32, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1], repetitions: 1, warmup: 1}
request_timeout: 5s
variants:
  - name: exact
    engine: {url: %q, model: %s, tokenizer: %q}
  - name: old
    engine: {url: %q, model: %s, tokenizer: %q}
`, corpusPath, exact.URL, hostile.Model, tok, old.URL, hostile.Model, tok))
	out := filepath.Join(dir, "out")
	_, stdout, stderr := runCLI(t, "run", "-quiet", "-protocol", proto, "-out", out)
	want := fmt.Sprintf("this engine tokenises %d of %d documents differently (+", docs, docs)
	before := func(name, text, first string, sentences int) {
		t.Helper()
		i, j := strings.Index(text, want), strings.Index(text, first)
		switch {
		case i < 0:
			t.Errorf("%s does not say %q:\n%s", name, want, text)
		case j < 0:
			t.Errorf("%s has no %q:\n%s", name, first, text)
		case i > j:
			t.Errorf("%s says the drift after %q:\n%s", name, first, text)
		}
		if n := strings.Count(text, "tokenises "); n != sentences {
			t.Errorf("%s: %d drift sentences, want %d (none of exact):\n%s", name, n, sentences, text)
		}
	}
	before("stdout", stdout+stderr, "accepted", 1)

	if code, _, stderr := runCLI(t, "report", out); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	before("report.md", string(md), "accepted", 1)
	html, _ := os.ReadFile(filepath.Join(out, "report.html"))
	before("report.html", stdhtml.UnescapeString(string(html)), "accepted", 1)

	_, cmp, stderr := runCLI(t, "compare", out+":exact", out+":old")
	if !strings.Contains(cmp, fmt.Sprintf("B tokenises %d of %d paired documents differently from A (+", docs, docs)) {
		t.Errorf("compare does not say B's prompts differ from A's:\n%s%s", cmp, stderr)
	}
	before("compare", cmp, "Verdict", 2) // B against A, and B against its tokenizer
}
