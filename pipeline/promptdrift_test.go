package pipeline_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/extractbench/extractbench"
	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/engines/builtin/starter"
	"github.com/extractbench/extractbench/engines/hostile"
	"github.com/extractbench/extractbench/pipeline"
	"github.com/extractbench/extractbench/pipeline/tokenizer"
	"github.com/extractbench/extractbench/results/resultstest"
)

// driftCorpus is docs documents of corpus/default (every one has runs of
// spaces in its aligned tables) and one more: the first with its runs of
// spaces and tabs collapsed, which the model's normalizer leaves as it is.
func driftCorpus(t *testing.T, dir string, docs int) string {
	t.Helper()
	c, err := corpus.LoadDefault()
	if err != nil {
		t.Fatal(err)
	}
	out := append([]corpus.Document(nil), c.Documents[:docs]...)
	flat := out[0]
	flat.ID, flat.Text = "doc-flat", regexp.MustCompile(`[ \t]+`).ReplaceAllString(flat.Text, " ")
	out = append(out, flat)
	b, err := corpus.EncodeDocuments(out)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "drift.jsonl")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRun_TokenizerDrift is issue 24 item 5: a llama.cpp that tokenises
// the prompt without the model's normalizer (as the first GGUF made it do:
// +32% prompt tokens over corpus/default, nothing in the run said so) is a
// figure of every pass, against the model's tokenizer.json (variant old)
// and against the baseline variant of the same model (old-vs-exact, no
// tokenizer of its own); an engine that tokenises as the model does
// (exact) drifts on no document.
func TestRun_TokenizerDrift(t *testing.T) {
	d := runDrift(t)
	t.Run("expected counts", d.expectedCounts)
	t.Run("baseline variant stands in", d.baselineStandsIn)
	t.Run("pass figures", d.passFigures)
	t.Run("parquet", d.parquet)
	t.Run("manifest", d.manifest)
	t.Run("summary", d.summary)
}

// driftRun is TestRun_TokenizerDrift's run: three variants of docs
// documents (and doc-flat) at levels 1 and 2.
type driftRun struct {
	dir, out, tok string
	sum           *pipeline.RunReport
	reqs          []extractbench.Record
}

const driftDocs = 3

func runDrift(t *testing.T) *driftRun {
	const docs = driftDocs
	exact := hostile.MustNew(t, hostile.LlamaCppTokensExact, hostile.Options{})
	old := hostile.MustNew(t, hostile.LlamaCppTokensOld, hostile.Options{})
	dir := t.TempDir()
	tok := hostile.ModelTokenizer()
	proto := fmt.Sprintf(`name: drift
corpus: %s
prompt:
  system: "You extract fields from business documents. Answer with JSON only."
  user: "Extract date, amount and category.\n\n{{document}}"
generation: {max_tokens: 64, temperature: 0}
acceptance: {min_accepted: 0}
sweep: {mode: concurrency, levels: [1, 2], repetitions: 1, warmup: 1}
request_timeout: 5s
variants:
  - name: exact
    engine: {url: %q, model: %s, kind: llamacpp, tokenizer: %q}
  - name: old
    engine: {url: %q, model: %s, kind: llamacpp, tokenizer: %q}
  - name: old-vs-exact
    engine: {url: %q, model: %s, kind: llamacpp, tokenizer: extract-llama-15m-bpe5525}
`, driftCorpus(t, dir, docs), exact.URL, hostile.Model, tok, old.URL, hostile.Model, tok, old.URL, hostile.Model)
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(proto), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	sum, err := pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: path, OutDir: out, Quiet: true})
	if err != nil {
		t.Fatal(err)
	}
	return &driftRun{dir: dir, out: out, tok: tok, sum: sum, reqs: resultstest.Requests(t, out)}
}

// expects reports whether r expects n prompt tokens.
func expects(r *extractbench.Record, n int) bool {
	return r.ExpectedPromptTokens != nil && *r.ExpectedPromptTokens == n
}

