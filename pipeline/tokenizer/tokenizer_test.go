package tokenizer_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/extractbench/extractbench/corpus"
	"github.com/extractbench/extractbench/pipeline/tokenizer"
)

// modelDir holds the first committed extraction model's tokenizer (h384,
// kept for its normalizer): its tokenizer.json has an NFC + [ \t]+ collapse
// normalizer and a Split pattern with both lookahead forms. The committed
// model's tokenizer (no normalizer, the collapse in its chat template) is
// checked against llama.cpp in engines/llamacpp (retrain_tokens_test.go).
const modelDir = "../../engines/transformers/model-h384"

// The protocol's prompt as engines/transformers/extraction.py writes it
// (SYSTEM, USER), which testdata/extract-llama-15m.json was counted with.
const (
	system = "You extract fields from business documents. Answer with JSON only."
	user   = "Extract date (issue date, YYYY-MM-DD), amount (total due, a JSON number) and category (one of: utilities, telecom, software, office_supplies, travel, meals, rent, professional_services, taxes, healthcare). Use null for a field the document lacks. Answer with one JSON object with the keys date, amount and category.\n\n{{document}}"
)

// reference is testdata/extract-llama-15m.json: what cpu_reference.py's
// Python BPE (the regex module, tokenizers' behaviour for this
// tokenizer.json) gives, written by a script over corpus/default.
type reference struct {
	Counts map[string]int   `json:"counts"`
	IDs    map[string][]int `json:"ids"`
}

