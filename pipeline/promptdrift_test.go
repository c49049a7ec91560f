package pipeline_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
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
	const docs = 3
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
	db := openDB(t, out)

	// Every request of the tokenizer variants has its expected count: the
	// model's tokenizer over the rendered chat prompt, as the exact engine
	// reported it.
	if got := queryInt(t, db, `SELECT count(*) FROM requests WHERE variant = 'exact' AND expected_prompt_tokens = prompt_tokens AND prompt_tokens > 0`); got != 2*(docs+1) {
		t.Errorf("exact: %d requests whose expected count is their prompt_tokens, want %d", got, 2*(docs+1))
	}
	p, err := tokenizer.LoadPrompt(tok, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := corpus.Load(filepath.Join(dir, "drift.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Len() {
		d, _ := c.Resolve(c.Doc(i))
		want := p.Count("You extract fields from business documents. Answer with JSON only.", "Extract date, amount and category.\n\n"+d.Text)
		if got := queryInt(t, db, `SELECT count(*) FROM requests WHERE variant IN ('exact', 'old') AND doc_id = ? AND expected_prompt_tokens = ?`, d.ID, want); got != 4 {
			t.Errorf("%s: %d requests expect %d prompt tokens, want 4", d.ID, got, want)
		}
	}
	// The baseline variant's count stands in where no tokenizer is named.
	if got := queryInt(t, db, `SELECT count(*) FROM requests r WHERE variant = 'old-vs-exact'
		AND expected_prompt_tokens = (SELECT prompt_tokens FROM requests e WHERE e.variant = 'exact' AND e.doc_id = r.doc_id AND e.level = 1)`); got != 2*(docs+1) {
		t.Errorf("old-vs-exact: %d requests expect the exact variant's count, want %d", got, 2*(docs+1))
	}

	for _, tt := range []struct {
		variant, reference string
		drifted            int
	}{
		{"exact", "tokenizer", 0},
		{"old", "tokenizer", docs}, // doc-flat has no run to collapse
		{"old-vs-exact", "variant:exact", docs},
	} {
		for _, level := range []int{1, 2} {
			var ref string
			var compared, drifted int
			var median, max *float64
			if err := db.QueryRow(`SELECT prompt_drift_reference, prompt_drift_compared, prompt_drift_docs, prompt_drift_median, prompt_drift_max
				FROM passes WHERE variant = ? AND level = ?`, tt.variant, level).Scan(&ref, &compared, &drifted, &median, &max); err != nil {
				t.Fatalf("%s level %d: %v", tt.variant, level, err)
			}
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
			wantMax := driftQueryFloat(t, db, `SELECT max((prompt_tokens - expected_prompt_tokens) * 1.0 / expected_prompt_tokens) FROM requests WHERE variant = ? AND level = ?`, tt.variant, level)
			if median == nil || max == nil || *max != wantMax || *median <= 0.05 || *median > *max {
				t.Errorf("%s level %d: median %v, max %v; want a median above +5%% and the max %v", tt.variant, level, median, max, wantMax)
			}
		}
	}

	// Parquet carries them: the drifted documents per pass, and every
	// request's expected count.
	sumInt := func(file, column string) (sum int64, nulls int) {
		t.Helper()
		tbl := readParquet(t, filepath.Join(out, file))
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

	// The manifest pins the tokenizer file the counts came from.
	var manifest string
	if err := db.QueryRow(`SELECT manifest FROM runs`).Scan(&manifest); err != nil {
		t.Fatal(err)
	}
	var m extractbench.Manifest
	if err := json.Unmarshal([]byte(manifest), &m); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(tok)
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

	// The summary's outcomes carry it, for stdout, the report and -json.
	for _, o := range sum.Variants {
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

func driftQueryFloat(t *testing.T, db *sql.DB, q string, args ...any) float64 {
	t.Helper()
	var v float64
	if err := db.QueryRow(q, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
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