// Every request of the tokenizer variants has its expected count: the
// model's tokenizer over the rendered chat prompt, as the exact engine
// reported it.
func (d *driftRun) expectedCounts(t *testing.T) {
	const docs = driftDocs
	if got := resultstest.Count(d.reqs, func(r *extractbench.Record) bool {
		return r.Variant == "exact" && expects(r, r.PromptTokens) && r.PromptTokens > 0
	}); got != 2*(docs+1) {
		t.Errorf("exact: %d requests whose expected count is their prompt_tokens, want %d", got, 2*(docs+1))
	}
	p, err := tokenizer.LoadPrompt(d.tok, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := corpus.Load(filepath.Join(d.dir, "drift.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Len() {
		doc, _ := c.Resolve(c.Doc(i))
		want := p.Count("You extract fields from business documents. Answer with JSON only.", "Extract date, amount and category.\n\n"+doc.Text)
		if got := resultstest.Count(d.reqs, func(r *extractbench.Record) bool {
			return (r.Variant == "exact" || r.Variant == "old") && r.DocID == doc.ID && expects(r, want)
		}); got != 4 {
			t.Errorf("%s: %d requests expect %d prompt tokens, want 4", doc.ID, got, want)
		}
	}
}

// The baseline variant's count stands in where no tokenizer is named.
func (d *driftRun) baselineStandsIn(t *testing.T) {
	const docs = driftDocs
	exactTokens := map[string]int{} // the exact variant's prompt_tokens at level 1, by document
	for _, r := range resultstest.Where(d.reqs, func(r *extractbench.Record) bool { return r.Variant == "exact" && r.Level == 1 }) {
		if _, ok := exactTokens[r.DocID]; !ok {
			exactTokens[r.DocID] = r.PromptTokens
		}
	}
	if got := resultstest.Count(d.reqs, func(r *extractbench.Record) bool {
		n, ok := exactTokens[r.DocID]
		return r.Variant == "old-vs-exact" && ok && n != 0 && expects(r, n)
	}); got != 2*(docs+1) {
		t.Errorf("old-vs-exact: %d requests expect the exact variant's count, want %d", got, 2*(docs+1))
	}
}

// Each pass names its reference and counts the documents that drifted,
// with the median and largest drift of its requests.
func (d *driftRun) passFigures(t *testing.T) {
	const docs = driftDocs
	for _, tt := range []struct {
		variant, reference string
		drifted            int
	}{
		{"exact", "tokenizer", 0},
		{"old", "tokenizer", docs}, // doc-flat has no run to collapse
		{"old-vs-exact", "variant:exact", docs},
	} {
		for _, level := range []int{1, 2} {
			ps := resultstest.Where(resultstest.Passes(t, d.out), func(p *extractbench.Pass) bool { return p.Variant == tt.variant && p.Level == level })
			if len(ps) == 0 || ps[0].PromptDrift.Compared == nil || ps[0].PromptDrift.Docs == nil {
				t.Fatalf("%s level %d: no pass with prompt_drift_compared and prompt_drift_docs (%d passes)", tt.variant, level, len(ps))
			}
			drift := ps[0].PromptDrift
			ref, compared, drifted, median, max := drift.Reference, int(*drift.Compared), int(*drift.Docs), drift.Median, drift.Max
			if ref != tt.reference || compared != docs+1 || drifted != tt.drifted {
				t.Errorf("%s level %d: reference %q, %d compared, %d drifted; want %q, %d, %d", tt.variant, level, ref, compared, drifted, tt.reference, docs+1, tt.drifted)
			}
			if tt.drifted == 0 {
				if median != nil || max != nil {
					t.Errorf("%s level %d: median %v, max %v with nothing drifted, want NULL", tt.variant, level, median, max)
				}
				continue
			}
			// The figures are the requests' own relative differences.
			wantMax := maxDrift(t, resultstest.Where(d.reqs, func(r *extractbench.Record) bool { return r.Variant == tt.variant && r.Level == level }))
			if median == nil || max == nil || *max != wantMax || *median <= 0.05 || *median > *max {
				t.Errorf("%s level %d: median %v, max %v; want a median above +5%% and the max %v", tt.variant, level, median, max, wantMax)
			}
		}
	}
}

// Parquet carries them: the drifted documents per pass, and every
// request's expected count.
func (d *driftRun) parquet(t *testing.T) {
	const docs = driftDocs
	sumInt := func(file, column string) (sum int64, nulls int) {
		t.Helper()
		tbl := readParquet(t, filepath.Join(d.out, file))
		defer tbl.Release()
		idx := tbl.Schema().FieldIndices(column)
		if len(idx) != 1 {
			t.Fatalf("%s has no column %s", file, column)
		}
		for _, chunk := range tbl.Column(idx[0]).Data().Chunks() {
			col := chunk.(*array.Int64)
			for i := range col.Len() {
				if col.IsNull(i) {
					nulls++
					continue
				}
				sum += col.Value(i)
			}
		}
		return sum, nulls
	}
	if got, nulls := sumInt("passes.parquet", "prompt_drift_docs"); got != 2*2*docs || nulls != 0 {
		t.Errorf("passes.parquet: prompt_drift_docs sum to %d (%d NULL), want %d", got, nulls, 2*2*docs)
	}
	if _, nulls := sumInt("requests.parquet", "expected_prompt_tokens"); nulls != 0 {
		t.Errorf("requests.parquet: %d requests without expected_prompt_tokens, want none", nulls)
	}
}

// The manifest pins the tokenizer file the counts came from.
func (d *driftRun) manifest(t *testing.T) {
	m := resultstest.Manifest(t, d.out)
	raw, err := os.ReadFile(d.tok)
	if err != nil {
		t.Fatal(err)
	}
	sha := sha256.Sum256(raw)
	for _, v := range m.Variants {
		want := hex.EncodeToString(sha[:])
		if v.Name == "old-vs-exact" {
			want = ""
		}
		if v.Engine.TokenizerSHA256 != want {
			t.Errorf("manifest: %s's tokenizer_sha256 %q, want %q", v.Name, v.Engine.TokenizerSHA256, want)
		}
	}
}

// The summary's outcomes carry it, for stdout, the report and -json.
func (d *driftRun) summary(t *testing.T) {
	const docs = driftDocs
	for _, o := range d.sum.Variants {
		got := o.Tokenization.Sentence()
		switch o.Variant {
		case "exact":
			if got != "" {
				t.Errorf("exact: %q, want no drift", got)
			}
		default:
			if !strings.Contains(got, fmt.Sprintf("tokenises %d of %d documents differently (+", docs, docs+1)) {
				t.Errorf("%s: %q, want the drifted documents and their share", o.Variant, got)
			}
		}
	}
}

// maxDrift is the largest relative difference of the requests' prompt
// tokens from their expected count, (prompt − expected) / expected; the
// requests without an expected count are left out.
func maxDrift(t *testing.T, reqs []extractbench.Record) float64 {
	t.Helper()
	var v float64
	seen := false
	for _, r := range reqs {
		if r.ExpectedPromptTokens == nil || *r.ExpectedPromptTokens == 0 || r.PromptTokens == 0 {
			continue
		}
		e := *r.ExpectedPromptTokens
		if d := float64(r.PromptTokens-e) * 1.0 / float64(e); !seen || d > v {
			v, seen = d, true
		}
	}
	if !seen {
		t.Fatal("no request with prompt tokens and an expected count")
	}
	return v
}

// TestRun_TokenizerFileRefused: a tokenizer file that cannot be read, or
// one whose pre-tokenizer the counter cannot follow exactly, stops the run
// before anything is sent, naming the protocol's line and key.
func TestRun_TokenizerFileRefused(t *testing.T) {
	srv := hostile.MustNew(t, hostile.LlamaCppTokensExact, hostile.Options{})
	dir := t.TempDir()
	raw, err := os.ReadFile(hostile.ModelTokenizer())
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(raw), `"type": "ByteLevel"`, `"type": "Metaspace"`, 1)
	if bad == string(raw) {
		t.Fatal("no ByteLevel step to replace")
	}
	if err := os.WriteFile(filepath.Join(dir, "metaspace.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	proto := fmt.Sprintf(`corpus: %s
variants:
  - name: missing
    engine: {url: %q, model: %s, tokenizer: no-such/tokenizer.json}
  - name: metaspace
    engine: {url: %q, model: %s, tokenizer: metaspace.json}
`, writeSmallCorpus(t, dir, 2), srv.URL, hostile.Model, srv.URL, hostile.Model)
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(proto), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = pipeline.Run(context.Background(), pipeline.Options{Starters: starter.Starters(), ProtocolPath: path, OutDir: filepath.Join(dir, "out"), Quiet: true})
	var ve *pipeline.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want a ValidationError", err)
	}
	for _, want := range []string{path + ":4: variants.0.engine.tokenizer: variant missing: read tokenizer", path + ":6: variants.1.engine.tokenizer: variant metaspace: tokenizer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if !strings.Contains(err.Error(), `"Metaspace"`) {
		t.Errorf("error does not name the step it cannot follow:\n%v", err)
	}
	if n := srv.Requests.Load(); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}