func loadReference(t *testing.T) reference {
	t.Helper()
	raw, err := os.ReadFile("testdata/extract-llama-15m.json")
	if err != nil {
		t.Fatal(err)
	}
	var r reference
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPrompt_CorpusDefault(t *testing.T) {
	p, err := tokenizer.LoadPrompt(modelDir+"/tokenizer.json", "")
	if err != nil {
		t.Fatal(err)
	}
	ref := loadReference(t)
	c, err := corpus.Load("../../corpus/default")
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != len(ref.Counts) {
		t.Fatalf("corpus has %d documents, the reference %d", c.Len(), len(ref.Counts))
	}
	wrong := 0
	for i := range c.Len() {
		d, err := c.Resolve(c.Doc(i))
		if err != nil {
			t.Fatal(err)
		}
		got := p.Count(system, strings.ReplaceAll(user, "{{document}}", d.Text))
		if want := ref.Counts[d.ID]; got != want {
			wrong++
			if wrong <= 5 {
				t.Errorf("%s: %d tokens, the Python BPE %d", d.ID, got, want)
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d documents counted otherwise", wrong, c.Len())
	}
	// The figures engines/llamacpp/README.md and cpu_reference.py quote.
	if got := ref.Counts["doc-0249"]; got != 5553 {
		t.Errorf("reference doc-0249 = %d, README says 5,553", got)
	}
}

func TestTokenizer_Encode(t *testing.T) {
	tok, err := tokenizer.Load(modelDir + "/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range loadReference(t).IDs {
		if got := tok.Encode(s); !slices.Equal(got, want) {
			t.Errorf("Encode(%q) = %v, want %v", s, got, want)
		}
		if got := tok.Count(s); got != len(want) {
			t.Errorf("Count(%q) = %d, want %d", s, got, len(want))
		}
	}
}

func TestTemplate_Render(t *testing.T) {
	p, err := tokenizer.LoadPrompt(modelDir+"/tokenizer.json", "")
	if err != nil {
		t.Fatal(err)
	}
	got := p.Render("S", "U")
	want := "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nU<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
	if got != want {
		t.Errorf("Render = %q\nwant     %q", got, want)
	}
	// tokenizer_config.json's copy of the template renders the same.
	raw, err := os.ReadFile(modelDir + "/tokenizer_config.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ChatTemplate string `json:"chat_template"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	tm, err := tokenizer.ParseTemplate(cfg.ChatTemplate, "tokenizer_config.json", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := tm.Render([]tokenizer.Message{{"system", "S"}, {"user", "U"}}, true); got != want {
		t.Errorf("tokenizer_config.json's template renders %q", got)
	}
}

func TestTemplate_WhitespaceControl(t *testing.T) {
	src := "{{ bos_token }}\n{% for message in messages %}\n  {{- message.role }}: {{ message.content -}}\n  |\n{% endfor %}\n{% if add_generation_prompt %}\n    A:{% endif %}\n"
	tm, err := tokenizer.ParseTemplate(src, "test", "<s>", "</s>")
	if err != nil {
		t.Fatal(err)
	}
	// As jinja2 3 with trim_blocks and lstrip_blocks renders them (checked).
	want := "<s>\nuser: hi|\n    A:"
	if got := tm.Render([]tokenizer.Message{{"user", "hi"}}, true); got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
	// lstrip_blocks strips a line's indentation before a block tag only.
	tm, err = tokenizer.ParseTemplate("  {% if add_generation_prompt %}x{% endif %}\n  y {% if add_generation_prompt %}z{% endif %}", "test", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tm.Render(nil, true), "x  y z"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}

func TestParse_Refuses(t *testing.T) {
	for name, tc := range map[string]struct{ src, want string }{
		"template loop var": {"{% for m in messages %}{{ m.content }}{% endfor %}", "for m in messages"},
		"template filter":   {"{% for message in messages %}{{ message['content'] | trim }}{% endfor %}", "trim"},
		"template unclosed": {"{% if add_generation_prompt %}x", "never closed"},
	} {
		_, err := tokenizer.ParseTemplate(tc.src, "t", "", "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one naming %q", name, err, tc.want)
		}
	}
	dir := t.TempDir()
	raw, err := os.ReadFile(modelDir + "/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	lookbehind := strings.Replace(string(raw), `\\s+(?!\\S)|`, `(?<=x)y|`, 1)
	if lookbehind == string(raw) {
		t.Fatal("the pattern to replace is not in tokenizer.json")
	}
	path := dir + "/tokenizer.json"
	if err := os.WriteFile(path, []byte(lookbehind), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tokenizer.Load(path); err == nil || !strings.Contains(err.Error(), "(?<=x)y") || !strings.Contains(err.Error(), "pre_tokenizer") {
		t.Errorf("Load with a lookbehind: err = %v, want one naming the alternative and the key", err)
	}
}

// BenchmarkPrompt_Count is the cost a request of a variant with a
// tokenizer file adds to its scoring: corpus/default's longest prompt,
// counted again (the word cache warm, as from a run's second document on).
func BenchmarkPrompt_Count(b *testing.B) {
	p, err := tokenizer.LoadPrompt(modelDir+"/tokenizer.json", "")
	if err != nil {
		b.Fatal(err)
	}
	c, err := corpus.Load("../../corpus/default")
	if err != nil {
		b.Fatal(err)
	}
	var longest string
	for i := range c.Len() {
		d, err := c.Resolve(c.Doc(i))
		if err != nil {
			b.Fatal(err)
		}
		if len(d.Text) > len(longest) {
			longest = d.Text
		}
	}
	u := strings.ReplaceAll(user, "{{document}}", longest)
	b.SetBytes(int64(len(u)))
	for b.Loop() {
		p.Count(system, u)
	}
}

// TestPrompt_WithoutNormalizer: the count an engine that ignores the
// normalizer makes (engines/hostile's llamacpp-tokens-old) is what the live
// llama-server b1-de3ff81 counted for doc-0249's prompt without the
// template's collapse (engines/llamacpp/testdata/tokenize-doc-0249.json:
// 7,806 where the model's tokenizer gives 5,553).
func TestPrompt_WithoutNormalizer(t *testing.T) {
	raw, err := os.ReadFile("../../engines/llamacpp/testdata/tokenize-doc-0249.json")
	if err != nil {
		t.Fatal(err)
	}
	var live struct {
		Doc           string `json:"doc"`
		Untemplated   int    `json:"llama_tokens_untemplated"`
		TokenizerJSON int    `json:"tokenizer_json_tokens"`
	}
	if err := json.Unmarshal(raw, &live); err != nil {
		t.Fatal(err)
	}
	p, err := tokenizer.LoadPrompt(modelDir+"/tokenizer.json", "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := corpus.Load("../../corpus/default")
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Len() {
		if c.Doc(i).ID != live.Doc {
			continue
		}
		d, err := c.Resolve(c.Doc(i))
		if err != nil {
			t.Fatal(err)
		}
		u := strings.ReplaceAll(user, "{{document}}", d.Text)
		if got := p.Count(system, u); got != live.TokenizerJSON {
			t.Errorf("%s: %d tokens, the live capture's tokenizer.json count %d", d.ID, got, live.TokenizerJSON)
		}
		if got := p.WithoutNormalizer().Count(system, u); got != live.Untemplated {
			t.Errorf("%s without the normalizer: %d tokens, llama-server counted %d", d.ID, got, live.Untemplated)
		}
		return
	}
	t.Fatalf("%s is not in corpus/default", live.Doc)
}
